import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// A keep-alive HTTP/1.1 connection to one server: each `exchange` sends one request and reads its response, all
/// within one deadline. A connection the server closed while idle is reopened once, transparently, when the request
/// failed before any answer arrived. A timed-out or broken exchange closes the connection (a late answer is never
/// read as the next request's).
///
/// Threading: one thread at a time (the inference thread). Allocation: the response's headers and body per
/// exchange; this runs on the inference thread, never in the capture or output loop.
public final class HTTPClientConnection {
    public let address: SocketAddress
    /// The URL's text, for messages.
    public let label: String
    let hostHeader: String
    public var limits = HTTPResponseReader.Limits()
    private var socket: Socket?
    private var received: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 256 * 1024)

    /// How one exchange's time split, in nanoseconds: connecting and writing the request; from the request
    /// written to the first byte of the answer; from there to the whole answer.
    public struct Timing: Equatable, Sendable {
        public var sendNs: Int64 = 0
        public var waitNs: Int64 = 0
        public var receiveNs: Int64 = 0
        public init() {}
    }

    public init(address: SocketAddress, hostHeader: String, label: String) {
        self.address = address
        self.hostHeader = hostHeader
        self.label = label
        received.reserveCapacity(1024 * 1024)
    }

    deinit { socket?.close() }

    /// Whether a connection is open now (kept alive from the last exchange).
    public var isConnected: Bool { socket != nil }

    public func close() {
        socket?.close()
        socket = nil
    }

    /// Sends `method path` with `headers` and the concatenation of `body` parts; returns the response.
    /// - Throws: `ExchangeFailure` — `.timeout` past `timeoutMs`, `.connection` when it cannot connect or the
    ///   connection breaks, `.badResponse` for an answer that is not HTTP or is too large.
    public func exchange(
        method: String, path: String, headers: [(String, String)] = [],
        body: [UnsafeRawBufferPointer] = [], timeoutMs: Int, timing: inout Timing
    ) throws
        -> HTTPResponse
    {
        let startNs = SystemClock.rawNs()
        let deadlineNs = startNs + Int64(timeoutMs) * 1_000_000
        let reused = socket != nil
        func once(_ startNs: Int64) throws -> HTTPResponse {
            do {
                return try attempt(
                    method: method, path: path, headers: headers, body: body, startNs: startNs,
                    deadlineNs: deadlineNs, timing: &timing)
            } catch let failure as StaleConnection {
                close()
                throw failure
            } catch {
                close()
                throw error
            }
        }
        do {
            return try once(startNs)
        } catch let failure as StaleConnection {
            // A kept-alive connection the server had closed: one fresh try within the same deadline.
            guard reused else { throw ExchangeFailure(.connection, "\(label): \(failure.message)") }
            do {
                return try once(SystemClock.rawNs())
            } catch let failure as StaleConnection {
                throw ExchangeFailure(.connection, "\(label): \(failure.message)")
            }
        }
    }

    /// The reused connection was closed by the server before it answered anything.
    private struct StaleConnection: Error { let message: String }

    private func attempt(
        method: String, path: String, headers: [(String, String)], body: [UnsafeRawBufferPointer],
        startNs: Int64, deadlineNs: Int64, timing: inout Timing
    ) throws -> HTTPResponse {
        if socket == nil {
            switch Socket.connect(to: address, timeoutMs: remainingMs(deadlineNs)) {
            case .success(let s): socket = s
            case .failure(let f) where f.code == ETIMEDOUT:
                throw ExchangeFailure(.timeout, "\(label): no connection to \(address) within the timeout")
            case .failure(let f):
                throw ExchangeFailure(.connection, "\(label): cannot connect to \(address): \(f)")
            }
        }
        let socket = self.socket!
        let bodyBytes = body.reduce(0) { $0 + $1.count }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: colorcam\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if bodyBytes > 0 || method == "POST" { head += "Content-Length: \(bodyBytes)\r\n" }
        head += "\r\n"
        var headBytes = Array(head.utf8)
        try headBytes.withUnsafeMutableBytes {
            try write(UnsafeRawBufferPointer($0), on: socket, deadlineNs: deadlineNs)
        }
        for part in body { try write(part, on: socket, deadlineNs: deadlineNs) }
        let sentNs = SystemClock.rawNs()
        timing.sendNs = sentNs - startNs
        received.removeAll(keepingCapacity: true)
        var firstByteNs: Int64 = 0
        while true {
            switch socket.wait(forWriting: false, timeoutMs: remainingMs(deadlineNs)) {
            case .timedOut:
                throw ExchangeFailure(
                    .timeout,
                    "\(label): no complete answer within the timeout "
                        + "(\(received.count) bytes received)")
            case .failed(let e):
                if received.isEmpty { throw StaleConnection(message: "connection failed: \(Errno(e))") }
                throw ExchangeFailure(.connection, "\(label): connection failed after \(received.count) bytes")
            case .ready:
                break
            }
            let result = chunk.withUnsafeMutableBytes { socket.read(into: $0) }
            var closed = false
            switch result {
            case .transferred(let n):
                if firstByteNs == 0 { firstByteNs = SystemClock.rawNs() }
                received.append(contentsOf: chunk[0..<n])
            case .wouldBlock:
                continue
            case .closed(let e):
                if received.isEmpty {
                    throw StaleConnection(
                        message: e == 0
                            ? "the server closed the connection without an answer"
                            : "connection lost: \(Errno(e))")
                }
                closed = true
            }
            do {
                if let (response, _) = try HTTPResponseReader.parse(received[...], closed: closed, limits: limits) {
                    let doneNs = SystemClock.rawNs()
                    timing.waitNs = firstByteNs - sentNs
                    timing.receiveNs = doneNs - firstByteNs
                    if !response.keepAlive || closed { close() }
                    return response
                }
            } catch let failure as ExchangeFailure {
                throw ExchangeFailure(failure.reason, "\(label): \(failure.message)")
            }
            if closed { throw ExchangeFailure(.badResponse, "\(label): truncated response") }
        }
    }

    private func write(_ bytes: UnsafeRawBufferPointer, on socket: Socket, deadlineNs: Int64) throws {
        var offset = 0
        while offset < bytes.count {
            switch socket.write(UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
            case .transferred(let n):
                offset += n
            case .wouldBlock:
                switch socket.wait(forWriting: true, timeoutMs: remainingMs(deadlineNs)) {
                case .ready: continue
                case .timedOut:
                    throw ExchangeFailure(.timeout, "\(label): the request could not be sent within the timeout")
                case .failed(let e):
                    throw StaleConnection(message: "connection failed while sending: \(Errno(e))")
                }
            case .closed(let e):
                throw StaleConnection(message: "connection lost while sending: \(Errno(e))")
            }
        }
    }

    private func remainingMs(_ deadlineNs: Int64) -> Int {
        Int(max(0, (deadlineNs - SystemClock.rawNs() + 999_999) / 1_000_000))
    }
}
