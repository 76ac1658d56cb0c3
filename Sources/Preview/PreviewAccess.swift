/// The preview's access token: how one is made, which tokens are usable, and how a request proves it holds one.
///
/// A request carries the token in one of three ways:
/// - the `colorcam_token` cookie, which a login sets: `GET /any/path?token=TOKEN` answers 303 See Other to the same
///   path without the `token` parameter, with `Set-Cookie: colorcam_token=TOKEN; Path=/; HttpOnly; SameSite=Lax`;
/// - an `Authorization: Bearer TOKEN` header (scripts, Prometheus' `authorization.credentials_file`);
/// - nothing else: every other request is refused with 401 (see `PreviewEventLoop.handle`).
///
/// Every comparison with the secret is `constantTimeEquals`: its time depends on the secret's length only, never
/// on where a candidate first differs. Everything here is a pure function of its arguments (any thread).
public enum PreviewAccess {
    /// The cookie a login sets and later requests send back.
    public static let cookieName = "colorcam_token"
    /// The query parameter of a login URL (`/?token=TOKEN`).
    public static let queryName = "token"
    /// The realm in `WWW-Authenticate: Bearer realm="colorcam"`.
    public static let realm = "colorcam"
    /// Lengths a token may have, in characters. The lower bound keeps a hand-made token from being guessable by
    /// trying (16 random characters from the allowed set carry about 96 bits); the upper one keeps a login URL far
    /// below the request-line limit (8 KiB).
    public static let tokenLengths = 16...256
    /// Bytes of randomness in a generated token (hex-encoded, so twice as many characters).
    public static let generatedByteCount = 32

