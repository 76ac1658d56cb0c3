import ColorcamCore

extension PreviewEventLoop {
    /// Answers one complete request head. Loop thread only.
    func handle(_ head: HTTPRequestHead, on connection: PreviewConnection, nowNs: Int64) {
        let headOnly = head.method == "HEAD"
        // The API checks the token before it says which methods it takes.
        if PreviewAPIRules.serves(head.path), let api = server.api.withLock({ $0 }) {
            return beginAPIRequest(head, api: api, on: connection, nowNs: nowNs)
        }
        guard head.method == "GET" || headOnly else {
            return refuseMethod(head, on: connection, allowed: ["GET", "HEAD"])
        }
        if head.header("Transfer-Encoding") != nil || (head.header("Content-Length").map { $0 != "0" } ?? false) {
            return reject(connection, status: 400, message: "request bodies are not accepted")
        }
        let keepAlive = head.keepAlive
        guard admit(head, on: connection, keepAlive: keepAlive, headOnly: headOnly) else { return }
        switch head.path {
        case "/", "/index.html":
            text(
                connection, status: 200, body: PreviewPage.html, type: "text/html; charset=utf-8",
                keepAlive: keepAlive, headOnly: headOnly)
        case "/healthz":
            switch server.health.withLock({ $0 }) {
            case .ok:
                text(connection, status: 200, body: "ok\n", keepAlive: keepAlive, headOnly: headOnly)
            case .deviceLost(let reason):
                text(
                    connection, status: 503, body: "device lost: \(reason)\n", keepAlive: keepAlive, headOnly: headOnly)
            }
        case "/metrics":
            text(
                connection, status: 200, body: server.metrics.registry.render(),
                type: "text/plain; version=0.0.4; charset=utf-8", keepAlive: keepAlive, headOnly: headOnly)
        case "/stats.json":
            refreshFrame(nowNs: nowNs, forceTake: true)
            text(
                connection, status: 200, body: statsJSON(), type: "application/json", keepAlive: keepAlive,
                headOnly: headOnly)
        case "/snapshot.jpg":
            connection.phase = .awaitingSnapshot(
                keepAlive: keepAlive, headOnly: headOnly, deadlineNs: nowNs + config.snapshotWaitNs)
            refreshFrame(nowNs: nowNs, forceTake: true)
            answerSnapshotIfReady(connection)
        case "/stream.mjpg":
            let head = HTTPResponseHead.bytes(
                status: 200, contentType: "multipart/x-mixed-replace; boundary=\(Self.boundary)", contentLength: nil,
                keepAlive: false)
            if headOnly { return respond(connection, bytes: head, keepAlive: false) }
            connection.phase = .streaming
            streamCount += 1
            connection.enqueue(.bytes(head))
            refreshFrame(nowNs: nowNs, forceTake: true)
            if let jpeg = currentJPEG { queueStreamPart(jpeg, on: connection) }
            sendNow(connection)
        default:
            server.metrics.rejected(status: 404)?.increment()
            text(
                connection, status: 404, body: "no such page: \(head.path)\n", keepAlive: keepAlive,
                headOnly: headOnly)
        }
    }

    /// 405 naming the methods `allowed` (`Allow`), and close.
    func refuseMethod(_ head: HTTPRequestHead, on connection: PreviewConnection, allowed: [String]) {
        server.metrics.rejected(status: 405)?.increment()
        respond(
            connection,
            bytes: HTTPResponseHead.textResponse(
                status: 405, body: "method \(head.method) not allowed\n", keepAlive: false,
                extraHeaders: [("Allow", allowed.joined(separator: ", "))]), keepAlive: false)
    }

    static let boundary = "colorcamframe"

    func text(
        _ connection: PreviewConnection, status: Int, body: String,
        type: String = "text/plain; charset=utf-8", keepAlive: Bool, headOnly: Bool
    ) {
        respond(
            connection,
            bytes: HTTPResponseHead.textResponse(
                status: status, body: body, keepAlive: keepAlive, contentType: type, includeBody: !headOnly),
            keepAlive: keepAlive)
    }

    private func answerSnapshotIfReady(_ connection: PreviewConnection) {
        guard case .awaitingSnapshot(let keepAlive, let headOnly, _) = connection.phase, let jpeg = currentJPEG else {
            return
        }
        let head = HTTPResponseHead.bytes(
            status: 200, contentType: "image/jpeg", contentLength: jpeg.byteCount,
            keepAlive: keepAlive,
            extraHeaders: [("X-Frame-Sequence", String(jpeg.sequence))])
        respond(connection, bytes: head, body: headOnly ? nil : jpeg, keepAlive: keepAlive)
    }

    /// Queues one multipart part (boundary, part head, JPEG, CRLF) for a stream client whose output is empty.
    func queueStreamPart(_ jpeg: JPEGFrame, on connection: PreviewConnection) {
        let partHead =
            "--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.byteCount)\r\n"
            + "X-Frame-Sequence: \(jpeg.sequence)\r\n\r\n"
        connection.enqueue(.bytes(Array(partHead.utf8)))
        connection.enqueue(.jpeg(jpeg))
        connection.enqueue(.bytes(Self.crlf))
        connection.wantsNewer = false
        connection.lastQueuedSequence = jpeg.sequence
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]

    /// Takes the newest published frame (when one is needed or `forceTake`) and encodes it when someone watches,
    /// at most `maxStreamFps` times a second for streams; hands the JPEG to idle stream clients and waiting
    /// snapshots. Loop thread only.
    func refreshFrame(nowNs: Int64, forceTake: Bool = false) {
        let snapshotsWaiting = connections.contains {
            if case .awaitingSnapshot = $0.phase { return !$0.closed } else { return false }
        }
        let wantJPEG = streamCount > 0 || snapshotsWaiting
        if wantJPEG || forceTake, let slot = server.exchange.takeNewest() {
            readerSlot = slot
            readerEncoded = false
        }
        guard wantJPEG, let slot = readerSlot, !readerEncoded else { return }
        // Token bucket: `maxStreamFps` tokens a second, at most 2 saved, so a source at exactly the cap with jittery
        // arrivals is not thinned out, while a faster source is encoded at most `maxStreamFps` times a second.
        if lastEncodeNs != .min {
            encodeTokens = min(2, encodeTokens + Double(nowNs - lastEncodeNs) * config.maxStreamFps / 1e9)
        }
        if !snapshotsWaiting && encodeTokens < 1 { return }
        let output = pool.take(capacity: JPEGEncoder.worstCaseBytes(for: slot.frame.geometry), excluding: currentJPEG)
        do {
            let startNs = server.clock.nowNs()
            try encoder.encode(slot.frame, into: output)
            server.metrics.previewEncodeSeconds.observe(Double(server.clock.nowNs() - startNs) / 1e9)
        } catch {
            server.warn("\(error)")
            readerEncoded = true  // Do not retry the same frame every turn.
            return
        }
        readerEncoded = true
        lastEncodeNs = nowNs
        encodeTokens = max(0, encodeTokens - 1)
        currentJPEG = output
        server.metrics.previewFramesEncoded.increment()
        for connection in connections where !connection.closed {
            switch connection.phase {
            case .streaming:
                if connection.hasOutput {
                    if connection.wantsNewer { server.metrics.previewFramesSkipped.increment() }
                    connection.wantsNewer = true
                } else {
                    queueStreamPart(output, on: connection)
                    sendNow(connection)
                }
            case .awaitingSnapshot:
                answerSnapshotIfReady(connection)
            case .readingHead, .readingBody, .responding, .lingering:
                break
            }
        }
    }
}
