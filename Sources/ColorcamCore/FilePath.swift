/// Path arithmetic on plain strings, as POSIX `dirname` does it (no file system access).
///
/// Exists because swift-corelibs-foundation's `NSString.deletingLastPathComponent` traps on a one-character
/// relative path (`"b"`: `String._startOfLastPathComponent`, Swift 6.3.1), so `--out b` crashed `personalize`.
public enum FilePath {
    /// The directory part of `path`: `"b"` → `"."`, `"x/y"` → `"x"`, `"/b"` → `"/"`, `"x/y/"` → `"x"`, `""` → `"."`.
    /// Never empty.
    public static func directory(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        var end = slash
        while end > 0 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }
}
