import ColorcamCore

/// Framing of the JSON API's requests (`PreviewAPI`): the access token first (so without it nothing says the API is
/// there), then the method (405), then the body — `Content-Length` only
/// (411 for chunked), at most `PreviewAPIRules.maxBodyBytes` (413), `application/json` when there is one (415) — read
/// under the header timeout (408), then the API's answer. A refused body is not read: the connection closes after
/// the answer. Loop thread only.
extension PreviewEventLoop {
    func beginAPIRequest(
        _ head: HTTPRequestHead, api: any PreviewAPI, on connection: PreviewConnection, nowNs: Int64
    ) {
        let keepAlive = head.keepAlive, headOnly = head.method == "HEAD"
        guard admit(head, on: connection, keepAlive: keepAlive, headOnly: headOnly) else { return }
        guard PreviewAPIRules.methods.contains(head.method) else {
            return refuseMethod(head, on: connection, allowed: PreviewAPIRules.methods)
        }
        if head.header("Transfer-Encoding") != nil {
            return reject(
                connection, status: 411, message: "send the body with Content-Length (chunked is not accepted)")
        }
        let length: Int
        if let text = head.header("Content-Length") {
            guard let n = Int(text), n >= 0 else {
                return reject(connection, status: 400, message: "bad Content-Length '\(text)'")
            }
            length = n
        } else {
            length = 0
        }
        if length > PreviewAPIRules.maxBodyBytes {
            return reject(
                connection, status: 413,
                message: "a request body of \(length) bytes; at most \(PreviewAPIRules.maxBodyBytes) are accepted")
        }
        if length > 0 {
            let type = (head.header("Content-Type") ?? "").lowercased()
            guard type.hasPrefix("application/json") else {
                return reject(connection, status: 415, message: "the body must be application/json")
            }
        }
        connection.body = []
        connection.phase = .readingBody(head: head, needed: length)
        connection.headStartedNs = nowNs  // the body must arrive within the header timeout too
        let buffered = connection.pendingInput
        connection.pendingInput = []
        receiveBody(buffered, on: connection)
    }

    /// Takes body bytes (what follows goes back to `pendingInput`: a pipelined request); answers when whole.
    func receiveBody(_ bytes: some Collection<UInt8>, on connection: PreviewConnection) {
        guard case .readingBody(let head, let needed) = connection.phase else { return }
        let take = min(needed - connection.body.count, bytes.count)
        connection.body.append(contentsOf: bytes.prefix(take))
        if take < bytes.count { connection.pendingInput.append(contentsOf: bytes.dropFirst(take)) }
        guard connection.body.count == needed else { return }
        connection.headStartedNs = nil
        let body = connection.body
        connection.body = []
        let api = server.api.withLock { $0 }
        let method = head.method == "HEAD" ? "GET" : head.method
        let answer =
            api?.respond(method: method, path: String(head.path), query: head.query, body: body)
            ?? .error(404, "no such page: \(head.path)")
        if answer.status >= 400 { server.metrics.rejected(status: answer.status)?.increment() }
        text(
            connection, status: answer.status, body: answer.json, type: "application/json", keepAlive: head.keepAlive,
            headOnly: head.method == "HEAD")
    }
}
