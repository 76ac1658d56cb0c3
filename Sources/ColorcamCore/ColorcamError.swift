/// What kind of failure an error is, which decides the process exit code (BSD sysexits, as the CLI promises).
public enum FailureKind: Sendable {
    /// Bad command line: exit 64 (`EX_USAGE`).
    case usage
    /// Input that is not what it claims (bad header, truncated frame, not a trace): exit 65 (`EX_DATAERR`).
    case badData
    /// Input file missing or unreadable: exit 66 (`EX_NOINPUT`).
    case missingInput
    /// Device or service unavailable: exit 69 (`EX_UNAVAILABLE`).
    case unavailable
    /// Output could not be written: exit 73 (`EX_CANTCREAT`) / 74 (`EX_IOERR`) map here to 74.
    case ioError
    /// A bug or an impossible state: exit 70 (`EX_SOFTWARE`).
    case internalError

    public var exitCode: Int32 {
        switch self {
        case .usage: return 64
        case .badData: return 65
        case .missingInput: return 66
        case .unavailable: return 69
        case .ioError: return 74
        case .internalError: return 70
        }
    }
}

/// Errors every module throws: a kind (for the exit code) and a one-line message that names the file,
/// the frame or byte offset, and what was wrong.
public protocol ColorcamError: Error, CustomStringConvertible {
    var kind: FailureKind { get }
}
