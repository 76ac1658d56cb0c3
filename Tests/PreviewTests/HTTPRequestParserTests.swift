import Testing

@testable import Preview

private func feedAll(_ text: String, limits: HTTPRequestParser.Limits = .init()) -> HTTPRequestParser.Outcome {
    var parser = HTTPRequestParser(limits: limits)
    return parser.feed(Array(text.utf8))
}

private let simpleGet = "GET /stats.json?x=1 HTTP/1.1\r\nHost: localhost\r\nUser-Agent:  test \r\nAccept: */*\r\n\r\n"

@Test func parsesAWholeHead() throws {
    guard case .complete(let head, let leftover) = feedAll(simpleGet) else {
        Issue.record("expected a complete head")
        return
    }
    #expect(head.method == "GET")
    #expect(head.target == "/stats.json?x=1")
    #expect(head.path == "/stats.json")
    #expect(head.version == .http1_1)
    #expect(head.headers.count == 3)
    #expect(head.header("user-agent") == "test")
    #expect(head.keepAlive)
    #expect(leftover.isEmpty)
}

@Test(arguments: [1, 2, 3, 5, 7, 13, 64])
func fragmentedInputGivesTheSameHead(chunkSize: Int) throws {
    let bytes = Array(simpleGet.utf8)
    guard case .complete(let expected, _) = feedAll(simpleGet) else {
        Issue.record("whole head did not parse")
        return
    }
    var parser = HTTPRequestParser()
    var result: HTTPRequestParser.Outcome = .incomplete
    var start = 0
    while start < bytes.count {
        let end = min(bytes.count, start + chunkSize)
        result = parser.feed(bytes[start..<end])
        if end < bytes.count { #expect(result == .incomplete, "complete too early at byte \(end)") }
        start = end
    }
    #expect(result == .complete(expected, leftover: []))
}

@Test func keepsPipelinedBytesAndResets() throws {
    var parser = HTTPRequestParser()
    let two = "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHo"
    guard case .complete(let first, let leftover) = parser.feed(Array(two.utf8)) else {
        Issue.record("first head did not parse")
        return
    }
    #expect(first.target == "/a")
    #expect(String(decoding: leftover, as: UTF8.self) == "GET /b HTTP/1.1\r\nHo")
    #expect(parser.feed(leftover) == .incomplete)
    guard case .complete(let second, _) = parser.feed(Array("st: h\r\n\r\n".utf8)) else {
        Issue.record("second head did not parse")
        return
    }
    #expect(second.target == "/b")
}

@Test func acceptsBareLineFeedsAndLeadingEmptyLines() {
    guard case .complete(let head, _) = feedAll("\r\n\nGET / HTTP/1.0\nX: 1\n\n") else {
        Issue.record("expected a complete head")
        return
    }
    #expect(head.version == .http1_0)
    #expect(head.header("x") == "1")
    #expect(!head.keepAlive, "HTTP/1.0 closes unless asked")
}

@Test(arguments: [
    ("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", false),
    ("GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, Close\r\n\r\n", false),
    ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
    ("GET / HTTP/1.1\r\nHost: a\r\n\r\n", true)
])
func keepAliveFollowsVersionAndConnectionHeader(text: String, keepAlive: Bool) {
    guard case .complete(let head, _) = feedAll(text) else {
        Issue.record("expected a complete head")
        return
    }
    #expect(head.keepAlive == keepAlive)
}

@Test(arguments: [
    ("GET /\r\n\r\n", 400),
    ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("GET / HTTP/1.1 extra\r\nHost: a\r\n\r\n", 400),
    ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("GET ftp://x/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("GET x/y HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ("GET / HTTX/1.1\r\nHost: a\r\n\r\n", 400),
    ("GET / HTTP/1.x\r\nHost: a\r\n\r\n", 400),
    ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
    ("GET / HTTP/1.1\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: a\r\nBad Name: 1\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: a\r\nX : 1\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  folded\r\n\r\n", 400),
    ("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{01}b\r\n\r\n", 400),
    ("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\r\n\r\n", 400)
])
func rejectsBadHeads(text: String, status: Int) {
    guard case .failed(let error) = feedAll(text) else {
        Issue.record("accepted \(text.debugDescription)")
        return
    }
    #expect(error.statusCode == status, "\(text.debugDescription): \(error)")
}

@Test func requestLineLimitFailsBeforeTheLineEnds() {
    var parser = HTTPRequestParser(limits: .init(maxRequestLineBytes: 64, maxHeaderBytes: 1024, maxHeaderCount: 8))
    let outcome = parser.feed(Array(("GET /" + String(repeating: "a", count: 100)).utf8))
    #expect(outcome == .failed(.requestLineTooLong(limit: 64)))
    // The parser is reset and parses the next head normally.
    guard case .complete = parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)) else {
        Issue.record("parser not usable after a failure")
        return
    }
}

