import CV4L2

#if canImport(Glibc)
    import Glibc
#endif

/// The system calls a V4L2 device needs, as a struct of functions: the seam through which unit tests script a
/// device (`V4L2Syscalls.live` goes to libv4l2). Each function returns the errno of a failure directly, so callers
/// never read the global `errno` after an intervening call.
///
/// Threading: the functions are called from the thread that owns the `V4L2Device`.
public struct V4L2Syscalls: Sendable {
    /// Opens `path` read-write, non-blocking. Returns the descriptor, or -errno.
    public var open: @Sendable (_ path: String) -> Int32
    /// Closes the descriptor.
    public var close: @Sendable (_ fd: Int32) -> Void
    /// `ioctl(fd, request, arg)`. Returns 0 or the errno of the failure.
    public var ioctl: @Sendable (_ fd: Int32, _ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32
    /// Maps `length` bytes at the buffer `offset` read-write, shared. Returns the mapping, or the errno.
    public var mmap:
        @Sendable (_ fd: Int32, _ length: Int, _ offset: Int64) -> Result<UnsafeMutableRawPointer, V4L2Errno>
    /// Unmaps a mapping made by `mmap`.
    public var munmap: @Sendable (_ address: UnsafeMutableRawPointer, _ length: Int) -> Void
    /// Waits up to `timeoutMs` for the descriptor to be readable. Returns the `revents` bits (0 on timeout),
    /// or -errno.
    public var poll: @Sendable (_ fd: Int32, _ timeoutMs: Int32) -> Int32

    public init(
        open: @escaping @Sendable (String) -> Int32,
        close: @escaping @Sendable (Int32) -> Void,
        ioctl: @escaping @Sendable (Int32, UInt, UnsafeMutableRawPointer) -> Int32,
        mmap: @escaping @Sendable (Int32, Int, Int64) -> Result<UnsafeMutableRawPointer, V4L2Errno>,
        munmap: @escaping @Sendable (UnsafeMutableRawPointer, Int) -> Void,
        poll: @escaping @Sendable (Int32, Int32) -> Int32
    ) {
        self.open = open
        self.close = close
        self.ioctl = ioctl
        self.mmap = mmap
        self.munmap = munmap
        self.poll = poll
    }

    /// The real calls, through libv4l2 (`v4l2_open`, `v4l2_ioctl`, `v4l2_mmap`, …) and `poll(2)`.
    public static let live = V4L2Syscalls(
        open: { path in
            let fd = ccv4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            return fd >= 0 ? fd : -errno
        },
        close: { fd in _ = ccv4l2_close(fd) },
        ioctl: { fd, request, arg in ccv4l2_ioctl(fd, request, arg) == -1 ? errno : 0 },
        mmap: { fd, length, offset in
            guard let address = ccv4l2_mmap(fd, length, offset) else { return .failure(V4L2Errno(errno)) }
            return .success(address)
        },
        munmap: { address, length in _ = ccv4l2_munmap(address, length) },
        poll: { fd, timeoutMs in
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let n = Glibc.poll(&pfd, 1, timeoutMs)
            if n < 0 { return -errno }
            return n == 0 ? 0 : Int32(pfd.revents)
        }
    )
}

/// An errno value with its symbolic name, for one-line error messages (`ENODEV (No such device)`).
public struct V4L2Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Int32
    public init(_ code: Int32) { self.code = code }

    public var description: String {
        let names: [Int32: String] = [
            EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO", EBADF: "EBADF",
            EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EFAULT: "EFAULT", EBUSY: "EBUSY",
            ENODEV: "ENODEV", EINVAL: "EINVAL", ENOTTY: "ENOTTY", ENOSPC: "ENOSPC", EPIPE: "EPIPE",
            ETIMEDOUT: "ETIMEDOUT", ENOLINK: "ENOLINK"
        ]
        let text = String(cString: strerror(code))
        return "\(names[code] ?? "errno \(code)") (\(text))"
    }
}
