import ColorcamCore

/// A remote inference problem worth stopping for (at start: a bad URL, a server that is not there, metadata that
/// does not match the model): one line naming the URL and what was wrong.
public struct RemoteError: ColorcamError, Equatable {
    public let kind: FailureKind
    public let url: String
    public let message: String

    public init(_ kind: FailureKind, url: String, _ message: String) {
        self.kind = kind
        self.url = url
        self.message = message
    }

    public var description: String { "\(url): \(message)" }
}

/// Why one exchange with the server failed (a request's fate, not a reason to stop): the trace's `failed` reason
/// and a line for the log.
public struct ExchangeFailure: Error, Equatable, CustomStringConvertible {
    public let reason: InferenceFailure
    public let message: String

    public init(_ reason: InferenceFailure, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}
