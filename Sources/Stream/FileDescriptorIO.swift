import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// A named file for the Y4M source and sink and the report writer: a `FileDescriptor` it may own, whose every
/// failure is a `StreamError` carrying the file's name, the operation, errno and (where given) the byte offset or
/// frame.
///
/// Descriptors opened from a path are closed by `close()` or on deinit; the standard streams (`-`) are never
/// closed. Threading: one thread at a time; not Sendable.
public final class FileDescriptorIO {
    /// The raw descriptor (`-1` after `close()`).
    public private(set) var rawValue: Int32
    /// What to call the file in messages: the path, or `-` for stdin / stdout.
    public let name: String
    /// Whether `close()` should close the descriptor (false for stdin / stdout).
    private let ownsDescriptor: Bool

    private var descriptor: FileDescriptor { FileDescriptor(rawValue: rawValue) }

    /// Wraps an already open descriptor.
    /// - Parameter closeOnDeinit: whether this wrapper owns (and so closes) the descriptor.
    public init(rawValue: Int32, name: String, closeOnDeinit: Bool) {
        self.rawValue = rawValue
        self.name = name
        self.ownsDescriptor = closeOnDeinit
    }

    deinit { if ownsDescriptor && rawValue >= 0 { try? descriptor.close() } }

    /// Opens `path` for reading, or wraps stdin when `path` is `-`.
    /// - Throws: `.missingInput` when the file does not exist or may not be read (ENOENT, ENOTDIR, EACCES),
    ///   `.badData` when it is a directory, `.ioError` for other failures.
    public static func openForReading(_ path: String) throws -> FileDescriptorIO {
        if path == "-" { return FileDescriptorIO(rawValue: 0, name: "-", closeOnDeinit: false) }
        let fd = try reporting(name: path, operation: "open") { () throws(Errno) in
            try FileDescriptor.open(path, O_RDONLY)
        }
        let file = FileDescriptorIO(rawValue: fd.rawValue, name: path, closeOnDeinit: true)
        if try file.isDirectory() {
            throw StreamError(.badData, file: path, "is a directory, not a file")
        }
        return file
    }

    /// Creates (or truncates) `path` for writing with mode 0644 (less the umask), or wraps stdout for `-`.
    public static func createForWriting(_ path: String) throws -> FileDescriptorIO {
        if path == "-" { return FileDescriptorIO(rawValue: 1, name: "-", closeOnDeinit: false) }
        let fd = try reporting(name: path, operation: "create") { () throws(Errno) in
            try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
        }
        return FileDescriptorIO(rawValue: fd.rawValue, name: path, closeOnDeinit: true)
    }

    /// Whether the descriptor is a directory (`fstat`).
    public func isDirectory() throws -> Bool {
        try Self.reporting(name: name, operation: "fstat") { () throws(Errno) in try descriptor.fileType() } == S_IFDIR
    }

    /// Whether the descriptor is a regular file, so `seek` works (pipes, ttys and sockets are not).
    public func isRegularFile() throws -> Bool {
        try Self.reporting(name: name, operation: "fstat") { () throws(Errno) in try descriptor.fileType() } == S_IFREG
    }

    /// One `read(2)`: up to `buffer.count` bytes.
    /// - Returns: bytes read; 0 at end of file.
    public func readSome(into buffer: UnsafeMutableRawBufferPointer, offset: Int64? = nil) throws -> Int {
        try Self.reporting(name: name, operation: "read", offset: offset) { () throws(Errno) in
            try descriptor.read(into: buffer)
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
            let rest = UnsafeMutableRawBufferPointer(rebasing: first[inFirst...])
            let count = try Self.reporting(name: name, operation: "read", offset: offset) { () throws(Errno) in
                try descriptor.read(into: rest, second)
            }
            if count == 0 { break }
            let intoFirst = min(count, first.count - inFirst)
            inFirst += intoFirst
            inSecond = count - intoFirst
        }
        return (inFirst, inSecond)
    }

    /// Writes all of `first` then all of `second` (`writev(2)`, continuing after short writes).
    /// - Parameter frame: the frame index to name in an error message, if any.
    /// - Throws: `.ioError` (e.g. ENOSPC, EPIPE) naming the file and frame.
    public func writeAll(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, frame: Int? = nil) throws {
        var doneFirst = 0
        var doneSecond = 0
        while doneFirst < first.count || doneSecond < second.count {
            let restFirst = UnsafeRawBufferPointer(rebasing: first[doneFirst...])
            let restSecond = UnsafeRawBufferPointer(rebasing: second[doneSecond...])
            let count = try Self.reporting(name: name, operation: "write", frame: frame) { () throws(Errno) in
                try descriptor.write(restFirst, restSecond)
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
        try Self.reporting(name: name, operation: "seek") { () throws(Errno) in
            try descriptor.seek(toOffset: offsetBytes)
        }
    }

    /// Closes the descriptor if this wrapper owns it; idempotent. A failing `close` (e.g. EIO, ENOSPC on some
    /// file systems) is reported, since it can mean written data was lost.
    public func close() throws {
        guard ownsDescriptor, rawValue >= 0 else { return }
        let closing = descriptor
        rawValue = -1
        try Self.reporting(name: name, operation: "close") { () throws(Errno) in try closing.close() }
    }

    /// Runs `body` (system calls on the file named `name`), turning a failure into this file's `StreamError`:
    /// missing / unreadable input is `.missingInput`, reading a directory is `.badData`, everything else
    /// `.ioError`; the message names the operation, the errno text and number, and `offset`/`frame` when given.
    static func reporting<T>(
        name: String, operation: String, offset: Int64? = nil, frame: Int? = nil, _ body: () throws(Errno) -> T
    ) throws -> T {
        do {
            return try body()
        } catch {
            let kind: FailureKind
            switch (operation, error.code) {
            case ("open", ENOENT), ("open", ENOTDIR), ("open", EACCES): kind = .missingInput
            case (_, EISDIR): kind = .badData
            default: kind = .ioError
            }
            throw StreamError(
                kind, file: name, byteOffset: offset, frame: frame,
                "\(operation) failed: \(error) (errno \(error.code))")
        }
    }
}
