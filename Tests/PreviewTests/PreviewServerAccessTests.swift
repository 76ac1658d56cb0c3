import ColorcamCore
import Foundation
import Synchronization
import Testing

@testable import Preview

#if canImport(Glibc)
    import Glibc
#endif

private let token = "Tok3n-for.the_preview~tests-0123456789"

/// Starts a server on 127.0.0.1 (kernel-chosen port) that needs `token`, with a few frames published.
private func startServer(accessToken: String? = token) throws -> (PreviewServer, UInt16) {
    let config = PreviewServerConfig(
        listenAddress: SocketAddress("127.0.0.1:0")!, snapshotWaitNs: 100_000_000,
        accessToken: accessToken)
    let server = try PreviewServer(config: config, warn: { _ in })
    try server.start()
    let frame = FrameBuffer(geometry: FrameGeometry(widthPx: 64, heightPx: 48, chroma: .yuv420(.jpeg)))
    for index in 0..<2 {
        SyntheticPublisher.draw(frame, index: index)
        server.publish(frame: frame, overlays: [], stats: PreviewStats(outputFps: 30, lagMs: 10, model: "m"))
    }
    return (server, try #require(server.boundAddress?.port))
}

/// One request with `Connection: close` and extra header lines; reads the head and (unless `method` is HEAD) the
/// body. A running stream's body (200) is not read.
private func request(
    _ target: String, method: String = "GET", headers: [String] = [],
    port: UInt16
) throws -> TestHTTPClient.Response {
    let client = try TestHTTPClient(port: port)
    let extra = headers.map { $0 + "\r\n" }.joined()
    try client.send("\(method) \(target) HTTP/1.1\r\nHost: test\r\n\(extra)Connection: close\r\n\r\n")
    var response = try client.readResponse(readBody: false)
    if method != "HEAD" && !(target.hasPrefix("/stream.mjpg") && response.status == 200),
        let length = response.headers["content-length"].flatMap(Int.init)
    {
        response.body = try client.read(count: length)
    }
    return response
}

private let guarded = ["/", "/index.html", "/stream.mjpg", "/snapshot.jpg", "/stats.json", "/metrics", "/nope"]

@Suite(.serialized) struct PreviewServerAccessTests {
    @Test func withoutTheTokenEveryPathButHealthzIs401() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        for path in guarded {
            let response = try request(path, port: port)
            #expect(response.status == 401, "\(path)")
            #expect(response.headers["www-authenticate"] == "Bearer realm=\"colorcam\"", "\(path)")
            #expect(response.headers["content-type"] == "text/plain; charset=utf-8")
            #expect(response.bodyText.contains("Authorization: Bearer"), "\(path): \(response.bodyText)")
            #expect(response.bodyText.count < 200 && response.headers["set-cookie"] == nil)
        }
        let health = try request("/healthz", port: port)
        #expect(health.status == 200 && health.bodyText == "ok\n", "/healthz stays open")
        #expect(try request("/healthz?token=wrong", port: port).status == 200, "/healthz ignores credentials")
        #expect(server.metrics.rejected(status: 401)?.current == Double(guarded.count), "401s are counted")
        let metrics = try request("/metrics", headers: ["Authorization: Bearer \(token)"], port: port)
        let parsed = try PrometheusText(metrics.bodyText)
        #expect(parsed.value("colorcam_preview_rejected_total", ["status": "401"]) == Double(guarded.count))
    }

    @Test(arguments: [
        "Authorization: Bearer wrong-token-0123456789", "Authorization: Bearer \(token)x",
        "Authorization: Bearer " + token.dropLast(), "Authorization: Basic \(token)",
        "Cookie: colorcam_token=wrong-token-0123456789", "Cookie: colorcam_token=",
        "Cookie: other=\(token)"
    ])
    func aWrongTokenIs401(header: String) throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        for path in guarded {
            let response = try request(path, headers: [header], port: port)
            #expect(response.status == 401, "\(path) with \(header)")
            #expect(response.headers["www-authenticate"] == "Bearer realm=\"colorcam\"")
        }
    }

    @Test(arguments: [
        "Authorization: Bearer \(token)", "Cookie: colorcam_token=\(token)",
        "Cookie: theme=dark; colorcam_token=\(token); lang=en"
    ])
    func theRightTokenServesEveryPath(header: String) throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let page = try request("/", headers: [header], port: port)
        #expect(page.status == 200 && page.bodyText.contains("<title>colorcam live</title>"))
        let snapshot = try request("/snapshot.jpg", headers: [header], port: port)
        #expect(snapshot.status == 200 && decodedJPEGSize(snapshot.body)?.widthPx == 64)
        let stats = try request("/stats.json", headers: [header], port: port)
        #expect(stats.status == 200 && stats.headers["content-type"] == "application/json")
        #expect(try request("/metrics", headers: [header], port: port).status == 200)
        #expect(try request("/stream.mjpg", headers: [header], port: port).status == 200)
        #expect(try request("/nope", headers: [header], port: port).status == 404, "a missing page is 404 with it")
        #expect(server.metrics.rejected(status: 401)?.current == 0)
    }

    @Test func loginRedirectsAndSetsTheCookieThatThenWorks() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let login = try request("/?token=\(token)", port: port)
        #expect(login.status == 303)
        #expect(login.headers["location"] == "/")
        let cookie = try #require(login.headers["set-cookie"])
        #expect(cookie == "colorcam_token=\(token); Path=/; HttpOnly; SameSite=Lax")
        let deeper = try request("/stats.json?x=1&token=\(token)", port: port)
        #expect(deeper.status == 303 && deeper.headers["location"] == "/stats.json?x=1", "same path, token removed")
        // What a browser sends back: the cookie's name=value.
        let sentBack = "Cookie: " + String(cookie.prefix(while: { $0 != ";" }))
        let page = try request("/", headers: [sentBack], port: port)
        #expect(page.status == 200 && page.bodyText.contains("<img id=\"video\" src=\"/stream.mjpg\""))
        #expect(try request("/stats.json", headers: [sentBack], port: port).status == 200)
        #expect(server.metrics.rejected(status: 401)?.current == 0)
    }

    @Test(arguments: [
        "/?token=wrong-token-0123456789", "/?token=", "/?token=\(token)x",
        "/stats.json?token=" + token.dropLast()
    ])
    func aWrongLoginIs401AndSetsNoCookie(target: String) throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let response = try request(target, port: port)
        #expect(response.status == 401)
        #expect(response.headers["set-cookie"] == nil)
        #expect(response.headers["location"] == nil)
        #expect(response.headers["www-authenticate"] == "Bearer realm=\"colorcam\"")
        let withCookie = try request(target, headers: ["Cookie: colorcam_token=\(token)"], port: port)
        #expect(withCookie.status == 401, "a wrong login is refused even with a right cookie")
        #expect(server.metrics.rejected(status: 401)?.current == 2)
    }

    @Test func headBehavesLikeGet() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let denied = try request("/stats.json", method: "HEAD", port: port)
        #expect(denied.status == 401 && denied.headers["www-authenticate"] == "Bearer realm=\"colorcam\"")
        #expect(Int(denied.headers["content-length"] ?? "") == PreviewEventLoop.unauthorizedBody.utf8.count)
        let login = try request("/?token=\(token)", method: "HEAD", port: port)
        #expect(login.status == 303 && login.headers["set-cookie"]?.hasPrefix("colorcam_token=") == true)
        let allowed = try request("/", method: "HEAD", headers: ["Authorization: Bearer \(token)"], port: port)
        #expect(allowed.status == 200 && allowed.headers["content-type"] == "text/html; charset=utf-8")
        // Nothing follows a HEAD answer's head: the connection ends right after it.
        let client = try TestHTTPClient(port: port)
        try client.send("HEAD / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(try client.readResponse(readBody: false).status == 401)
        #expect(try client.readToEnd().isEmpty)
    }

    @Test func keepAliveSurvivesA401() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let client = try TestHTTPClient(port: port)
        try client.send("GET /stats.json HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 401)
        try client.send("GET /stats.json HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n\r\n")
        #expect(try client.readResponse().status == 200, "the client can retry with the token on the same connection")
    }

    @Test func anOpenServerIgnoresTokens() throws {
        let (server, port) = try startServer(accessToken: nil)
        defer { server.stop() }
        #expect(try request("/", port: port).status == 200)
        #expect(try request("/?token=anything", port: port).status == 200)
        #expect(try request("/stats.json", headers: ["Authorization: Bearer x"], port: port).status == 200)
    }

    @Test(arguments: ["", "short", "has space in the middle", "line\r\nbreak-0123456789"])
    func anUnusableTokenIsRefusedAtInit(bad: String) {
        let config = PreviewServerConfig(listenAddress: SocketAddress("127.0.0.1:0")!, accessToken: bad)
        #expect(throws: PreviewError.self) { _ = try PreviewServer(config: config, warn: { _ in }) }
    }

    @Test func aNonLoopbackAddressWithATokenDoesNotWarn() throws {
        let warnings = Locked<[String]>([])
        let config = PreviewServerConfig(listenAddress: SocketAddress("0.0.0.0:0")!, accessToken: token)
        let server = try PreviewServer(config: config, warn: { message in warnings.withLock { $0.append(message) } })
        try server.start()
        server.stop()
        #expect(warnings.withLock { $0 }.isEmpty)
    }
}