    /// A new token: `byteCount` bytes from `generator` as lower-case hex.
    ///
    /// The default generator is the standard library's `SystemRandomNumberGenerator`, which on Linux reads the
    /// kernel's RNG with getrandom(2) (`/dev/urandom` on kernels without it) and traps rather than return weak
    /// bytes. Other generators are for tests.
    /// - Parameter byteCount: at least 16 (128 bits); 32 (256 bits) unless a test asks otherwise.
    public static func generateToken<G: RandomNumberGenerator>(
        byteCount: Int = generatedByteCount,
        using generator: inout G
    ) -> String {
        precondition(byteCount >= 16, "an access token needs at least 128 bits")
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(2 * byteCount)
        for _ in 0..<byteCount {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A new 256-bit token from the kernel's RNG (see `generateToken(byteCount:using:)`).
    public static func generateToken() -> String {
        var system = SystemRandomNumberGenerator()
        return generateToken(using: &system)
    }

    /// Why `token` cannot be used, as the end of a one-line message ("has 5 characters; at least 16 are needed"),
    /// or nil when it can. A usable token has `tokenLengths` characters, each an unreserved URL character
    /// (`A-Z a-z 0-9 - . _ ~`), so it travels unchanged in a URL query, a cookie and a Bearer header, and can never
    /// break a response header it is written into.
    public static func problem(with token: String) -> String? {
        let bytes = Array(token.utf8)
        if let bad = bytes.firstIndex(where: { !isUnreserved($0) }) {
            let byte = bytes[bad]
            let hex = String(byte, radix: 16, uppercase: true)
            let shown =
                byte >= 0x20 && byte < 0x7F
                ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + (byte < 16 ? "0" : "") + hex
            return "has \(shown) at byte \(bad + 1); only A-Z a-z 0-9 - . _ ~ are allowed"
        }
        if !tokenLengths.contains(bytes.count) {
            return "has \(bytes.count) characters; \(tokenLengths.lowerBound) to \(tokenLengths.upperBound) are needed"
        }
        return nil
    }

    /// Whether `candidate` equals `secret`, in time that depends on `secret.count` only.
    ///
    /// Every byte of `secret` is compared (against the candidate's byte at that index, or 0 past its end) and the
    /// differences are OR-ed together; the length difference is OR-ed in too. There is no early exit, neither on the
    /// first differing byte nor on a length mismatch, so the time reveals neither where a guess goes wrong nor how
    /// long the secret is relative to the guess.
    public static func constantTimeEquals(_ candidate: some Collection<UInt8>, _ secret: [UInt8]) -> Bool {
        var difference = UInt(bitPattern: candidate.count ^ secret.count)
        var index = candidate.startIndex
        for position in 0..<secret.count {
            var byte: UInt8 = 0
            if index != candidate.endIndex {
                byte = candidate[index]
                index = candidate.index(after: index)
            }
            difference |= UInt(byte ^ secret[position])
        }
        return difference == 0
    }

    /// What a request's credentials decide.
    public enum Decision: Equatable, Sendable {
        /// A right cookie or Bearer header: serve the request.
        case allowed
        /// A login with the right token: answer 303 See Other to `location` (the same path and query less the token)
        /// and set the cookie.
        case login(location: String)
        /// No credentials, or a wrong one (including a wrong login: it never sets a cookie).
        case denied
    }

    /// Checks a request head against `secret` (the token's UTF-8 bytes).
    ///
    /// A `token` query parameter makes the request a login, decided by that parameter alone (all of them, when it
    /// is repeated): right gives `.login`, wrong `.denied` whatever else the request carries. Otherwise any
    /// `Authorization: Bearer` header or `colorcam_token` cookie equal to the secret gives `.allowed`.
    public static func decide(_ head: HTTPRequestHead, secret: [UInt8]) -> Decision {
        let (path, query) = splitTarget(head.target)
        var loginValues: [[UInt8]] = []
        var kept: [Substring] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            if percentDecoded(name.utf8) == Array(queryName.utf8) {
                loginValues.append(percentDecoded(pair.utf8.dropFirst(name.utf8.count + 1)))
            } else if !pair.isEmpty {
                kept.append(pair)
            }
        }
        if !loginValues.isEmpty {
            var allRight = true
            for value in loginValues { allRight = constantTimeEquals(value, secret) && allRight }
            guard allRight else { return .denied }
            return .login(location: loginLocation(path: path, keptQuery: kept))
        }
        var allowed = false
        for (name, value) in head.headers {
            switch name.lowercased() {
            case "authorization":
                if let token = bearerToken(in: value) { allowed = constantTimeEquals(token.utf8, secret) || allowed }
            case "cookie":
                for token in cookieValues(named: cookieName, in: value) {
                    allowed = constantTimeEquals(token.utf8, secret) || allowed
                }
            default:
                break
            }
        }
        return allowed ? .allowed : .denied
    }

    /// The `Set-Cookie` value a login answers with.
    public static func loginCookie(token: String) -> String {
        "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Lax"
    }

    // MARK: parsing pieces (internal for tests)

    /// The target's path and its query (empty when there is none).
    static func splitTarget(_ target: String) -> (path: Substring, query: Substring) {
        guard let mark = target.firstIndex(of: "?") else { return (target[...], "") }
        return (target[..<mark], target[target.index(after: mark)...])
    }

    /// Where a login redirects: the path (always one leading `/`, so `//host` cannot become another site) and the
    /// query parameters other than `token`, in their order and spelling.
    static func loginLocation(path: Substring, keptQuery: [Substring]) -> String {
        let trimmed = path.drop(while: { $0 == "/" })
        var location = path.hasPrefix("/") ? "/" + trimmed : "/"
        if !keptQuery.isEmpty { location += "?" + keptQuery.joined(separator: "&") }
        return location
    }

    /// The credentials of an `Authorization: Bearer TOKEN` value (scheme case-insensitive), or nil for other schemes.
    static func bearerToken(in value: String) -> Substring? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].drop(while: { $0 == " " })
        return token.isEmpty ? nil : token
    }

    /// The values of every cookie called `name` in a `Cookie` header value (`a=1; name=v; b=2`), quotes removed.
    static func cookieValues(named name: String, in header: String) -> [Substring] {
        header.split(separator: ";").compactMap { pair in
            let trimmed = pair.drop(while: { $0 == " " || $0 == "\t" })
            guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { return nil }
            var value = trimmed[trimmed.index(after: equals)...]
            while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
            if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
                value = value.dropFirst().dropLast()
            }
            return value
        }
    }

    /// `%XX` escapes decoded; a malformed escape is kept as it is (it then fails the comparison).
    static func percentDecoded(_ text: some Collection<UInt8>) -> [UInt8] {
        let bytes = Array(text)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
