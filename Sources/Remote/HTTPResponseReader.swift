/// One HTTP/1.1 response as the client reads it: status, headers (names lowercased), body.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]
    /// Whether the connection may carry the next request (HTTP/1.1 without `Connection: close`, a framed body).
    public var keepAlive: Bool

    public init(status: Int, headers: [String: String], body: [UInt8], keepAlive: Bool) {
        self.status = status
        self.headers = headers
        self.body = body
        self.keepAlive = keepAlive
    }
}

/// Parses an HTTP/1.1 response from the bytes received so far: `Content-Length`, `chunked`, or (no framing) up to
/// the peer's close. Pure and stateless (the client re-parses its buffer as bytes arrive; bodies are a few hundred
/// KiB), so it can be fuzzed on its own (`tools/fuzz`). Every malformed or oversized input is an `ExchangeFailure`
/// `.badResponse` saying what and at which byte offset; it never traps.
public enum HTTPResponseReader {
    public struct Limits: Sendable {
        /// Status line + headers.
        public var maxHeadBytes = 16 * 1024
        /// The body; a larger `Content-Length` is refused before it is read.
        public var maxBodyBytes = 64 * 1024 * 1024

        public init(maxHeadBytes: Int = 16 * 1024, maxBodyBytes: Int = 64 * 1024 * 1024) {
            self.maxHeadBytes = maxHeadBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// The response at the start of `bytes` and how many bytes it used; nil when more bytes are needed.
    /// - Parameter closed: the peer closed the connection after `bytes` (ends a body without framing; makes a
    ///   partial response an error instead of "need more").
    public static func parse(_ bytes: ArraySlice<UInt8>, closed: Bool, limits: Limits = Limits()) throws
        -> (response: HTTPResponse, consumed: Int)?
    {
        let start = bytes.startIndex
        guard let headEnd = findHeadEnd(bytes, limit: limits.maxHeadBytes) else {
            if bytes.count > limits.maxHeadBytes {
                throw ExchangeFailure(.badResponse, "response head longer than \(limits.maxHeadBytes) bytes")
            }
            if closed { throw truncated(bytes.count, "in the response head") }
            return nil
        }
        let headText = String(decoding: bytes[start..<(start + headEnd)], as: UTF8.self)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst()
        let statusParts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), statusParts[1].count == 3,
            let status = Int(statusParts[1]), (100...599).contains(status)
        else {
            throw ExchangeFailure(.badResponse, "not an HTTP/1.x status line at byte 0: '\(statusLine.prefix(60))'")
        }
        var headers: [String: String] = [:]
        var offset = statusLine.utf8.count + 2
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw ExchangeFailure(.badResponse, "malformed header line at byte \(offset): '\(line.prefix(60))'")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            if let previous = headers[name] {
                guard name != "content-length" || previous == value else {
                    throw ExchangeFailure(.badResponse, "two different Content-Length headers")
                }
                headers[name] = name == "content-length" ? value : previous + ", " + value
            } else {
                headers[name] = value
            }
            offset += line.utf8.count + 2
        }
        let http10 = statusParts[0] == "HTTP/1.0"
        let connection = headers["connection"]?.lowercased() ?? ""
        var keepAlive = http10 ? connection.contains("keep-alive") : !connection.contains("close")
        let bodyStart = start + headEnd + 4
        let noBody = status == 204 || status == 304 || (100...199).contains(status)
        if noBody {
            return (HTTPResponse(status: status, headers: headers, body: [], keepAlive: keepAlive), headEnd + 4)
        }
        if let encoding = headers["transfer-encoding"]?.lowercased(), encoding != "identity" {
            guard encoding == "chunked" else {
                throw ExchangeFailure(.badResponse, "unsupported Transfer-Encoding '\(encoding)'")
            }
            guard let (body, end) = try dechunk(bytes, from: bodyStart, limits: limits) else {
                if closed { throw truncated(bytes.count, "in a chunked body") }
                return nil
            }
            return (HTTPResponse(status: status, headers: headers, body: body, keepAlive: keepAlive), end - start)
        }
        if let lengthText = headers["content-length"] {
            guard !lengthText.isEmpty, lengthText.allSatisfy(\.isASCIIDigit), lengthText.count <= 18,
                let length = Int(lengthText)
            else {
                throw ExchangeFailure(.badResponse, "Content-Length '\(lengthText.prefix(40))' is not a byte count")
            }
            guard length <= limits.maxBodyBytes else {
                throw ExchangeFailure(
                    .badResponse, "Content-Length \(length) exceeds the \(limits.maxBodyBytes)-byte limit")
            }
            guard bytes.endIndex - bodyStart >= length else {
                if closed {
                    throw truncated(bytes.count, "\(bytes.endIndex - bodyStart) of \(length) body bytes received")
                }
                return nil
            }
            let body = Array(bytes[bodyStart..<(bodyStart + length)])
            return (
                HTTPResponse(status: status, headers: headers, body: body, keepAlive: keepAlive),
                bodyStart + length - start
            )
        }
        // No framing: the body runs to the close, and the connection cannot be reused.
        keepAlive = false
        guard bytes.endIndex - bodyStart <= limits.maxBodyBytes else {
            throw ExchangeFailure(.badResponse, "unframed body exceeds the \(limits.maxBodyBytes)-byte limit")
        }
        guard closed else { return nil }
        return (
            HTTPResponse(status: status, headers: headers, body: Array(bytes[bodyStart...]), keepAlive: false),
            bytes.count
        )
    }

