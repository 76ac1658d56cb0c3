#if canImport(Glibc)
    import Glibc
#endif

/// An open file descriptor as a typed value over the C calls (in the manner of swift-system's): every call retries
/// `EINTR` (`Errno.retryingInterrupts`) and throws the `Errno` of any other failure. Callers add the context (file
/// name, byte offset, frame) to the errors they report.
///
/// Ownership: a plain value; whoever opened the descriptor closes it (`close()`), once. Threading: as the kernel
/// allows for the descriptor (no state here).
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: 0)
    public static let standardOutput = FileDescriptor(rawValue: 1)

    /// Opens `path` (`open(2)`; `O_CLOEXEC` is always added).
    /// - Parameter permissions: the mode of a file `O_CREAT` creates (less the umask).
    public static func open(_ path: String, _ flags: Int32, permissions: mode_t = 0) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try Errno.retryingInterrupts { Glibc.open(path, flags | O_CLOEXEC, permissions) })
    }

    /// One `read(2)`: up to `buffer.count` bytes.
    /// - Returns: the bytes read; 0 at the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try Errno.retryingInterrupts { Glibc.read(rawValue, base, buffer.count) }
    }

    /// Reads to the end of the file, appending to `bytes`, until `bytes` holds `limitBytes` (more is left unread).
    /// On a failure what was read stays appended, so `bytes.count` says where the read failed.
    /// - Parameter stopAfter: stops early once a chunk read contains this byte (e.g. a newline).
    public func readAll(into bytes: inout [UInt8], limitBytes: Int = .max, stopAfter: UInt8? = nil) throws(Errno) {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: min(1 << 20, max(1, limitBytes)), alignment: 1)
        defer { chunk.deallocate() }
        while bytes.count < limitBytes {
            let wanted = min(chunk.count, limitBytes - bytes.count)
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: chunk[0..<wanted]))
            if count == 0 { break }
            let got = UnsafeRawBufferPointer(rebasing: chunk[0..<count])
            bytes += got
            if let stopAfter, got.contains(stopAfter) { break }
        }
    }

    /// One `readv(2)` into up to two buffers (an empty second one is left out).
    public func read(into first: UnsafeMutableRawBufferPointer, _ second: UnsafeMutableRawBufferPointer) throws(Errno)
        -> Int
    {
        var vectors = (
            iovec(iov_base: first.baseAddress, iov_len: first.count),
            iovec(iov_base: second.baseAddress, iov_len: second.count)
        )
        let result = withUnsafeMutableBytes(of: &vectors) { raw in
            let base = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
            return Result { () throws(Errno) in
                try Errno.retryingInterrupts { readv(rawValue, base, second.count > 0 ? 2 : 1) }
            }
        }
        return try result.get()
    }

    /// One `writev(2)` of up to two buffers (an empty first one is left out).
    /// - Returns: the bytes written (possibly fewer than offered).
    public func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) throws(Errno) -> Int {
        var vectors = (
            iovec(iov_base: UnsafeMutableRawPointer(mutating: first.baseAddress), iov_len: first.count),
            iovec(iov_base: UnsafeMutableRawPointer(mutating: second.baseAddress), iov_len: second.count)
        )
        let skipFirst = first.isEmpty
        let result = withUnsafeMutableBytes(of: &vectors) { raw in
            let base = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
            return Result { () throws(Errno) in
                try Errno.retryingInterrupts { writev(rawValue, skipFirst ? base + 1 : base, skipFirst ? 1 : 2) }
            }
        }
        return try result.get()
    }

    /// Writes all of `bytes`, continuing after short writes.
    /// - Throws: the `Errno` of a failed write (what was written before it stays written).
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            let count = try Errno.retryingInterrupts { Glibc.write(rawValue, rest.baseAddress, rest.count) }
            if count == 0 { throw Errno(EIO) }  // no progress: never loop forever
            offset += count
        }
    }

    /// Moves the file position to `offsetBytes` from the start (`lseek(2)`, `SEEK_SET`).
    public func seek(toOffset offsetBytes: Int64) throws(Errno) {
        _ = try Errno.retryingInterrupts { lseek(rawValue, off_t(offsetBytes), SEEK_SET) }
    }

    /// The file's status (`fstat(2)`).
    public func status() throws(Errno) -> stat {
        var info = stat()
        _ = try Errno.retryingInterrupts { fstat(rawValue, &info) }
        return info
    }

    /// The file type bits of `status()` (`S_IFREG`, `S_IFDIR`, …).
    public func fileType() throws(Errno) -> mode_t { try status().st_mode & S_IFMT }

    /// Closes the descriptor. Not retried on `EINTR` (Linux has closed it already); any other failure (e.g. `EIO`,
    /// `ENOSPC` on some file systems) is thrown, since it can mean written data was lost.
    public func close() throws(Errno) {
        if Glibc.close(rawValue) != 0 && errno != EINTR { throw Errno.current }
    }
}
