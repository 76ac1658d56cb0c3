import Testing

@testable import Preview

@Test func httpDateIsIMFFixdate() {
    #expect(HTTPResponseHead.httpDate(epochSeconds: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
}

@Test func textResponseHasLengthConnectionAndBody() {
    let text = String(
        decoding: HTTPResponseHead.textResponse(status: 431, body: "too big\n", keepAlive: false),
        as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
    #expect(text.contains("\r\nContent-Length: 8\r\n"))
    #expect(text.contains("\r\nConnection: close\r\n"))
    #expect(text.hasSuffix("\r\n\r\ntoo big\n"))
    let head = String(
        decoding: HTTPResponseHead.textResponse(
            status: 200, body: "ok\n", keepAlive: true,
            includeBody: false), as: UTF8.self)
    #expect(head.hasSuffix("Connection: keep-alive\r\n\r\n"), "HEAD gets the head only")
    #expect(head.contains("Content-Length: 3\r\n"), "HEAD keeps the GET length")
}
