import ColorcamCore

/// Where a v2 (Open Inference Protocol) model lives: `http://HOST:PORT/v2/models/NAME[/versions/V]`, as given to
/// `--infer-url`. `https` is refused (put the server on a trusted network or behind a local TLS tunnel).
/// Value type; immutable.
public struct InferenceURL: Sendable, Equatable, CustomStringConvertible {
    /// The host as written (a name, an IPv4 literal, or an IPv6 literal without brackets).
    public let host: String
    public let port: UInt16
    /// `/v2/models/NAME` or `/v2/models/NAME/versions/V`: model metadata is GET here, inference POST to `…/infer`.
    public let modelPath: String
    public let modelName: String
    public let version: String?
    /// The text given.
    public let description: String

    /// The `Host` header value.
    public var hostHeader: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
    public var inferPath: String { modelPath + "/infer" }
    public var readyPath: String { "/v2/health/ready" }

    /// Parses `text`; throws a usage error saying what is wrong.
    public init(_ text: String) throws {
        func bad(_ why: String) -> RemoteError {
            RemoteError(
                .usage, url: text, "not an inference URL (\(why)); want http://HOST:PORT/v2/models/NAME[/versions/V]")
        }
        guard text.hasPrefix("http://") else {
            throw text.hasPrefix("https://")
                ? bad("https is not supported: use http on a trusted network")
                : bad("it must start with http://")
        }
        let rest = text.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        var path = String(rest[slash...])
        while path.hasSuffix("/") { path.removeLast() }
        var hostPart: Substring, portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw bad("unclosed [ in the host") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad("text after the ] of the host") }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
        }
        guard !hostPart.isEmpty, !hostPart.contains("@") else { throw bad("no host") }
        var port: UInt16 = 80
        if let portPart {
            guard let p = UInt16(portPart), p > 0 else { throw bad("port '\(portPart)' is not 1-65535") }
            port = p
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // "", "v2", "models", NAME [, "versions", V]
        guard parts.count == 4 || parts.count == 6, parts[0].isEmpty, parts[1] == "v2", parts[2] == "models",
            !parts[3].isEmpty, parts.count == 4 || (parts[4] == "versions" && !parts[5].isEmpty)
        else {
            throw bad("the path must be /v2/models/NAME or /v2/models/NAME/versions/V")
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.%~")
        guard parts[3...].allSatisfy({ $0.allSatisfy { allowed.contains($0) } }) else {
            throw bad("the model name and version may use letters, digits and - _ . ~ % only")
        }
        host = String(hostPart)
        self.port = port
        modelPath = path
        modelName = String(parts[3])
        version = parts.count == 6 ? String(parts[5]) : nil
        description = text
    }
}
