import ColorcamCore
import Foundation
import Synchronization
import Testing

@testable import Preview

/// An API that answers with what it was asked.
private final class EchoAPI: PreviewAPI, Sendable {
    let calls = Mutex<[(String, String, [UInt8])]>([])
    func respond(method: String, path: String, query: String, body: [UInt8]) -> PreviewAPIResponse {
        calls.withLock { $0.append((method, path, body)) }
        if path == "/photos/404" { return .error(404, "no photo 404") }
        return PreviewAPIResponse(status: method == "POST" ? 201 : 200, json: "{\"bytes\": \(body.count)}\n")
    }
}

private let token = "Tok3n-for.the_preview~tests-0123456789"

private func startServer(accessToken: String? = nil) throws -> (PreviewServer, UInt16, EchoAPI) {
    let config = PreviewServerConfig(
        listenAddress: SocketAddress("127.0.0.1:0")!, headerTimeoutNs: 300_000_000, accessToken: accessToken)
    let server = try PreviewServer(config: config, warn: { _ in })
    let api = EchoAPI()
    server.serveAPI(api)
    try server.start()
    return (server, try #require(server.boundAddress?.port), api)
}

private func read(_ client: TestHTTPClient) throws -> TestHTTPClient.Response {
    var response = try client.readResponse(readBody: false)
    if let length = response.headers["content-length"].flatMap(Int.init) {
        response.body = try client.read(count: length)
    }
    return response
}

/// The preview server's framing of `/photos` API requests: bodies by Content-Length (in pieces, pipelined behind),
/// the refusals before a body is read, the token first.
@Suite(.serialized) struct PreviewAPITests {
    @Test func aBodyArrivingInPiecesReachesTheAPIWholeAndTheConnectionStaysUsable() throws {
        let (server, port, api) = try startServer()
        defer { server.stop() }
        let client = try TestHTTPClient(port: port)
        let body = ##"{"x": 10, "y": 20, "color": "#3060c0"}"##
        try client.send(
            "POST /photos/3/hints HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body.prefix(7))
        Thread.sleep(forTimeInterval: 0.05)
        // The rest of the body with a pipelined GET behind it.
        try client.send(String(body.dropFirst(7)) + "GET /photos HTTP/1.1\r\nHost: t\r\n\r\n")
        let first = try read(client)
        #expect(first.status == 201 && first.headers["content-type"] == "application/json")
        #expect(first.bodyText == "{\"bytes\": \(body.utf8.count)}\n")
        let second = try read(client)
        #expect(second.status == 200 && second.bodyText == "{\"bytes\": 0}\n")
        let calls = api.calls.withLock { $0 }
        #expect(calls.map(\.0) == ["POST", "GET"] && calls.map(\.1) == ["/photos/3/hints", "/photos"])
        #expect(calls[0].2 == Array(body.utf8))
    }

    @Test(arguments: [
        ("Transfer-Encoding: chunked\r\n", 411), ("Content-Length: 70000\r\nContent-Type: application/json\r\n", 413),
        ("Content-Length: 2\r\nContent-Type: text/plain\r\n", 415), ("Content-Length: -1\r\n", 400)
    ])
    func aBodyTheServerWillNotReadIsRefusedFirst(headers: String, status: Int) throws {
        let (server, port, api) = try startServer()
        defer { server.stop() }
        let client = try TestHTTPClient(port: port)
        try client.send("POST /photos/1/hints HTTP/1.1\r\nHost: t\r\n\(headers)\r\n")
        let response = try read(client)
        #expect(response.status == status && response.headers["connection"] == "close", "\(response.bodyText)")
        #expect(api.calls.withLock { $0.isEmpty })
    }

    @Test func methodsAndErrorsAndAnIncompleteBodyTimesOut() throws {
        let (server, port, _) = try startServer()
        defer { server.stop() }
        let patch = try TestHTTPClient(port: port)
        try patch.send("PATCH /photos/1/hints HTTP/1.1\r\nHost: t\r\n\r\n")
        let refused = try read(patch)
        #expect(refused.status == 405 && refused.headers["allow"] == "GET, HEAD, POST, PUT, DELETE")
        let notFound = try TestHTTPClient.get("/photos/404", port: port)
        #expect(notFound.status == 404 && notFound.bodyText == "{\"error\": \"no photo 404\"}\n")
        let post = try TestHTTPClient(port: port)
        try post.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        #expect(try read(post).status == 405, "the page takes no POST")
        let slow = try TestHTTPClient(port: port)
        try slow.send(
            "POST /photos/1/hints HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{")
        #expect(try read(slow).status == 408)
    }

    @Test func theTokenIsCheckedBeforeTheBody() throws {
        let (server, port, api) = try startServer(accessToken: token)
        defer { server.stop() }
        let client = try TestHTTPClient(port: port)
        try client.send(
            "POST /photos/1/hints HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        #expect(try read(client).status == 401 && api.calls.withLock { $0.isEmpty })
        let patch = try TestHTTPClient(port: port)
        try patch.send("PATCH /photos/1/hints HTTP/1.1\r\nHost: t\r\n\r\n")
        let hidden = try read(patch)
        #expect(hidden.status == 401 && hidden.headers["allow"] == nil, "no method list without the token")
        let allowed = try TestHTTPClient(port: port)
        try allowed.send(
            "POST /photos/1/hints HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        #expect(try read(allowed).status == 201 && api.calls.withLock { $0.count } == 1)
    }
}
