import ColorcamCore
import Testing

@testable import Preview

/// A generator that counts (not random at all), so a generated token can be checked against its bytes.
private struct CountingGenerator: RandomNumberGenerator {
    var value: UInt64
    mutating func next() -> UInt64 {
        value &+= 0x0123_4567_89AB_CDEF
        return value
    }
}

private let secret = Array("0123456789abcdef0123456789abcdef".utf8)

private func head(_ target: String, _ headers: [(String, String)] = []) -> HTTPRequestHead {
    HTTPRequestHead(
        method: "GET", target: target, version: .http1_1,
        headers: [("Host", "t")] + headers.map { (name: $0.0, value: $0.1) })
}

@Suite struct PreviewAccessTests {
    @Test func equalBytesCompareEqual() {
        #expect(PreviewAccess.constantTimeEquals(secret, secret))
        #expect(PreviewAccess.constantTimeEquals(secret[...], secret), "any collection of bytes")
        #expect(PreviewAccess.constantTimeEquals([UInt8](), []))
    }

    @Test(arguments: [0, 1, 15, 31])
    func oneDifferingByteAnywhereCompareUnequal(position: Int) {
        var candidate = secret
        candidate[position] ^= 0x01
        #expect(!PreviewAccess.constantTimeEquals(candidate, secret))
    }

    @Test(arguments: [0, 1, 16, 31, 33, 64])
    func differentLengthsCompareUnequal(length: Int) {
        // Prefixes of the secret, and the secret followed by more bytes: equal as far as both go.
        let candidate = (0..<length).map { secret[$0 % secret.count] }
        #expect(!PreviewAccess.constantTimeEquals(candidate, secret))
        #expect(!PreviewAccess.constantTimeEquals(secret, candidate), "either side may be the longer")
    }

    @Test func aLengthDifferenceIsNotHiddenByWrapAround() {
        // Lengths that differ by a multiple of 256 (or any power of two) still compare unequal.
        let candidate = secret + [UInt8](repeating: 0, count: 256)
        #expect(!PreviewAccess.constantTimeEquals(candidate, secret))
        #expect(!PreviewAccess.constantTimeEquals([UInt8](), [0]), "a missing byte counts as 0 and still differs")
    }

    @Test func generatedTokensAreLongHexAndUsable() {
        var seeded = CountingGenerator(value: 7)
        let token = PreviewAccess.generateToken(using: &seeded)
        #expect(token.count == 2 * PreviewAccess.generatedByteCount)
        #expect(token.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(PreviewAccess.problem(with: token) == nil)
        var same = CountingGenerator(value: 7)
        #expect(PreviewAccess.generateToken(using: &same) == token, "the bytes come from the generator")
        let system = (0..<4).map { _ in PreviewAccess.generateToken() }
        #expect(Set(system).count == 4)
        #expect(system.allSatisfy { $0.count == 64 && PreviewAccess.problem(with: $0) == nil })
    }

    @Test(arguments: [
        ("short", "has 5 characters; 16 to 256 are needed"),
        (String(repeating: "a", count: 257), "has 257 characters; 16 to 256 are needed"),
        ("abcdefgh ijklmnopq", "has ' ' at byte 9"),
        ("abcdefghijklmnop\r\nX-Evil: 1", "has byte 0x0D at byte 17"),
        ("abcdefghijklmnop;", "has ';' at byte 17"),
        ("abcdéfghijklmnopq", "has byte 0xC3 at byte 5")
    ])
    func unusableTokensAreExplained(token: String, problem: String) {
        let found = PreviewAccess.problem(with: token)
        #expect(found?.hasPrefix(problem) == true, "\(String(describing: found))")
    }

    @Test func usableTokens() {
        #expect(PreviewAccess.problem(with: "Az09-._~Az09-._~") == nil)
        #expect(PreviewAccess.problem(with: String(repeating: "x", count: 256)) == nil)
    }

    @Test func bearerHeaderAndCookieAreAccepted() {
        let token = String(decoding: secret, as: UTF8.self)
        #expect(PreviewAccess.decide(head("/"), secret: secret) == .denied)
        #expect(PreviewAccess.decide(head("/", [("Authorization", "Bearer \(token)")]), secret: secret) == .allowed)
        #expect(PreviewAccess.decide(head("/", [("authorization", "bearer  \(token)")]), secret: secret) == .allowed)
        #expect(PreviewAccess.decide(head("/", [("Authorization", "Basic \(token)")]), secret: secret) == .denied)
        #expect(PreviewAccess.decide(head("/", [("Authorization", "Bearer x\(token)")]), secret: secret) == .denied)
        #expect(
            PreviewAccess.decide(head("/", [("Cookie", "a=1; colorcam_token=\(token); b=2")]), secret: secret)
                == .allowed)
        #expect(
            PreviewAccess.decide(head("/", [("Cookie", "colorcam_token=\"\(token)\"")]), secret: secret)
                == .allowed)
        #expect(PreviewAccess.decide(head("/", [("Cookie", "xcolorcam_token=\(token)")]), secret: secret) == .denied)
        let twoCookies = [("Cookie", "colorcam_token=wrong"), ("Cookie", "colorcam_token=\(token)")]
        #expect(
            PreviewAccess.decide(head("/", twoCookies), secret: secret) == .allowed,
            "any of several cookies may carry it")
    }

    @Test func loginRedirectsToTheSamePathWithoutTheToken() {
        let token = String(decoding: secret, as: UTF8.self)
        #expect(PreviewAccess.decide(head("/?token=\(token)"), secret: secret) == .login(location: "/"))
        #expect(
            PreviewAccess.decide(head("/stats.json?a=1&token=\(token)&b=x%20y"), secret: secret)
                == .login(location: "/stats.json?a=1&b=x%20y"))
        #expect(
            PreviewAccess.decide(head("//evil.example/?token=\(token)"), secret: secret)
                == .login(location: "/evil.example/"), "never a scheme-relative Location")
        let escaped = "%30" + token.dropFirst()  // "0" percent-encoded
        #expect(PreviewAccess.decide(head("/?token=\(escaped)"), secret: secret) == .login(location: "/"))
    }

    @Test func aWrongLoginIsDeniedWhateverElseTheRequestCarries() {
        let token = String(decoding: secret, as: UTF8.self)
        let credentials = [("Authorization", "Bearer \(token)"), ("Cookie", "colorcam_token=\(token)")]
        for target in ["/?token=wrong", "/?token=", "/?token", "/?token=\(token)&token=wrong", "/?token=\(token)x"] {
            #expect(PreviewAccess.decide(head(target, credentials), secret: secret) == .denied, "\(target)")
        }
    }

    @Test func loginCookieIsHttpOnlyAndLax() {
        #expect(PreviewAccess.loginCookie(token: "t") == "colorcam_token=t; Path=/; HttpOnly; SameSite=Lax")
    }
}
