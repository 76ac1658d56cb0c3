#if canImport(Glibc)
    import Glibc
#endif

/// A POSIX error number as an error value: `description` is the C library's text (`strerror`).
///
/// Also the one place the `EINTR` retry lives: every system call colorcam makes on files, sockets and devices goes
/// through `retryingInterrupts` (directly or via `FileDescriptor`/`Socket`). Thrown with typed throws, so a failing
/// call allocates nothing.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value.
    public let code: Int32

    public init(_ code: Int32) { self.code = code }

    /// The calling thread's `errno` now.
    public static var current: Errno { Errno(errno) }

    public var description: String { String(cString: strerror(code)) }

    /// Runs `call` — a system call that returns -1 and sets `errno` when it fails — until it does not fail with
    /// `EINTR` (a signal arrived during the call).
    /// - Returns: what the call returned.
    /// - Throws: the `errno` of any other failure.
    @inline(__always)
    public static func retryingInterrupts<T: FixedWidthInteger>(_ call: () -> T) throws(Errno) -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = errno
            if code != EINTR { throw Errno(code) }
        }
    }

    /// The same loop for calls that return their error number instead (0 on success): `clock_nanosleep`, and the
    /// V4L2 syscall table's `ioctl`.
    /// - Returns: 0, or the error number other than `EINTR`.
    @inline(__always)
    public static func codeRetryingInterrupts(_ call: () -> Int32) -> Int32 {
        while true {
            let code = call()
            if code != EINTR { return code }
        }
    }
}
