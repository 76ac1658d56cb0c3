import ColorcamCore
import Testing

/// `FilePath.directory(of:)`: POSIX `dirname`, on strings (Foundation's traps on a one-character path).
@Suite struct FilePathTests {
    @Test(arguments: [
        ("b", "."), ("", "."), ("ab", "."), ("x/y", "x"), ("/b", "/"), ("/", "/"), ("//", "/"), ("./b", "."),
        ("x/y/", "x"), ("x//y", "x"), ("/a/b/c.onnx", "/a/b"), ("b/", "."), ("é/ü", "é")
    ])
    func directoryIsDirname(path: String, expected: String) {
        #expect(FilePath.directory(of: path) == expected)
    }
}
