import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// A small typed wrapper over one POSIX file descriptor, used by the Y4M source and sink.
///
/// Every call retries `EINTR` and throws a `StreamError` carrying the file's name, the operation and errno.
/// Descriptors opened from a path are closed by `close()` or on deinit; the standard streams (`-`) are never
/// closed. Threading: one thread at a time; not Sendable.
public final class FileDescriptorIO {
    /// The raw descriptor (`-1` after `close()`).
    public private(set) var rawValue: Int32
    /// What to call the file in messages: the path, or `-` for stdin / stdout.
    public let name: String
    /// Whether `close()` should close the descriptor (false for stdin / stdout).
    private let ownsDescriptor: Bool

    /// Wraps an already open descriptor.
    /// - Parameter closeOnDeinit: whether this wrapper owns (and so closes) the descriptor.
    public init(rawValue: Int32, name: String, closeOnDeinit: Bool) {
        self.rawValue = rawValue
        self.name = name
        self.ownsDescriptor = closeOnDeinit
    }

    deinit { if ownsDescriptor && rawValue >= 0 { _ = Glibc.close(rawValue) } }

    /// Opens `path` for reading, or wraps stdin when `path` is `-`.
    /// - Throws: `.missingInput` when the file does not exist or may not be read (ENOENT, ENOTDIR, EACCES),
    ///   `.badData` when it is a directory, `.ioError` for other failures.
    public static func openForReading(_ path: String) throws -> FileDescriptorIO {
        if path == "-" { return FileDescriptorIO(rawValue: 0, name: "-", closeOnDeinit: false) }
        let fd = try retryingEINTR(name: path, operation: "open") { open(path, O_RDONLY | O_CLOEXEC) }
        let file = FileDescriptorIO(rawValue: fd, name: path, closeOnDeinit: true)
        if try file.isDirectory() {
            throw StreamError(.badData, file: path, "is a directory, not a file")
        }
        return file
    }

    /// Creates (or truncates) `path` for writing with mode 0644 (less the umask), or wraps stdout for `-`.
    public static func createForWriting(_ path: String) throws -> FileDescriptorIO {
        if path == "-" { return FileDescriptorIO(rawValue: 1, name: "-", closeOnDeinit: false) }
        let fd = try retryingEINTR(name: path, operation: "create") {
            open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        }
        return FileDescriptorIO(rawValue: fd, name: path, closeOnDeinit: true)
    }

    /// Whether the descriptor is a directory (`fstat`).
    public func isDirectory() throws -> Bool {
        var info = stat()
        _ = try FileDescriptorIO.retryingEINTR(name: name, operation: "fstat") { fstat(rawValue, &info) }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether the descriptor is a regular file, so `seek` works (pipes, ttys and sockets are not).
    public func isRegularFile() throws -> Bool {
        var info = stat()
        _ = try FileDescriptorIO.retryingEINTR(name: name, operation: "fstat") { fstat(rawValue, &info) }
        return (info.st_mode & S_IFMT) == S_IFREG
    }

    /// One `read(2)` (EINTR retried): up to `buffer.count` bytes.
    /// - Returns: bytes read; 0 at end of file.
    public func readSome(into buffer: UnsafeMutableRawBufferPointer, offset: Int64? = nil) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try FileDescriptorIO.retryingEINTR(name: name, operation: "read", offset: offset) {
            Glibc.read(rawValue, base, buffer.count)
        }
    }

