/// Why a request head was rejected, and the status code the server answers with before closing.
public enum HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request line is not `METHOD SP TARGET SP HTTP/x.y` (400).
    case badRequestLine(String)
    /// The request line is longer than `Limits.maxRequestLineBytes` (414).
    case requestLineTooLong(limit: Int)
    /// A header line is malformed: no colon, space before the colon, bad name, control bytes, folding (400).
    case badHeader(String)
    /// The header section is longer than `Limits.maxHeaderBytes` or has more than `Limits.maxHeaderCount` fields (431).
    case headersTooLarge(String)
    /// `HTTP/x.y` other than 1.0 / 1.1 (505).
    case unsupportedVersion(String)
    /// An HTTP/1.1 request without exactly one `Host` header (400, RFC 9112 §3.2).
    case missingHost

    /// The status code to answer with.
    public var statusCode: Int {
        switch self {
        case .badRequestLine, .badHeader, .missingHost: return 400
        case .requestLineTooLong: return 414
        case .headersTooLarge: return 431
        case .unsupportedVersion: return 505
        }
    }

    public var description: String {
        switch self {
        case .badRequestLine(let why): return "bad request line: \(why)"
        case .requestLineTooLong(let limit): return "request line longer than \(limit) bytes"
        case .badHeader(let why): return "bad header: \(why)"
        case .headersTooLarge(let why): return "header section too large: \(why)"
        case .unsupportedVersion(let version): return "unsupported HTTP version \(version)"
        case .missingHost: return "HTTP/1.1 request without exactly one Host header"
        }
    }
}

/// An incremental HTTP/1.x request-head parser: feed it bytes as they arrive, in any fragmentation; it answers
/// `.incomplete` until a whole head (request line, header fields, empty line) has arrived, then `.complete` with
/// the bytes that followed the head (a pipelined next request), or `.failed` as soon as the input cannot become a
/// valid head or exceeds a limit. After `.complete` or `.failed` the parser is reset and ready for the next head.
///
/// Lines end in CRLF; a bare LF is accepted as RFC 9112 §2.2 allows. Bodies are not parsed (the preview server takes
/// none). Memory is bounded by `limits.maxHeaderBytes` plus one `feed` call's bytes.
/// Threading: a value type; use from one thread at a time.
public struct HTTPRequestParser: Sendable {
    /// Size limits, checked while bytes arrive (so an oversized head fails before it is complete).
    public struct Limits: Sendable {
        /// Longest request line, excluding its line ending.
        public var maxRequestLineBytes: Int
        /// Longest head (request line + header fields + line endings).
        public var maxHeaderBytes: Int
        /// Most header fields.
        public var maxHeaderCount: Int

        public init(maxRequestLineBytes: Int = 8 * 1024, maxHeaderBytes: Int = 16 * 1024, maxHeaderCount: Int = 64) {
            self.maxRequestLineBytes = maxRequestLineBytes
            self.maxHeaderBytes = maxHeaderBytes
            self.maxHeaderCount = maxHeaderCount
        }
    }

    /// The result of one `feed`.
    public enum Outcome: Sendable, Equatable {
        case incomplete
        /// A whole head; `leftover` are the bytes after it, not yet parsed.
        case complete(HTTPRequestHead, leftover: [UInt8])
        case failed(HTTPParseError)
    }

    public let limits: Limits
    /// Bytes of the head received so far.
    private var buffer: [UInt8] = []
    /// Where the current (unfinished) line starts in `buffer`.
    private var lineStart = 0
    /// Lines completed so far, as ranges of `buffer` without their line endings.
    private var lines: [Range<Int>] = []

    public init(limits: Limits = Limits()) {
        self.limits = limits
        buffer.reserveCapacity(1024)
    }

    /// Whether some bytes of a head have arrived (used to tell an idle keep-alive connection from a slow request).
    public var hasPartialHead: Bool { !buffer.isEmpty }

