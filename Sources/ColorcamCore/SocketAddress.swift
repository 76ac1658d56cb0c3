#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 address and TCP port (to listen on, or to connect to), parsed from `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`,
/// `localhost:0`). Port 0 asks the kernel for a free port (see `PreviewServer.boundPort`).
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable, Hashable { case ipv4, ipv6 }

    public let family: Family
    /// The address bytes in network order (4 or 16 bytes).
    public let addressBytes: [UInt8]
    public let port: UInt16

    /// Parses `HOST:PORT`; `localhost` means `127.0.0.1`. Nil when the text is not an address and port.
    public init?(_ text: String) {
        var host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = UInt16(portText) else { return nil }
        if host == "localhost" { host = "127.0.0.1" }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(host), &v4) == 1 {
            family = .ipv4
            addressBytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, String(host), &v6) == 1 {
            family = .ipv6
            addressBytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
        self.port = port
    }

    private init(family: Family, addressBytes: [UInt8], port: UInt16) {
        self.family = family
        self.addressBytes = addressBytes
        self.port = port
    }

    /// Resolves `host` (a name, or an IPv4/IPv6 literal without brackets) with getaddrinfo, first TCP answer;
    /// nil when it does not resolve. Blocks while a name is looked up: call it off the hot paths.
    public static func resolve(host: String, port: UInt16) -> SocketAddress? {
        if let literal = SocketAddress(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)") { return literal }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let e = entry {
            if e.pointee.ai_family == AF_INET, let sa = e.pointee.ai_addr {
                let bytes = sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                    withUnsafeBytes(of: p.pointee.sin_addr) { Array($0) }
                }
                return SocketAddress(family: .ipv4, addressBytes: bytes, port: port)
            }
            if e.pointee.ai_family == AF_INET6, let sa = e.pointee.ai_addr {
                let bytes = sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                    withUnsafeBytes(of: p.pointee.sin6_addr) { Array($0) }
                }
                return SocketAddress(family: .ipv6, addressBytes: bytes, port: port)
            }
            entry = e.pointee.ai_next
        }
        return nil
    }

    /// The same address with another port.
    public func withPort(_ port: UInt16) -> SocketAddress {
        SocketAddress(family: family, addressBytes: addressBytes, port: port)
    }

    /// Whether this is a loopback address (127.0.0.0/8 or ::1): reachable from this machine only.
    public var isLoopback: Bool {
        switch family {
        case .ipv4: return addressBytes[0] == 127
        case .ipv6: return addressBytes == [UInt8](repeating: 0, count: 15) + [1]
        }
    }

    public var description: String {
        var text = [CChar](repeating: 0, count: 64)
        let af = family == .ipv4 ? AF_INET : AF_INET6
        addressBytes.withUnsafeBytes { _ = inet_ntop(af, $0.baseAddress, &text, socklen_t(text.count)) }
        let host = String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }

    /// Calls `body` with this address as a `sockaddr` and its length.
    public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        switch family {
        case .ipv4:
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sa.sin_addr) { $0.copyBytes(from: addressBytes) }
            return withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &sa.sin6_addr) { $0.copyBytes(from: addressBytes) }
            return withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