    /// Reads until `first` is full, continuing into `second` with what the same `readv(2)` calls deliver; stops
    /// as soon as `first` is full (so `second` is an opportunistic read-ahead) or at end of file.
    /// On a regular file this is one system call when nothing is short.
    /// - Returns: bytes placed in `first` and in `second`. `first` is short only at end of file.
    public func readFully(
        _ first: UnsafeMutableRawBufferPointer, thenSome second: UnsafeMutableRawBufferPointer, offset: Int64? = nil
    ) throws -> (first: Int, second: Int) {
        var inFirst = 0
        var inSecond = 0
        while inFirst < first.count {
            var vectors = (
                iovec(iov_base: first.baseAddress! + inFirst, iov_len: first.count - inFirst),
                iovec(iov_base: second.baseAddress, iov_len: second.count)
            )
            let count = try withUnsafeMutableBytes(of: &vectors) { raw in
                let base = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
                return try FileDescriptorIO.retryingEINTR(name: name, operation: "read", offset: offset) {
                    readv(rawValue, base, second.count > 0 ? 2 : 1)
                }
            }
            if count == 0 { break }
            let intoFirst = min(count, first.count - inFirst)
            inFirst += intoFirst
            inSecond = count - intoFirst
        }
        return (inFirst, inSecond)
    }

    /// Writes all of `first` then all of `second` (`writev(2)`, continuing after short writes, EINTR retried).
    /// - Parameter frame: the frame index to name in an error message, if any.
    /// - Throws: `.ioError` (e.g. ENOSPC, EPIPE) naming the file and frame.
    public func writeAll(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, frame: Int? = nil) throws {
        var doneFirst = 0
        var doneSecond = 0
        while doneFirst < first.count || doneSecond < second.count {
            var vectors = (
                iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: first.baseAddress.map { $0 + doneFirst }),
                    iov_len: first.count - doneFirst),
                iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: second.baseAddress.map { $0 + doneSecond }),
                    iov_len: second.count - doneSecond)
            )
            let count = try withUnsafeMutableBytes(of: &vectors) { raw in
                let base = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
                let skipFirst = doneFirst == first.count
                return try FileDescriptorIO.retryingEINTR(name: name, operation: "write", frame: frame) {
                    writev(rawValue, skipFirst ? base + 1 : base, skipFirst ? 1 : 2)
                }
            }
            if count == 0 {
                throw StreamError(.ioError, file: name, frame: frame, "write made no progress")
            }
            let intoFirst = min(count, first.count - doneFirst)
            doneFirst += intoFirst
            doneSecond += count - intoFirst
        }
    }

    /// Moves the file position to `offsetBytes` from the start (`lseek(2)`, `SEEK_SET`).
    public func seek(toOffset offsetBytes: Int64) throws {
        _ = try FileDescriptorIO.retryingEINTR(name: name, operation: "seek") {
            lseek(rawValue, off_t(offsetBytes), SEEK_SET)
        }
    }

    /// Closes the descriptor if this wrapper owns it; idempotent. A failing `close` (e.g. EIO, ENOSPC on some
    /// file systems) is reported, since it can mean written data was lost.
    public func close() throws {
        guard ownsDescriptor, rawValue >= 0 else { return }
        let fd = rawValue
        rawValue = -1
        if Glibc.close(fd) != 0 && errno != EINTR {
            throw FileDescriptorIO.errnoError(errno, name: name, operation: "close")
        }
    }

    /// Runs `call` until it does not fail with EINTR; converts any other failure (-1) into a `StreamError`.
    static func retryingEINTR<T: FixedWidthInteger>(
        name: String, operation: String, offset: Int64? = nil, frame: Int? = nil, _ call: () -> T
    ) throws -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw errnoError(code, name: name, operation: operation, offset: offset, frame: frame)
        }
    }

    /// The `StreamError` for a failed system call: missing / unreadable input is `.missingInput`, reading a
    /// directory is `.badData`, everything else `.ioError`.
    static func errnoError(
        _ code: Int32, name: String, operation: String, offset: Int64? = nil, frame: Int? = nil
    ) -> StreamError {
        let kind: FailureKind
        switch (operation, code) {
        case ("open", ENOENT), ("open", ENOTDIR), ("open", EACCES): kind = .missingInput
        case (_, EISDIR): kind = .badData
        default: kind = .ioError
        }
        let reason = String(cString: strerror(code))
        return StreamError(
            kind, file: name, byteOffset: offset, frame: frame,
            "\(operation) failed: \(reason) (errno \(code))")
    }
}