    /// Feeds the next bytes received.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> Outcome {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            // Ignore empty lines before a request line (RFC 9112 §2.2 robustness).
            if buffer.isEmpty && (byte == 0x0D || byte == 0x0A) { continue }
            buffer.append(byte)
            if byte == 0x0A {
                var end = buffer.count - 1
                if end > lineStart && buffer[end - 1] == 0x0D { end -= 1 }
                let line = lineStart..<end
                lineStart = buffer.count
                if line.isEmpty {
                    let outcome = finish()
                    let leftover = Array(bytes[index...])
                    reset()
                    if case .complete(let head, _) = outcome { return .complete(head, leftover: leftover) }
                    return outcome
                }
                lines.append(line)
                if lines.count - 1 > limits.maxHeaderCount {
                    reset()
                    return .failed(.headersTooLarge("more than \(limits.maxHeaderCount) header fields"))
                }
            }
            if lines.isEmpty && buffer.count - lineStart > limits.maxRequestLineBytes + 1 {
                reset()
                return .failed(.requestLineTooLong(limit: limits.maxRequestLineBytes))
            }
            if buffer.count > limits.maxHeaderBytes {
                reset()
                return .failed(.headersTooLarge("more than \(limits.maxHeaderBytes) bytes"))
            }
        }
        return .incomplete
    }

    private mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        lines.removeAll(keepingCapacity: true)
        lineStart = 0
    }

    private func finish() -> Outcome {
        guard let requestLine = lines.first else { return .failed(.badRequestLine("empty")) }
        if requestLine.count > limits.maxRequestLineBytes {
            return .failed(.requestLineTooLong(limit: limits.maxRequestLineBytes))
        }
        let head: HTTPRequestHead
        switch parseRequestLine(buffer[requestLine]) {
        case .success(let parsed): head = parsed
        case .failure(let error): return .failed(error)
        }
        var result = head
        for line in lines.dropFirst() {
            switch parseHeaderLine(buffer[line]) {
            case .success(let field): result.headers.append(field)
            case .failure(let error): return .failed(error)
            }
        }
        if result.version == .http1_1 {
            let hosts = result.headers.filter { $0.name.lowercased() == "host" }.count
            if hosts != 1 { return .failed(.missingHost) }
        }
        return .complete(result, leftover: [])
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result<HTTPRequestHead, HTTPParseError> {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .failure(.badRequestLine("expected 'METHOD TARGET VERSION' separated by single spaces"))
        }
        let method = parts[0], version = parts[2]
        var target = parts[1]
        guard !method.isEmpty, method.allSatisfy(Self.isTokenByte) else {
            return .failure(.badRequestLine("method is not a token"))
        }
        // Absolute form (`http://host/path`, RFC 9112 §3.2.2: servers must accept it) is reduced to its path.
        for scheme in ["http://", "https://"] {
            let prefix = Array(scheme.utf8)
            if target.count >= prefix.count,
                zip(target.prefix(prefix.count), prefix).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
            {
                let afterScheme = target.dropFirst(prefix.count)
                guard let slash = afterScheme.firstIndex(of: UInt8(ascii: "/")) else {
                    target = ArraySlice("/".utf8)
                    break
                }
                target = target[slash...]
                break
            }
        }
        // Origin form (plus `*` for OPTIONS); visible ASCII, no spaces or controls.
        guard let first = target.first, first == UInt8(ascii: "/") || (target.count == 1 && first == UInt8(ascii: "*")),
            target.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            return .failure(.badRequestLine("target is not an origin-form path"))
        }
        let versionText = String(decoding: version, as: UTF8.self)
        let prefix = Array("HTTP/".utf8)
        guard version.count == 8, Array(version.prefix(5)) == prefix,
            let major = Int(String(decoding: version[version.startIndex + 5..<version.startIndex + 6], as: UTF8.self)),
            version[version.startIndex + 6] == UInt8(ascii: "."),
            let minor = Int(String(decoding: version[version.startIndex + 7..<version.startIndex + 8], as: UTF8.self))
        else {
            return .failure(.badRequestLine("version is not HTTP/x.y"))
        }
        guard major == 1, minor == 0 || minor == 1 else { return .failure(.unsupportedVersion(versionText)) }
        return .success(
            HTTPRequestHead(
                method: String(decoding: method, as: UTF8.self),
                target: String(decoding: target, as: UTF8.self),
                version: HTTPVersion(major: major, minor: minor),
                headers: []
            ))
    }

    private func parseHeaderLine(_ line: ArraySlice<UInt8>) -> Result<(name: String, value: String), HTTPParseError> {
        if let first = line.first, first == 0x20 || first == 0x09 {
            return .failure(.badHeader("obsolete line folding"))
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            return .failure(.badHeader("no colon in header line"))
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(Self.isTokenByte) else {
            return .failure(.badHeader("field name is empty or not a token (whitespace before the colon?)"))
        }
        var value = line[(colon + 1)...]
        while let f = value.first, f == 0x20 || f == 0x09 { value = value.dropFirst() }
        while let l = value.last, l == 0x20 || l == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            return .failure(.badHeader("control byte in the value of '\(String(decoding: name, as: UTF8.self))'"))
        }
        return .success((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
    }
}
