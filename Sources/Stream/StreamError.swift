import ColorcamCore

/// An error from a frame source, sink or the trace: one line naming the file, byte offset and frame where known.
///
/// Rendered as `FILE: byte N, frame F: what was wrong` (parts that are unknown are left out).
public struct StreamError: ColorcamError {
    public let kind: FailureKind
    /// The file (or `-` / `stdin` / device path) the error is about.
    public let file: String
    /// Byte offset in the file where the problem starts, when known.
    public let byteOffset: Int64?
    /// 0-based frame index, when known.
    public let frame: Int?
    public let message: String

    public init(_ kind: FailureKind, file: String, byteOffset: Int64? = nil, frame: Int? = nil, _ message: String) {
        self.kind = kind
        self.file = file
        self.byteOffset = byteOffset
        self.frame = frame
        self.message = message
    }

    public var description: String {
        var where_: [String] = []
        if let byteOffset { where_.append("byte \(byteOffset)") }
        if let frame { where_.append("frame \(frame)") }
        let location = where_.isEmpty ? "" : " " + where_.joined(separator: ", ") + ":"
        return "\(file):\(location) \(message)"
    }
}
