/// Where one colorization ran: the process's own engine, a remote inference server, or the own engine standing in
/// for a server that is away (`--infer-fallback local`). Written in the trace's `infer` events as `backend` (the raw
/// value).
public enum InferenceBackend: String, Sendable, CaseIterable {
    case local, remote, fallback

    /// The trace's spelling.
    public var name: String { rawValue }
}

/// Why a colorization gave no result (the colours in view keep their age). Written in the trace's `infer` events
/// as `failed` (the raw value); `.none` is omitted.
public enum InferenceFailure: String, Sendable, CaseIterable {
    case none
    /// The server did not answer within `--infer-timeout-ms`: the request was abandoned (its connection closed).
    case timeout
    /// No connection, or it broke mid-request.
    case connection
    /// The server answered with an HTTP status other than 200.
    case httpStatus = "http_status"
    /// The answer was not a v2 inference response of the expected shape (malformed, truncated, too large).
    case badResponse = "bad_response"
    /// Not tried: the server failed recently and the retry back-off has not run out.
    case unavailable

    /// The trace's spelling.
    public var name: String { rawValue }
}

/// What one model run did, for the trace: where it ran, whether it produced a result, and for a remote run how its
/// time split (nanoseconds, each 0 when not measured): sending the request (connect included), waiting for the first
/// byte of the answer (the server's time plus the network round trip; v2 responses carry no server timing), and
/// receiving the rest. A fixed-size value: no allocation.
public struct InferenceOutcome: Sendable, Equatable {
    public var backend: InferenceBackend
    public var failure: InferenceFailure
    public var sendNs: Int64
    public var waitNs: Int64
    public var receiveNs: Int64

    public init(
        backend: InferenceBackend = .local, failure: InferenceFailure = .none, sendNs: Int64 = 0,
        waitNs: Int64 = 0, receiveNs: Int64 = 0
    ) {
        self.backend = backend
        self.failure = failure
        self.sendNs = sendNs
        self.waitNs = waitNs
        self.receiveNs = receiveNs
    }

    /// A local run that produced its result.
    public static let local = InferenceOutcome()

    public var succeeded: Bool { failure == .none }

    /// Whether there is a result to publish: the run succeeded, or the local engine stood in for a failed server.
    public var gaveResult: Bool { failure == .none || backend == .fallback }
}
