import ColorcamCore

/// An error from the preview server: one line naming the address or operation, errno where known, and what was wrong.
///
/// Rendered as `preview ADDRESS: OPERATION: what was wrong (errno N)`.
public struct PreviewError: ColorcamError {
    public let kind: FailureKind
    /// The listen address or the resource the error is about (`127.0.0.1:8080`, `jpeg encoder`).
    public let subject: String
    public let message: String
    /// The C `errno` when a system call failed.
    public let errno: Int32?

    public init(_ kind: FailureKind, subject: String, _ message: String, errno: Int32? = nil) {
        self.kind = kind
        self.subject = subject
        self.message = message
        self.errno = errno
    }

    public var description: String {
        var line = "preview \(subject): \(message)"
        if let errno { line += " (errno \(errno))" }
        return line
    }
}
