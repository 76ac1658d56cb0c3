import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// The preview server's event loop: one thread, `poll(2)` over the wake-up eventfd, the listener and every client.
///
/// Why `poll` and one thread: the server has at most a few hundred connections, so rebuilding the `pollfd` array
/// each turn is cheap and keeps the code small and portable; one thread means no locks around connection state,
/// and the only shared data is the `FrameExchange` (newest frame) and atomics. JPEG encoding runs here too — at
/// most once per published frame and only while someone watches — so the pipeline thread never pays for it.
///
/// Threading: every method runs on the loop thread (`run`); nothing here is touched from elsewhere.
final class PreviewEventLoop {
    let server: PreviewShared
    let listener: Socket
    let encoder: JPEGEncoder
    let pool = JPEGFramePool()
    var connections: [PreviewConnection] = []
    private var pollFDs: [pollfd] = []
    private var nextConnectionID = 0
    /// A descriptor held in reserve so the loop can still accept-and-close when the process runs out (EMFILE).
    private var spareFD: Int32 = open("/dev/null", O_RDONLY | O_CLOEXEC)
    private var warnedOutOfDescriptors = false
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 16)

    /// The newest frame's data, copied from the exchange: stats, overlays, and whether it is encoded.
    var readerSlot: FrameExchange.Slot?
    var readerEncoded = false
    /// The newest encoded JPEG (what new stream clients and snapshots get).
    var currentJPEG: JPEGFrame?
    var lastEncodeNs: Int64 = .min
    /// Stream encode budget (see `refreshFrame`).
    var encodeTokens = 1.0
    var streamCount = 0

    init(server: PreviewShared, listener: Socket) throws {
        self.server = server
        self.listener = listener
        encoder = try JPEGEncoder(quality: server.config.jpegQuality)
        pollFDs.reserveCapacity(server.config.maxConnections + 2)
        connections.reserveCapacity(server.config.maxConnections)
    }

    deinit {
        readBuffer.deallocate()
        if spareFD >= 0 { _ = Glibc.close(spareFD) }
    }

    var config: PreviewServerConfig { server.config }
    var nowNs: Int64 { server.clock.nowNs() }

    func run() {
        while !server.stopRequested.load(ordering: .acquiring) {
            pollFDs.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: server.wakeFD, events: Int16(POLLIN), revents: 0))
            pollFDs.append(pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0))
            for connection in connections {
                var events: Int16 = 0
                switch connection.phase {
                case .readingHead:
                    // Back-pressure a client that pipelines faster than it is answered.
                    if connection.pendingInput.count < 64 * 1024 { events |= Int16(POLLIN) }
                case .streaming, .readingBody: events |= Int16(POLLIN)
                case .lingering: events |= Int16(POLLIN)
                case .responding, .awaitingSnapshot: break
                }
                if connection.hasOutput { events |= Int16(POLLOUT) }
                pollFDs.append(pollfd(fd: connection.socket.fd, events: events, revents: 0))
            }
            let ready = poll(&pollFDs, nfds_t(pollFDs.count), pollTimeoutMs())
            if ready < 0 && errno != EINTR {
                server.warn("preview: poll failed (errno \(errno)); stopping the preview server")
                break
            }
            let now = nowNs
            if pollFDs[0].revents != 0 { drainWakeFD() }
            // Clients first (their pollfd order matches `connections` as it was before accepting new ones).
            for (index, connection) in connections.enumerated() {
                let revents = pollFDs[index + 2].revents
                if revents != 0 { handleEvents(revents, on: connection, nowNs: now) }
            }
            if pollFDs[1].revents != 0 { acceptPending(nowNs: now) }
            parsePipelinedInput(nowNs: now)
            refreshFrame(nowNs: now)
            enforceDeadlines(nowNs: now)
            connections.removeAll { $0.closed }
            updateGauges()
        }
        for connection in connections { connection.close() }
        connections.removeAll()
        listener.close()
        updateGauges()
    }

    private func pollTimeoutMs() -> Int32 {
        let pipelined = connections.contains {
            if case .readingHead = $0.phase { return !$0.pendingInput.isEmpty } else { return false }
        }
        if pipelined { return 0 }
        // Deadlines are coarse (seconds); waking every 100 ms keeps them within 0.1 s without tracking each one.
        // An unencoded frame held back by the stream rate cap is encoded when the cap allows.
        if readerSlot != nil && !readerEncoded && streamCount > 0 && lastEncodeNs != .min {
            let tokens = encodeTokens + Double(nowNs - lastEncodeNs) * config.maxStreamFps / 1e9
            let waitNs = Int64((1 - tokens) * 1e9 / config.maxStreamFps)
            return Int32(max(0, min(100, waitNs / 1_000_000 + 1)))
        }
        return 100
    }

    /// Parses, for each connection ready for its next request, one request from bytes that arrived with an earlier
    /// one (pipelining): one request per connection per turn, so no client can monopolise a turn.
    private func parsePipelinedInput(nowNs: Int64) {
        for connection in connections where !connection.closed && !connection.pendingInput.isEmpty {
            guard case .readingHead = connection.phase else { continue }
            let input = connection.pendingInput
            connection.pendingInput = []
            connection.headStartedNs = nowNs
            parse(input, on: connection, nowNs: nowNs)
        }
    }

    private func drainWakeFD() {
        while read(server.wakeFD, readBuffer.baseAddress, readBuffer.count) > 0 {}
    }

    private func updateGauges() {
        server.metrics.previewConnections.set(Double(connections.count))
        server.metrics.previewStreams.set(Double(streamCount))
    }

    // MARK: accepting

    private func acceptPending(nowNs: Int64) {
        // Bounded per turn so a connection flood cannot starve the clients already here.
        for _ in 0..<64 {
            guard let socket = listener.accept(sendBufferBytes: config.socketSendBufferBytes) else {
                let failure = listener.lastAcceptErrno
                if failure == EMFILE || failure == ENFILE { shedOneConnectionWithoutDescriptors() }
                return
            }
            if connections.count >= config.maxConnections {
                let response = HTTPResponseHead.textResponse(
                    status: 503, body: "too many connections\n", keepAlive: false)
                _ = response.withUnsafeBytes { socket.write($0) }
                socket.close()
                server.metrics.rejected(status: 503)?.increment()
                continue
            }
            nextConnectionID += 1
            let connection = PreviewConnection(
                socket: socket, id: nextConnectionID, limits: config.parserLimits, nowNs: nowNs)
            // The first request must arrive within the header timeout too (a connection that sends nothing is a
            // slowloris as well).
            connection.headStartedNs = nowNs
            connections.append(connection)
        }
    }

    /// Out of file descriptors: the pending connection would keep the listener readable and `poll` spinning.
    /// Frees the spare descriptor, accepts and closes one connection, and takes the spare back.
    private func shedOneConnectionWithoutDescriptors() {
        if spareFD >= 0 { _ = Glibc.close(spareFD) }
        let fd = Glibc.accept(listener.fd, nil, nil)
        if fd >= 0 { _ = Glibc.close(fd) }
        spareFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        server.metrics.rejected(status: 503)?.increment()
        if !warnedOutOfDescriptors {
            warnedOutOfDescriptors = true
            server.warn("preview: out of file descriptors (errno EMFILE); refusing connections until some close")
        }
    }

    // MARK: reading and writing

    private func handleEvents(_ revents: Int16, on connection: PreviewConnection, nowNs: Int64) {
        if connection.closed { return }
        if revents & Int16(POLLNVAL) != 0 { return close(connection) }
        if revents & Int16(POLLOUT) != 0 || (revents & Int16(POLLERR | POLLHUP) != 0 && connection.hasOutput) {
            guard connection.flush(nowNs: nowNs) else { return close(connection) }
            if !connection.hasOutput { outputDrained(connection, nowNs: nowNs) }
        }
        if connection.closed { return }
        if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            readAvailable(connection, nowNs: nowNs)
        }
    }

    private func readAvailable(_ connection: PreviewConnection, nowNs: Int64) {
        switch connection.socket.read(into: readBuffer) {
        case .wouldBlock:
            return
        case .closed:
            return close(connection)
        case .transferred(let count):
            let bytes = UnsafeRawBufferPointer(rebasing: readBuffer[0..<count])
            switch connection.phase {
            case .readingHead:
                if connection.headStartedNs == nil { connection.headStartedNs = nowNs }
                if connection.pendingInput.isEmpty {
                    parse(bytes, on: connection, nowNs: nowNs)
                } else {
                    connection.pendingInput.append(contentsOf: bytes)  // keep order behind unparsed pipelined bytes
                }
            case .readingBody:
                receiveBody(bytes, on: connection)
            case .streaming, .lingering:
                return  // Nothing more to parse from this client; its bytes are discarded.
            case .responding, .awaitingSnapshot:
                // Not polled for input in these phases; keep what arrived for after the response.
                connection.pendingInput.append(contentsOf: bytes)
            }
        }
    }

    private func parse(_ bytes: some Collection<UInt8>, on connection: PreviewConnection, nowNs: Int64) {
        switch connection.parser.feed(bytes) {
        case .incomplete:
            return
        case .failed(let error):
            reject(connection, status: error.statusCode, message: error.description)
        case .complete(let head, let leftover):
            connection.headStartedNs = nil
            connection.pendingInput = leftover
            handle(head, on: connection, nowNs: nowNs)
        }
    }

    /// Called when a connection's output ran dry: next request, next stream frame, or close.
    private func outputDrained(_ connection: PreviewConnection, nowNs: Int64) {
        switch connection.phase {
        case .responding(let closeAfter):
            if closeAfter {
                connection.socket.shutdownWrite()
                connection.phase = .lingering(untilNs: nowNs + Self.lingerNs)
                return
            }
            connection.phase = .readingHead
            connection.idleSinceNs = nowNs
        // Pipelined bytes are parsed by `parsePipelinedInput` on the next turn (not here: recursing through
        // parse → respond → drained for every pipelined request would make the stack depth client-controlled).
        case .streaming:
            if connection.wantsNewer, let jpeg = currentJPEG, jpeg.sequence != connection.lastQueuedSequence {
                queueStreamPart(jpeg, on: connection)
            }
        case .readingHead, .readingBody, .awaitingSnapshot, .lingering:
            break
        }
    }

    /// How long a closing connection keeps reading (and discarding) before the socket is closed.
    static let lingerNs: Int64 = 2_000_000_000

    /// Answers `status` with a one-line reason and closes the connection after sending.
    func reject(_ connection: PreviewConnection, status: Int, message: String) {
        server.metrics.rejected(status: status)?.increment()
        respond(
            connection,
            bytes: HTTPResponseHead.textResponse(
                status: status, body: message + "\n", keepAlive: false), keepAlive: false)
    }

    /// Queues a whole response and tries to send it now.
    func respond(_ connection: PreviewConnection, bytes: [UInt8], body: JPEGFrame? = nil, keepAlive: Bool) {
        connection.phase = .responding(closeAfter: !keepAlive)
        connection.enqueue(.bytes(bytes))
        if let body { connection.enqueue(.jpeg(body)) }
        sendNow(connection)
    }

    func sendNow(_ connection: PreviewConnection) {
        let now = nowNs
        guard connection.flush(nowNs: now) else { return close(connection) }
        if !connection.hasOutput { outputDrained(connection, nowNs: now) }
    }

    func close(_ connection: PreviewConnection) {
        if connection.closed { return }
        if connection.isStreaming { streamCount -= 1 }
        connection.close()
    }

    // MARK: deadlines

    private func enforceDeadlines(nowNs: Int64) {
        for connection in connections where !connection.closed {
            switch connection.phase {
            case .readingHead:
                if let started = connection.headStartedNs, nowNs - started > config.headerTimeoutNs {
                    reject(
                        connection, status: 408,
                        message: "request head not complete within "
                            + "\(config.headerTimeoutNs / 1_000_000) ms")
                } else if connection.headStartedNs == nil && nowNs - connection.idleSinceNs > config.idleTimeoutNs {
                    close(connection)
                }
            case .readingBody:
                if let started = connection.headStartedNs, nowNs - started > config.headerTimeoutNs {
                    reject(
                        connection, status: 408,
                        message: "request body not complete within \(config.headerTimeoutNs / 1_000_000) ms")
                }
            case .awaitingSnapshot(let keepAlive, _, let deadlineNs):
                if nowNs >= deadlineNs {
                    server.metrics.rejected(status: 503)?.increment()
                    respond(
                        connection,
                        bytes: HTTPResponseHead.textResponse(
                            status: 503, body: "no frame published yet\n", keepAlive: keepAlive), keepAlive: keepAlive)
                }
            case .lingering(let untilNs):
                if nowNs >= untilNs { close(connection) }
            case .responding, .streaming:
                if connection.hasOutput && nowNs - connection.lastWriteProgressNs > config.writeStallTimeoutNs {
                    close(connection)
                }
            }
        }
    }
}
