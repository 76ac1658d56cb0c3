#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking TCP socket descriptor: the preview server's listener and clients (Preview adds `listen`/`accept`),
/// and the remote inference client's connection (`connect`).
///
/// Every call retries `EINTR` (`Errno.retryingInterrupts`); `send` uses `MSG_NOSIGNAL` so a peer that went away gives `EPIPE`, never SIGPIPE.
/// Ownership: the wrapper closes the descriptor in `close()` or deinit. Threading: one thread at a time (the one
/// that owns the connection).
public final class Socket {
    /// The raw descriptor, `-1` once closed.
    public private(set) var fd: Int32
    /// errno of the last failed `accept` (`EAGAIN` when nothing was pending, `EMFILE` when out of descriptors).
    public var lastAcceptErrno: Int32 = 0

    public init(fd: Int32) { self.fd = fd }
    deinit { close() }

    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    /// What a non-blocking read or write did.
    public enum IOResult: Equatable {
        /// This many bytes moved (> 0).
        case transferred(Int)
        /// The socket is not ready (`EAGAIN`); poll and try again.
        case wouldBlock
        /// The peer closed (read of 0 bytes) or the connection failed (errno).
        case closed(errno: Int32)
    }

    /// Shuts down the sending side (the peer reads end-of-stream after the data already sent).
    public func shutdownWrite() {
        if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
    }

    /// Reads up to `buffer.count` bytes.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        do {
            let n = try Errno.retryingInterrupts { recv(fd, buffer.baseAddress, buffer.count, 0) }
            return n > 0 ? .transferred(n) : .closed(errno: 0)
        } catch {
            return Self.result(of: error)
        }
    }

    /// Writes as much of `bytes` as the socket takes now.
    public func write(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        if bytes.isEmpty { return .transferred(0) }
        do {
            let n = try Errno.retryingInterrupts { send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            return n == 0 ? .wouldBlock : .transferred(n)
        } catch {
            return Self.result(of: error)
        }
    }

    /// A failed read or write: not ready yet (`EAGAIN`), or the connection's end.
    private static func result(of error: Errno) -> IOResult {
        error.code == EAGAIN || error.code == EWOULDBLOCK ? .wouldBlock : .closed(errno: error.code)
    }

    /// What waiting on a socket found.
    public enum Readiness: Equatable {
        case ready
        /// The deadline passed first.
        case timedOut
        /// poll itself failed, or the socket is in error / hung up with nothing to read (errno, 0 for a hang-up).
        case failed(errno: Int32)
    }

    /// Waits until the socket can be read (`forWriting` false) or written, at most `timeoutMs` (≥ 0).
    public func wait(forWriting: Bool, timeoutMs: Int) -> Readiness {
        var entry = pollfd(fd: fd, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
        let n: Int32
        do {
            // A signal restarts the whole timeout: waits are short (a request's deadline), signals rare.
            n = try Errno.retryingInterrupts { poll(&entry, 1, Int32(clamping: max(0, timeoutMs))) }
        } catch {
            return .failed(errno: error.code)
        }
        if n == 0 { return .timedOut }
        // POLLHUP with POLLIN still has data (or the end of stream) to read: let the read report it.
        if entry.revents & Int16(POLLERR) != 0 { return .failed(errno: pendingError()) }
        if !forWriting && entry.revents & Int16(POLLIN | POLLHUP) != 0 { return .ready }
        if forWriting && entry.revents & Int16(POLLOUT) != 0 { return .ready }
        return .failed(errno: 0)
    }

    /// The socket's pending error (`SO_ERROR`), e.g. why a non-blocking connect failed.
    public func pendingError() -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    /// Connects a non-blocking TCP socket (close-on-exec, `TCP_NODELAY`) to `address`, waiting at most `timeoutMs`.
    /// - Returns: the socket, or the errno that stopped it (`ETIMEDOUT` when the deadline passed).
    public static func connect(to address: SocketAddress, timeoutMs: Int) -> Result<Socket, Errno> {
        let domain = address.family == .ipv4 ? AF_INET : AF_INET6
        let fd = Glibc.socket(
            domain,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Errno.current) }
        let socket = Socket(fd: fd)
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        do {
            _ = try Errno.retryingInterrupts { address.withSockaddr { Glibc.connect(fd, $0, $1) } }
            return .success(socket)
        } catch  where error.code != EINPROGRESS && error.code != EALREADY {
            return .failure(error)
        } catch {}
        switch socket.wait(forWriting: true, timeoutMs: timeoutMs) {
        case .ready:
            let failure = socket.pendingError()
            return failure == 0 ? .success(socket) : .failure(Errno(failure))
        case .timedOut: return .failure(Errno(ETIMEDOUT))
        case .failed(let e): return .failure(Errno(e == 0 ? ECONNREFUSED : e))
        }
    }
}
