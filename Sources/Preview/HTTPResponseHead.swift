#if canImport(Glibc)
    import Glibc
#endif

/// Builds HTTP/1.1 response heads (status line plus header fields) as bytes ready to send.
enum HTTPResponseHead {
    /// The current time as an HTTP `Date` value (IMF-fixdate, RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(epochSeconds: Int = time(nil)) -> String {
        var seconds = time_t(epochSeconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = [CChar](repeating: 0, count: 40)
        let count = strftime(&text, text.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: text[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The reason phrase for the status codes the server sends.
    static func reason(for status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 303: return "See Other"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 422: return "Unprocessable Content"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status \(status)"
        }
    }

    /// A response head. `contentLength` nil means the body runs until the connection closes (the MJPEG stream).
    static func bytes(
        status: Int, contentType: String?, contentLength: Int?, keepAlive: Bool,
        extraHeaders: [(String, String)] = []
    ) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reason(for: status))\r\nServer: colorcam\r\nDate: \(httpDate())\r\n"
        if let contentType { text += "Content-Type: \(contentType)\r\n" }
        if let contentLength { text += "Content-Length: \(contentLength)\r\n" }
        text += "Cache-Control: no-store\r\n"
        for (name, value) in extraHeaders { text += "\(name): \(value)\r\n" }
        text += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        text += "\r\n"
        return Array(text.utf8)
    }

    /// A whole short response (head plus a text body), as the server sends for errors, `/healthz` and the like.
    static func textResponse(
        status: Int, body: String, keepAlive: Bool, contentType: String = "text/plain; charset=utf-8",
        extraHeaders: [(String, String)] = [], includeBody: Bool = true
    ) -> [UInt8] {
        let bodyBytes = Array(body.utf8)
        var bytes = Self.bytes(
            status: status, contentType: contentType, contentLength: bodyBytes.count,
            keepAlive: keepAlive, extraHeaders: extraHeaders)
        if includeBody { bytes += bodyBytes }
        return bytes
    }
}
