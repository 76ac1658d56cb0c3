import ColorcamCore
import Infer
import Synchronization

/// The colorizer run by an Open Inference Protocol v2 server (Triton, KServe, MLServer, …) instead of the local
/// engine: same input and output tensors as the local model (checked against the server's model metadata), one
/// request per `runModel`, over one kept-alive HTTP/1.1 connection.
///
/// A request that fails (timeout, connection lost, HTTP error, malformed answer) gives no output: the caller's
/// colours keep their age. After a failure the model backs off — `runModel` answers `.unavailable` without touching
/// the network, and `acceptsRequests` is false — for 250 ms, doubling per failure in a row up to 4 s; the first
/// request after the back-off is the probe, and one success resets it.
///
/// Threading: `runModel` from one thread at a time (the inference thread; it blocks up to `timeoutMs`);
/// `acceptsRequests` from any thread.
public final class RemoteModel: ModelRunner, @unchecked Sendable {
    // @unchecked Sendable: everything but the atomics `nextAttemptNs` and `refused` is touched by the one inference
    // thread only.
    public let url: InferenceURL
    public let inputName: String
    public let outputName: String
    public let inputShape: [Int]
    public let outputShape: [Int]
    public let timeoutMs: Int
    /// How tensors travel: the binary tensor data extension (default) or JSON `data` lists.
    public let encoding: TensorEncoding
    let connection: HTTPClientConnection
    let requestHeader: [UInt8]
    let requestHeaderLength: String
    let outputSpec: V2TensorSpec
    let inputSpec: V2TensorSpec
    private let nextAttemptNs = Atomic<Int64>(0)
    private var backoffMs = 0
    private var failuresInRow = 0
    /// Whether any inference request got a result yet (a first failure may be the encoding, not the server).
    private var everSucceeded = false
    /// Whether the server's metadata was checked (at start, or before the first request when it was away then).
    private var verified = false
    /// Set when the server's model turned out not to match: no request is sent again (read from any thread).
    private let refused = Atomic<Bool>(false)

    /// How a request carries its tensors.
    public enum TensorEncoding: String, Sendable, CaseIterable {
        /// The binary tensor data extension (Triton, KServe): raw FP32 after a JSON header, both ways.
        case binary
        /// Plain v2 JSON `data` lists (every v2 server; MLServer's REST has no binary extension): ~20× slower.
        case json
    }

    public static let firstBackoffMs = 250
    public static let maxBackoffMs = 4000

    /// Connects to `url` and checks that its model takes `local`'s input and gives its output.
    /// - Parameters:
    ///   - startupWaitMs: how long to wait for `/v2/health/ready` (polled every 250 ms, progress logged).
    ///   - requireServer: when false (a local fallback exists), a server that is away now is not an error: the
    ///     metadata is checked before the first request that reaches it.
    /// - Throws: `RemoteError` — `.unavailable` (exit 69) when the host does not resolve or the server is not ready
    ///   in time, `.badData` (exit 65) when its metadata is malformed or does not match.
    public init(
        url: InferenceURL, matching local: ModelRunner, timeoutMs: Int, encoding: TensorEncoding = .binary,
        startupWaitMs: Int = 10_000, requireServer: Bool = true
    ) throws {
        self.encoding = encoding
        self.url = url
        inputName = local.inputName
        outputName = local.outputName
        inputShape = local.inputShape
        outputShape = local.outputShape
        self.timeoutMs = timeoutMs
        inputSpec = V2TensorSpec(name: inputName, datatype: "FP32", shape: inputShape)
        outputSpec = V2TensorSpec(name: outputName, datatype: "FP32", shape: outputShape)
        requestHeader = V2Codec.requestHeader(input: inputSpec, outputName: outputName)
        requestHeaderLength = String(requestHeader.count)
        guard let address = SocketAddress.resolve(host: url.host, port: url.port) else {
            throw RemoteError(.unavailable, url: url.description, "cannot resolve host '\(url.host)'")
        }
        connection = HTTPClientConnection(address: address, hostHeader: url.hostHeader, label: url.description)
        do {
            try waitUntilReady(maxMs: startupWaitMs)
        } catch let error as RemoteError where !requireServer {
            Log.warning("\(error.description); colorizing locally until it answers (--infer-fallback local)")
            return
        }
        try verify()
    }

    /// Polls `/v2/health/ready` until it answers 200 or `maxMs` passes.
    func waitUntilReady(maxMs: Int) throws {
        let startNs = SystemClock.rawNs()
        var lastProblem = "no answer"
        var announced = false
        while true {
            var timing = HTTPClientConnection.Timing()
            do {
                let response = try connection.exchange(
                    method: "GET", path: url.readyPath, timeoutMs: min(timeoutMs, 2000),
                    timing: &timing)
                if response.status == 200 { return }
                lastProblem = "/v2/health/ready answers HTTP \(response.status)"
            } catch let failure as ExchangeFailure {
                lastProblem =
                    failure.message.hasPrefix(url.description + ": ")
                    ? String(failure.message.dropFirst(url.description.count + 2)) : failure.message
            } catch {
                lastProblem = "\(error)"
            }
            let elapsedMs = Int((SystemClock.rawNs() - startNs) / 1_000_000)
            if elapsedMs >= maxMs {
                throw RemoteError(
                    .unavailable, url: url.description,
                    maxMs == 0
                        ? "inference server not ready: \(lastProblem)"
                        : "inference server not ready after \(elapsedMs / 1000) s: \(lastProblem)")
            }
            if !announced {
                Log.info("\(url.description): waiting for the inference server to be ready (\(lastProblem))")
                announced = true
            }
            let clock = SystemClock()
            clock.sleep(untilNs: clock.nowNs() + 250_000_000)
        }
    }

