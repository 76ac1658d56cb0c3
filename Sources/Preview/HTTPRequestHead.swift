/// The HTTP version of a request; the server speaks HTTP/1.0 and HTTP/1.1 only.
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    public var description: String { "HTTP/\(major).\(minor)" }
}

/// One parsed request head (request line plus header fields), as `HTTPRequestParser` produces it.
///
/// Header names keep their case as sent; look them up with `header(_:)`, which compares case-insensitively.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The method token, e.g. `GET` (case-sensitive, as RFC 9110 says).
    public var method: String
    /// The request target in origin form, e.g. `/stats.json?x=1`.
    public var target: String
    public var version: HTTPVersion
    /// Header fields in arrival order; values have surrounding whitespace trimmed.
    public var headers: [(name: String, value: String)]

    public static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.version == rhs.version
            && lhs.headers.elementsEqual(rhs.headers, by: { $0.name == $1.name && $0.value == $1.value })
    }

    /// The first value of header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first(where: { $0.name.lowercased() == wanted })?.value
    }

    /// The target without its query string.
    public var path: Substring {
        target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// The target's query string (after the first `?`), "" when there is none.
    public var query: String {
        guard let mark = target.firstIndex(of: "?") else { return "" }
        return String(target[target.index(after: mark)...])
    }

    /// Whether the connection stays open after the response: HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool {
        let tokens = (header("Connection") ?? "").lowercased().split(separator: ",").map {
            $0.trimmingCharacters(in: " \t")
        }
        if version == .http1_1 { return !tokens.contains("close") }
        return tokens.contains("keep-alive")
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var slice = self
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return slice
    }
}
