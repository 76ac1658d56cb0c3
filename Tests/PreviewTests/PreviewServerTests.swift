import ColorcamCore
import Foundation
import Synchronization
import Testing

@testable import Preview

#if canImport(Glibc)
    import Glibc
#endif

/// Starts a server on 127.0.0.1 with a kernel-chosen port.
private func startServer(_ adjust: (inout PreviewServerConfig) -> Void = { _ in }) throws -> (PreviewServer, UInt16) {
    var config = PreviewServerConfig(listenAddress: SocketAddress("127.0.0.1:0")!)
    adjust(&config)
    let server = try PreviewServer(config: config, warn: { _ in })
    try server.start()
    let port = try #require(server.boundAddress?.port)
    return (server, port)
}

/// Publishes `count` frames back to back and waits until they are all in.
private func publishFrames(_ server: PreviewServer, count: Int, geometry: FrameGeometry) {
    let frame = FrameBuffer(geometry: geometry)
    for index in 0..<count {
        SyntheticPublisher.draw(frame, index: index)
        server.publish(frame: frame, overlays: [], stats: PreviewStats(outputFps: 29.5, lagMs: 12.25, model: "m\"1"))
    }
}

@Suite(.serialized) struct PreviewServerTests {
    @Test func healthzFollowsTheDeviceState() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let ok = try TestHTTPClient.get("/healthz", port: port)
        #expect(ok.status == 200)
        #expect(ok.bodyText == "ok\n")
        server.setHealth(.deviceLost(reason: "/dev/video0 unplugged"))
        let lost = try TestHTTPClient.get("/healthz", port: port)
        #expect(lost.status == 503)
        #expect(lost.bodyText.contains("/dev/video0 unplugged"))
        let stats =
            try JSONSerialization.jsonObject(with: Data(TestHTTPClient.get("/stats.json", port: port).body))
            as? [String: Any]
        #expect(stats?["health"] as? String == "device_lost")
        server.setHealth(.ok)
        #expect(try TestHTTPClient.get("/healthz", port: port).status == 200)
    }

    @Test func metricsParseAsPrometheusText() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        server.metrics.dropped(reason: "late")?.add(3)
        server.metrics.outputLagSeconds.observe(0.04)
        let response = try TestHTTPClient.get("/metrics", port: port)
        #expect(response.status == 200)
        #expect(response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let parsed = try PrometheusText(response.bodyText)
        #expect(parsed.value("colorcam_frames_dropped_total", ["reason": "late"]) == 3)
        #expect(parsed.value("colorcam_output_lag_seconds_bucket", ["le": "0.05"]) == 1)
        #expect(parsed.value("colorcam_preview_connections") != nil)
    }

    @Test(arguments: [
        FrameGeometry(widthPx: 640, heightPx: 480, chroma: .yuv420(.jpeg)),
        FrameGeometry(widthPx: 321, heightPx: 241, chroma: .yuv420(.mpeg2)),
        FrameGeometry(widthPx: 100, heightPx: 50, chroma: .yuv444),
        FrameGeometry(widthPx: 66, heightPx: 34, chroma: .yuv422),
        FrameGeometry(widthPx: 64, heightPx: 48, chroma: .mono)
    ])
    func snapshotIsAValidJPEGOfTheFrameSize(geometry: FrameGeometry) throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        publishFrames(server, count: 3, geometry: geometry)
        let response = try TestHTTPClient.get("/snapshot.jpg", port: port)
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "image/jpeg")
        #expect(response.headers["x-frame-sequence"] == "2", "the newest frame wins")
        let size = try #require(decodedJPEGSize(response.body), "not a decodable JPEG")
        #expect(size.widthPx == geometry.widthPx && size.heightPx == geometry.heightPx)
    }

    @Test func snapshotBeforeAnyFrameIs503() throws {
        let (server, port) = try startServer { $0.snapshotWaitNs = 100_000_000 }
        defer { server.stop() }
        let response = try TestHTTPClient.get("/snapshot.jpg", port: port)
        #expect(response.status == 503)
    }

    @Test func statsJSONCarriesStatsOverlaysAndDrops() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let geometry = FrameGeometry(widthPx: 64, heightPx: 48, chroma: .yuv420(.jpeg))
        let frame = FrameBuffer(geometry: geometry)
        frame.sequence = 41
        let quad = PreviewQuad(
            .init(xPx: 1, yPx: 2), .init(xPx: 30.5, yPx: 2), .init(xPx: 30, yPx: 20),
            .init(xPx: 1, yPx: 21), trackId: 9)
        server.metrics.dropped(reason: "busy")?.add(4)
        server.publish(
            frame: frame, overlays: [quad],
            stats: PreviewStats(
                outputFps: 29.5, lagMs: 33.3, inFlight: 1,
                model: "eccv16 \"v2\""))
        let response = try TestHTTPClient.get("/stats.json", port: port)
        #expect(response.headers["content-type"] == "application/json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(json["sequence"] as? Int == 41)
        #expect(json["widthPx"] as? Int == 64)
        #expect(json["outputFps"] as? Double == 29.5)
        #expect(json["model"] as? String == "eccv16 \"v2\"")
        #expect((json["drops"] as? [String: Any])?["busy"] as? Int == 4)
        let overlays = try #require(json["overlays"] as? [[String: Any]])
        #expect(overlays.count == 1)
        #expect(overlays.first?["trackId"] as? Int == 9)
        let corners = overlays.first?["corners"] as? [[Double]]
        #expect(corners?[1] == [30.5, 2])
    }

    @Test func streamDeliversSuccessiveJPEGParts() throws {
        let (server, port) = try startServer { $0.maxStreamFps = 1000 }
        defer { server.stop() }
        let publisher = SyntheticPublisher(server: server, count: 40, intervalNs: 20_000_000)
        let client = try TestHTTPClient(port: port)
        try client.send("GET /stream.mjpg HTTP/1.1\r\nHost: t\r\n\r\n")
        publisher.start()
        defer { publisher.join() }
        let head = try client.readResponse(readBody: false)
        #expect(head.status == 200)
        #expect(head.headers["content-type"] == "multipart/x-mixed-replace; boundary=colorcamframe")
        var sequences: [Int] = []
        for _ in 0..<5 {
            let partHead = String(decoding: try client.read(through: Array("\r\n\r\n".utf8)), as: UTF8.self)
            #expect(partHead.hasPrefix("--colorcamframe\r\nContent-Type: image/jpeg\r\n"))
            let fields = Dictionary(
                uniqueKeysWithValues: partHead.split(separator: "\r\n").dropFirst().compactMap {
                    line -> (String, String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (line[..<colon].lowercased(), String(line[line.index(after: colon)...].dropFirst()))
                })
            let length = try #require(fields["content-length"].flatMap(Int.init))
            let jpeg = try client.read(count: length)
            #expect(try client.read(count: 2) == [0x0D, 0x0A])
            let size = decodedJPEGSize(jpeg)
            #expect(size?.widthPx == 640 && size?.heightPx == 480)
            sequences.append(try #require(fields["x-frame-sequence"].flatMap(Int.init)))
        }
        #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "frames repeat or go back: \(sequences)")
    }

    @Test(arguments: [
        ("BLAH\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "x", count: 20_000) + "\r\n\r\n", 431),
        ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n", 414),
        ("GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505),
        ("POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", 405),
        ("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", 400)
    ])
    func malformedRequestsGetAnErrorAndAClose(request: String, status: Int) throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let bystander = try TestHTTPClient(port: port)
        try bystander.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try bystander.readResponse().status == 200)

        let client = try TestHTTPClient(port: port)
        try client.send(request)
        let response = try client.readResponse()
        #expect(response.status == status)
        #expect(response.headers["connection"] == "close")
        #expect(try client.readToEnd().isEmpty, "the server closes after an error")

        try bystander.send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try bystander.readResponse().status == 200, "other clients keep being served")
    }

    @Test func keepAliveServesPipelinedRequestsInOrder() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        let client = try TestHTTPClient(port: port)
        try client.send(
            "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\n"
                + "HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\nGET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        )
        #expect(try client.readResponse().status == 200)
        #expect(try client.readResponse().status == 404)
        let head = try client.readResponse(readBody: false)
        #expect(head.status == 200 && Int(head.headers["content-length"] ?? "") ?? 0 > 0)
        let last = try client.readResponse()
        #expect(last.status == 200 && last.bodyText == "ok\n")
        #expect(try client.readToEnd().isEmpty)
    }

    @Test func partialRequestTimesOutWith408() throws {
        let (server, port) = try startServer { $0.headerTimeoutNs = 200_000_000 }
        defer { server.stop() }
        let slowloris = try TestHTTPClient(port: port)
        try slowloris.send("GET / HTTP/1.1\r\nHost: a\r\nX-A: ")
        let silent = try TestHTTPClient(port: port)
        let response = try slowloris.readResponse()
        #expect(response.status == 408)
        #expect(try slowloris.readToEnd().isEmpty)
        #expect(try silent.readResponse().status == 408, "a connection that never sends is timed out too")
        #expect(try TestHTTPClient.get("/healthz", port: port).status == 200)
    }

    @Test func connectionsOverTheLimitAreRefusedWith503() throws {
        let (server, port) = try startServer { $0.maxConnections = 8 }
        defer { server.stop() }
        let held = try (0..<8).map { _ in try TestHTTPClient(port: port) }
        // Make sure the server has accepted the 8 before the 9th arrives.
        try held[7].send("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try held[7].readResponse().status == 200)
        let extra = try TestHTTPClient(port: port)
        #expect(try extra.readResponse().status == 503)
        drop(held)
    }

    private func drop(_ clients: [TestHTTPClient]) { _ = clients.count }

    @Test func thousandConnectionsOpenedAndDroppedLeaveTheServerServing() throws {
        let (server, port) = try startServer()
        defer { server.stop() }
        for index in 0..<1000 {
            let client = try TestHTTPClient(port: port)
            switch index % 4 {
            case 0: break  // connect and close
            case 1: try client.send("GET /stream.mjpg HTTP/1.1\r\nHost: a\r\n\r\n")  // stream, then vanish
            case 2: try client.send("GET / HTTP/1.1\r\nHo")  // half a head
            default: try client.send([0x16, 0x03, 0x01, 0x00])  // TLS hello garbage
            }
        }
        publishFrames(server, count: 2, geometry: FrameGeometry(widthPx: 64, heightPx: 48, chroma: .yuv420(.jpeg)))
        #expect(try TestHTTPClient.get("/healthz", port: port).status == 200)
        let snapshot = try TestHTTPClient.get("/snapshot.jpg", port: port)
        #expect(snapshot.status == 200 && decodedJPEGSize(snapshot.body) != nil)
        // All 1000 are gone from the server's books within a few loop turns (no leak of connection slots).
        var open = Int.max
        for _ in 0..<50 where open > 1 {
            usleep(20_000)
            let stats = try JSONSerialization.jsonObject(with: Data(TestHTTPClient.get("/stats.json", port: port).body))
            open = ((stats as? [String: Any])?["connections"] as? Int) ?? .max
        }
        #expect(open == 1, "connections left open: \(open)")
        #expect(server.metrics.previewStreams.current == 0)
    }

    @Test func aStalledStreamClientDoesNotHoldBackAFastOne() throws {
        let (server, port) = try startServer { $0.maxStreamFps = 1000 }
        defer { server.stop() }
        let slow = try TestHTTPClient(port: port, receiveBufferBytes: 4096)
        try slow.send("GET /stream.mjpg HTTP/1.1\r\nHost: a\r\n\r\n")
        let fast = try TestHTTPClient(port: port)
        try fast.send("GET /stream.mjpg HTTP/1.1\r\nHost: a\r\n\r\n")
        _ = try fast.readResponse(readBody: false)
        let frames = 60
        let publisher = SyntheticPublisher(server: server, count: frames, intervalNs: 20_000_000)
        publisher.start()
        var received = Set<Int>()
        while true {
            let partHead = String(decoding: try fast.read(through: Array("\r\n\r\n".utf8)), as: UTF8.self)
            let lines = partHead.split(separator: "\r\n")
            let length = Int(lines.first { $0.hasPrefix("Content-Length: ") }?.dropFirst(16) ?? "") ?? 0
            let sequence = Int(lines.first { $0.hasPrefix("X-Frame-Sequence: ") }?.dropFirst(18) ?? "") ?? -1
            _ = try fast.read(count: length + 2)
            received.insert(sequence)
            if sequence == frames - 1 { break }
        }
        publisher.join()
        // The slow client took at most one frame at a time; the rest were skipped for it, not queued.
        #expect(server.metrics.previewFramesSkipped.current > 0)
        #expect(received.count * 3 >= frames, "fast client got only \(received.count) of \(frames) frames")
    }

    @Test func nonLoopbackAddressWarns() throws {
        let warnings = Locked<[String]>([])
        let server = try PreviewServer(
            config: PreviewServerConfig(listenAddress: SocketAddress("0.0.0.0:0")!),
            warn: { message in warnings.withLock { $0.append(message) } })
        try server.start()
        server.stop()
        #expect(warnings.withLock { $0 }.contains { $0.contains("reachable from other machines") })
        let quiet = try PreviewServer(
            config: PreviewServerConfig(listenAddress: SocketAddress("127.0.0.1:0")!),
            warn: { message in warnings.withLock { $0.append("loopback: " + message) } })
        try quiet.start()
        quiet.stop()
        #expect(!warnings.withLock { $0 }.contains { $0.hasPrefix("loopback: ") })
    }

    @Test(arguments: ["127.0.0.1:8080", "[::1]:0", "localhost:1", "0.0.0.0:80"])
    func addressesParseAndPrint(text: String) throws {
        let address = try #require(SocketAddress(text))
        #expect(address.description == text.replacingOccurrences(of: "localhost", with: "127.0.0.1"))
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:99999", "host:80", "[::1:80", ":80"])
    func badAddressesAreRejected(text: String) {
        #expect(SocketAddress(text) == nil)
    }
}

@Suite(.serialized) struct PreviewPipeliningTests {
    @Test func thousandsOfPipelinedRequestsAreAnsweredInOrder() throws {
        var config = PreviewServerConfig(listenAddress: SocketAddress("127.0.0.1:0")!)
        config.maxConnections = 4
        let server = try PreviewServer(config: config, warn: { _ in })
        try server.start()
        defer { server.stop() }
        let port = try #require(server.boundAddress?.port)
        let client = try TestHTTPClient(port: port)
        let count = 2000
        var batch = ""
        for i in 0..<count { batch += "GET /healthz?\(i) HTTP/1.1\r\nHost: a\r\n\r\n" }
        batch += "GET /nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        let sender = try TestHTTPClient.Sender(client: client, bytes: Array(batch.utf8))
        for _ in 0..<count { #expect(try client.readResponse().status == 200) }
        #expect(try client.readResponse().status == 404)
        #expect(try client.readToEnd().isEmpty)
        sender.join()
        #expect(sender.error == nil)
    }
}