    /// Offset of the `\r\n\r\n` that ends the head, searched within `limit` bytes.
    static func findHeadEnd(_ bytes: ArraySlice<UInt8>, limit: Int) -> Int? {
        let end = min(bytes.endIndex, bytes.startIndex + limit + 4)
        var i = bytes.startIndex
        while i + 3 < end {
            if bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
                return i - bytes.startIndex
            }
            i += 1
        }
        return nil
    }

    /// The decoded body of a chunked message starting at `from`, and the index after its trailer; nil if incomplete.
    static func dechunk(_ bytes: ArraySlice<UInt8>, from: Int, limits: Limits) throws -> ([UInt8], Int)? {
        var body: [UInt8] = []
        var i = from
        while true {
            guard let lineEnd = lineEnd(bytes, from: i, limit: 1024) else {
                if bytes.endIndex - i > 1024 {
                    throw ExchangeFailure(.badResponse, "chunk size line too long at byte \(i - bytes.startIndex)")
                }
                return nil
            }
            let sizeText = String(decoding: bytes[i..<lineEnd], as: UTF8.self)
            let hex = sizeText.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces() } ?? ""
            guard !hex.isEmpty, hex.count <= 15, let size = Int(hex, radix: 16), size >= 0 else {
                throw ExchangeFailure(
                    .badResponse,
                    "bad chunk size '\(sizeText.prefix(20))' at byte \(i - bytes.startIndex)")
            }
            guard body.count + size <= limits.maxBodyBytes else {
                throw ExchangeFailure(.badResponse, "chunked body exceeds the \(limits.maxBodyBytes)-byte limit")
            }
            i = lineEnd + 2
            if size == 0 {
                // Trailer lines up to an empty line.
                while true {
                    guard let end = self.lineEnd(bytes, from: i, limit: limits.maxHeadBytes) else { return nil }
                    if end == i { return (body, end + 2) }
                    i = end + 2
                }
            }
            guard bytes.endIndex - i >= size + 2 else { return nil }
            body.append(contentsOf: bytes[i..<(i + size)])
            guard bytes[i + size] == 13, bytes[i + size + 1] == 10 else {
                throw ExchangeFailure(.badResponse, "chunk not followed by CRLF at byte \(i + size - bytes.startIndex)")
            }
            i += size + 2
        }
    }

    /// Index of the `\r\n` ending the line at `from`, within `limit` bytes; nil when not there yet.
    static func lineEnd(_ bytes: ArraySlice<UInt8>, from: Int, limit: Int) -> Int? {
        var i = from
        let end = min(bytes.endIndex, from + limit + 2)
        while i + 1 < end {
            if bytes[i] == 13 && bytes[i + 1] == 10 { return i }
            i += 1
        }
        return nil
    }

    static func truncated(_ count: Int, _ what: String) -> ExchangeFailure {
        ExchangeFailure(.badResponse, "connection closed after \(count) bytes: truncated response (\(what))")
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let text = String(self)
        guard let first = text.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = text.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(text[first...last])
    }
}
