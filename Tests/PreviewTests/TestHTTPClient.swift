import ColorcamCore
import Foundation
import Preview

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking loopback TCP client for the server tests; every read gives up after `timeoutS` seconds (so a test
/// that waits for a server reply fails instead of hanging).
final class TestHTTPClient {
    let fd: Int32
    private var buffered: [UInt8] = []

    struct Response {
        var status: Int
        var headers: [String: String]  // lower-cased names
        var body: [UInt8]
        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    struct ClientError: Error, CustomStringConvertible {
        let description: String
    }

    init(port: UInt16, timeoutS: Int = 5, receiveBufferBytes: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError(description: "socket failed: errno \(errno)") }
        var timeout = timeval(tv_sec: timeoutS, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var bytes = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw ClientError(description: "connect to port \(port) failed: errno \(errno)")
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ClientError(description: "send failed: errno \(errno)") }
            offset += n
        }
    }

    /// Reads more bytes into the buffer; false at end of stream. Throws on timeout or error.
    @discardableResult
    func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffered += chunk[0..<n]
            return true
        }
        if n == 0 { return false }
        throw ClientError(description: errno == EAGAIN ? "read timed out" : "recv failed: errno \(errno)")
    }

    /// Reads up to and including `delimiter`.
    func read(through delimiter: [UInt8]) throws -> [UInt8] {
        while true {
            if let range = firstRange(of: delimiter) {
                let result = Array(buffered[..<range.upperBound])
                buffered.removeFirst(range.upperBound)
                return result
            }
            guard try fill() else { throw ClientError(description: "connection closed before \(delimiter)") }
        }
    }

    func read(count: Int) throws -> [UInt8] {
        while buffered.count < count {
            guard try fill() else { throw ClientError(description: "connection closed after \(buffered.count) bytes") }
        }
        let result = Array(buffered[..<count])
        buffered.removeFirst(count)
        return result
    }

    /// Reads until the peer closes; returns everything.
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffered = [] }
        return buffered
    }

    private func firstRange(of delimiter: [UInt8]) -> Range<Int>? {
        guard buffered.count >= delimiter.count else { return nil }
        for start in 0...(buffered.count - delimiter.count) where buffered[start] == delimiter[0] {
            if Array(buffered[start..<(start + delimiter.count)]) == delimiter {
                return start..<(start + delimiter.count)
            }
        }
        return nil
    }

    /// Reads one response head and, when it has a Content-Length, its body (`readBody: false` for HEAD).
    func readResponse(readBody: Bool = true) throws -> Response {
        let head = String(decoding: try read(through: Array("\r\n\r\n".utf8)), as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1", let status = Int(statusParts[1]) else {
            throw ClientError(description: "bad status line in \(head.debugDescription)")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw ClientError(description: "bad header \(line)") }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmedForTest(in: " ").description
        }
        var body: [UInt8] = []
        if readBody, let length = headers["content-length"].flatMap(Int.init) { body = try read(count: length) }
        return Response(status: status, headers: headers, body: body)
    }

    /// One GET with `Connection: close`, read to the end.
    static func get(_ path: String, port: UInt16) throws -> Response {
        let client = try TestHTTPClient(port: port)
        try client.send("GET \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        return try client.readResponse()
    }
}

extension Substring {
    fileprivate func trimmedForTest(in set: String) -> Substring {
        var slice = self
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return slice
    }
}

extension TestHTTPClient {
    /// Sends bytes from another thread (so a big pipelined batch cannot deadlock against unread responses).
    final class Sender: @unchecked Sendable {
        // Invariant for @unchecked Sendable: `error` is written by the sending thread before `done.signal()` and
        // read only after `join()`.
        private let done = DispatchSemaphore(value: 0)
        private(set) var error: Error?

        init(client: TestHTTPClient, bytes: [UInt8]) throws {
            let box = ClientBox(client)
            let thread = Thread { [self] in
                do { try box.client.send(bytes) } catch { self.error = error }
                done.signal()
            }
            thread.start()
        }

        func join() { done.wait() }
    }

    private final class ClientBox: @unchecked Sendable {
        // Invariant: the sending thread only calls `send`, the test thread only reads; a socket allows both at once.
        let client: TestHTTPClient
        init(_ client: TestHTTPClient) { self.client = client }
    }
}