    /// Reads the model's metadata and compares it with the local model's tensors.
    func verify() throws {
        var timing = HTTPClientConnection.Timing()
        let response: HTTPResponse
        do {
            response = try connection.exchange(
                method: "GET", path: url.modelPath, timeoutMs: max(timeoutMs, 2000),
                timing: &timing)
        } catch let failure as ExchangeFailure {
            throw RemoteError(.unavailable, url: url.description, "model metadata: \(strip(failure.message))")
        }
        guard response.status == 200 else {
            throw RemoteError(
                response.status == 404 ? .unavailable : .badData, url: url.description,
                "model metadata: HTTP \(response.status)\(V2Codec.serverMessage(response.body))")
        }
        let declared: (inputs: [V2TensorSpec], outputs: [V2TensorSpec])
        do {
            declared = try V2Codec.parseMetadata(response.body)
        } catch let failure as ExchangeFailure {
            throw RemoteError(.badData, url: url.description, failure.message)
        }
        if let problem = V2Codec.mismatch(
            inputs: declared.inputs, outputs: declared.outputs, input: inputSpec,
            output: outputSpec)
        {
            throw RemoteError(
                .badData, url: url.description, "model metadata does not match the local model: \(problem)")
        }
        verified = true
    }

    /// False while backing off after a failure (no request would be sent now).
    public var acceptsRequests: Bool {
        !refused.load(ordering: .relaxed) && SystemClock.rawNs() >= nextAttemptNs.load(ordering: .relaxed)
    }

    public func runModel(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>)
        -> InferenceOutcome
    {
        var outcome = InferenceOutcome(backend: .remote)
        guard acceptsRequests else {
            outcome.failure = .unavailable
            return outcome
        }
        var timing = HTTPClientConnection.Timing()
        do {
            if !verified {
                do {
                    try verify()
                } catch let error as RemoteError where error.kind == .badData {
                    refused.store(true, ordering: .relaxed)
                    Log.error("\(error.description); no request will be sent to it")
                    outcome.failure = .badResponse
                    return outcome
                } catch let error as RemoteError {
                    throw ExchangeFailure(.connection, error.description)
                }
            }
            let response: HTTPResponse
            switch encoding {
            case .binary:
                response = try requestHeader.withUnsafeBytes { header in
                    try connection.exchange(
                        method: "POST", path: url.inferPath,
                        headers: [
                            ("Content-Type", "application/octet-stream"),
                            ("Inference-Header-Content-Length", requestHeaderLength)
                        ],
                        body: [header, UnsafeRawBufferPointer(input)], timeoutMs: timeoutMs, timing: &timing)
                }
            case .json:
                let body = V2Codec.requestJSON(input: inputSpec, outputName: outputName, values: input)
                response = try body.withUnsafeBytes { bytes in
                    try connection.exchange(
                        method: "POST", path: url.inferPath,
                        headers: [("Content-Type", "application/json")], body: [bytes],
                        timeoutMs: timeoutMs, timing: &timing)
                }
            }
            do {
                try V2Codec.decodeInferResponse(response, output: outputSpec, into: output)
            } catch let failure as ExchangeFailure {
                throw ExchangeFailure(failure.reason, "\(url.description): \(failure.message)")
            }
            if failuresInRow > 0 {
                Log.info("\(url.description): remote inference is back after \(failuresInRow) failed request(s)")
            }
            failuresInRow = 0
            backoffMs = 0
            everSucceeded = true
        } catch let failure as ExchangeFailure {
            outcome.failure = failure.reason
            failuresInRow += 1
            backoffMs = min(Self.maxBackoffMs, max(Self.firstBackoffMs, backoffMs * 2))
            nextAttemptNs.store(SystemClock.rawNs() + Int64(backoffMs) * 1_000_000, ordering: .relaxed)
            if failuresInRow == 1 {
                let hint =
                    !everSucceeded && encoding == .binary && failure.reason == .httpStatus
                    ? " (a server without the binary tensor data extension, e.g. MLServer, needs --infer-encoding json)"
                    : ""
                Log.warning(
                    "remote inference failed (\(failure.reason.name)): \(failure.message)\(hint); retrying "
                        + "with back-off (colours keep their age meanwhile)")
            }
        } catch {
            outcome.failure = .connection
        }
        outcome.sendNs = timing.sendNs
        outcome.waitNs = timing.waitNs
        outcome.receiveNs = timing.receiveNs
        return outcome
    }

    private func strip(_ message: String) -> String {
        message.hasPrefix(url.description + ": ") ? String(message.dropFirst(url.description.count + 2)) : message
    }
}
