import ColorcamCore

/// One client connection's state on the event loop: what it is doing, what is left to send, its deadlines.
///
/// Output is a short list of chunks (a response head, a body, or a JPEG frame shared with other clients); a
/// stream client holds at most one frame's chunks at a time — a newer frame while it is busy only sets `wantsNewer`.
/// Threading: event-loop thread only.
final class PreviewConnection {
    enum Phase {
        /// Waiting for (more of) a request head.
        case readingHead
        /// Reading an API request's body (`PreviewEventLoop+API`): `needed` bytes in all, into `body`.
        case readingBody(head: HTTPRequestHead, needed: Int)
        /// Sending a response; then read the next request, or close.
        case responding(closeAfter: Bool)
        /// Waiting for the first frame to answer `/snapshot.jpg`; 503 at `deadlineNs`.
        case awaitingSnapshot(keepAlive: Bool, headOnly: Bool, deadlineNs: Int64)
        /// Sending `/stream.mjpg` parts until the client goes away.
        case streaming
        /// Response sent and our side shut down; discarding what the client still sends until it closes or
        /// `untilNs`, so a close with unread input does not reset the connection before the client read the answer.
        case lingering(untilNs: Int64)
    }

    enum Chunk {
        case bytes([UInt8])
        case jpeg(JPEGFrame)
    }

    let socket: Socket
    let id: Int
    var phase = Phase.readingHead
    var parser: HTTPRequestParser
    /// Bytes received after the last complete head (pipelined requests), parsed once the response is sent.
    var pendingInput: [UInt8] = []
    /// An API request's body as it arrives (`Phase.readingBody`).
    var body: [UInt8] = []
    var outgoing: [Chunk] = []
    /// Bytes of `outgoing[0]` already sent.
    var sentOffset = 0
    /// When the current head's first byte arrived (408 after the header timeout), nil when none has.
    var headStartedNs: Int64?
    /// When the connection last became idle (closed after the idle timeout).
    var idleSinceNs: Int64
    /// When a send last made progress (a stalled client is closed after the stall timeout).
    var lastWriteProgressNs: Int64
    /// Stream clients: a newer frame arrived while this one was still sending.
    var wantsNewer = false
    /// Stream clients: sequence number of the last frame queued (so the same frame is never sent twice).
    var lastQueuedSequence = -1
    var closed = false

    init(socket: Socket, id: Int, limits: HTTPRequestParser.Limits, nowNs: Int64) {
        self.socket = socket
        self.id = id
        parser = HTTPRequestParser(limits: limits)
        idleSinceNs = nowNs
        lastWriteProgressNs = nowNs
    }

    var isStreaming: Bool { if case .streaming = phase { return true } else { return false } }
    var hasOutput: Bool { !outgoing.isEmpty }

    /// Queues `chunk`; a JPEG chunk holds its frame (`users`) until sent or the connection closes.
    func enqueue(_ chunk: Chunk) {
        if case .jpeg(let frame) = chunk { frame.users += 1 }
        outgoing.append(chunk)
    }

    /// Sends as much as the socket takes. Returns false when the connection failed (the caller closes it).
    func flush(nowNs: Int64) -> Bool {
        while let chunk = outgoing.first {
            let result: Socket.IOResult
            let total: Int
            switch chunk {
            case .bytes(let bytes):
                total = bytes.count
                result = bytes.withUnsafeBytes { socket.write(UnsafeRawBufferPointer(rebasing: $0[sentOffset...])) }
            case .jpeg(let frame):
                total = frame.byteCount
                result = socket.write(UnsafeRawBufferPointer(rebasing: frame.bytes[sentOffset...]))
            }
            switch result {
            case .transferred(let n):
                if n > 0 { lastWriteProgressNs = nowNs }
                sentOffset += n
                if sentOffset >= total { finishFirstChunk() }
            case .wouldBlock:
                return true
            case .closed:
                return false
            }
        }
        return true
    }

    private func finishFirstChunk() {
        if case .jpeg(let frame) = outgoing.removeFirst() { frame.users -= 1 }
        sentOffset = 0
    }

    /// Closes the socket and releases any frames it held.
    func close() {
        for chunk in outgoing { if case .jpeg(let frame) = chunk { frame.users -= 1 } }
        outgoing.removeAll()
        socket.close()
        closed = true
    }
}
