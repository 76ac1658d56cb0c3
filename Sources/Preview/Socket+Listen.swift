import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// The preview server's side of `Socket`: a listening socket and accepting its clients. Event-loop thread only.
extension Socket {
    /// Opens a listening socket on `address` (non-blocking, close-on-exec, `SO_REUSEADDR`).
    /// - Throws: `PreviewError(.unavailable)` when the address cannot be bound (in use, not local, no permission).
    static func listen(on address: SocketAddress, backlog: Int32) throws -> Socket {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let fd = Glibc.socket(
            domain,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw PreviewError(.unavailable, subject: "\(address)", "socket failed", errno: errno) }
        let socket = Socket(fd: fd)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockaddr { Glibc.bind(fd, $0, $1) }
        guard bound == 0 else {
            throw PreviewError(
                .unavailable, subject: "\(address)", "cannot bind (address in use or not local?)",
                errno: errno)
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            throw PreviewError(.unavailable, subject: "\(address)", "listen failed", errno: errno)
        }
        return socket
    }

    /// The port the kernel bound (useful after binding port 0).
    func localPort() -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard ok == 0 else { return 0 }
        return withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port both sit at byte offset 2, in network order.
            UInt16(raw[2]) << 8 | UInt16(raw[3])
        }
    }

    /// Accepts one pending connection as a non-blocking socket with `SO_SNDBUF = sendBufferBytes`; nil when none
    /// is pending or accept failed
    /// (`EMFILE` and friends: the caller retries on the next poll).
    func accept(sendBufferBytes: Int32) -> Socket? {
        let client: Int32
        do {
            client = try Errno.retryingInterrupts { Glibc.accept(fd, nil, nil) }
        } catch {
            lastAcceptErrno = error.code
            return nil
        }
        // accept4 is a GNU extension Glibc's module does not export; set the flags the POSIX way.
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        // A fixed send buffer (no autotuning) bounds what the kernel queues for a slow client to a few frames;
        // beyond that the server skips frames for it (newest wins) instead of queueing them.
        var sendBuffer = sendBufferBytes
        _ = setsockopt(client, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        var one: Int32 = 1
        _ = setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return Socket(fd: client)
    }
}