@Test(arguments: [63, 64])
func requestLineAtTheLimitIsAccepted(length: Int) {
    let line = "GET /" + String(repeating: "a", count: length - 14) + " HTTP/1.1"
    #expect(line.utf8.count == length)
    let outcome = feedAll(
        line + "\r\nHost: a\r\n\r\n",
        limits: .init(
            maxRequestLineBytes: 64, maxHeaderBytes: 1024,
            maxHeaderCount: 8))
    guard case .complete(let head, _) = outcome else {
        Issue.record("line of \(line.utf8.count) bytes rejected: \(outcome)")
        return
    }
    #expect(head.method == "GET")
}

@Test func headerSectionSizeLimitGives431() {
    let limits = HTTPRequestParser.Limits(maxRequestLineBytes: 256, maxHeaderBytes: 512, maxHeaderCount: 100)
    let text = "GET / HTTP/1.1\r\nHost: a\r\nCookie: " + String(repeating: "c", count: 600)
    var parser = HTTPRequestParser(limits: limits)
    guard case .failed(let error) = parser.feed(Array(text.utf8)) else {
        Issue.record("oversized header accepted or still waiting")
        return
    }
    #expect(error.statusCode == 431)
}

@Test(arguments: [(8, true), (9, false)])
func headerCountLimit(count: Int, accepted: Bool) {
    let limits = HTTPRequestParser.Limits(maxRequestLineBytes: 256, maxHeaderBytes: 4096, maxHeaderCount: 9)
    var text = "GET / HTTP/1.1\r\nHost: a\r\n"
    for i in 0..<count { text += "X-\(i): v\r\n" }
    let outcome = feedAll(text + "\r\n", limits: limits)
    if accepted {
        guard case .complete(let head, _) = outcome else {
            Issue.record("\(count + 1) headers rejected: \(outcome)")
            return
        }
        #expect(head.headers.count == count + 1)
    } else {
        guard case .failed(let error) = outcome else {
            Issue.record("\(count + 1) headers accepted")
            return
        }
        #expect(error.statusCode == 431)
    }
}

@Test func memoryStaysBoundedUnderEndlessHeaders() throws {
    // A client that streams header lines forever is cut off at the limit, not buffered without end.
    var parser = HTTPRequestParser(limits: .init(maxRequestLineBytes: 128, maxHeaderBytes: 2048, maxHeaderCount: 1000))
    _ = parser.feed(Array("GET / HTTP/1.1\r\n".utf8))
    var failedAfterBytes: Int?
    for i in 0..<1000 {
        if case .failed(let error) = parser.feed(Array("X-Long: aaaaaaaaaaaaaaaaaaaa\r\n".utf8)) {
            #expect(error.statusCode == 431)
            failedAfterBytes = 16 + (i + 1) * 30
            break
        }
    }
    let bytes = try #require(failedAfterBytes)
    #expect(bytes <= 2048 + 30)
}

@Test(arguments: [
    ("http://cam.local:8080/stats.json?a=1", "/stats.json?a=1"), ("HTTP://x", "/"),
    ("https://x/snapshot.jpg", "/snapshot.jpg")
])
func absoluteFormIsReducedToItsPath(target: String, path: String) {
    guard case .complete(let head, _) = feedAll("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n") else {
        Issue.record("absolute form \(target) rejected")
        return
    }
    #expect(head.target == path)
}
