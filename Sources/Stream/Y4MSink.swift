import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a YUV4MPEG2 stream to a file or stdout (`-`).
///
/// A file is written under a temporary name in the same directory (`.NAME.tmp-PID`) and renamed into place by
/// `finish()`; `abort()` (or dropping an unfinished sink) unlinks it, so a failed run leaves no output that looks
/// complete. Stdout is written directly. Each frame is one `writev(2)` (FRAME line + pixels; more only after a
/// short write), and nothing is allocated per frame.
///
/// Lifecycle: `init` creates the temporary file and writes the header → `write` per frame → `finish()` or
/// `abort()`. Threading: one thread at a time (the output thread).
public final class Y4MSink: FrameSink {
    public let header: Y4MHeader
    /// The final path, or `-`.
    public let path: String
    /// Whether frames with a `sourceTimestampNs` get `FRAME Xts_us=N` lines.
    public let writeTimestamps: Bool

    private let file: FileDescriptorIO
    /// The temporary file renamed into `path` by `finish()`; nil for stdout.
    private let temporaryPath: String?
    /// Room for one FRAME line, reused for every frame.
    private let frameLine: UnsafeMutableRawBufferPointer
    private var framesWritten = 0
    private var state = State.open

    private enum State { case open, finished, aborted }

    /// Creates the output and writes the stream header.
    /// - Parameters:
    ///   - path: the output file, or `-` for stdout.
    ///   - header: geometry, rate and aspect to write (`YUV4MPEG2 W H F Ip A C`).
    ///   - writeTimestamps: write `Xts_us` on frames that carry a `sourceTimestampNs`.
    /// - Throws: `StreamError(.ioError)` when the output cannot be created or written (naming the path),
    ///   `.usage` when the path is a directory.
    public convenience init(path: String, header: Y4MHeader, writeTimestamps: Bool = false) throws {
        guard header.frameRate.numerator > 0 && header.frameRate.denominator > 0 else {
            throw StreamError(
                .internalError, file: path,
                "frame rate \(header.frameRate.numerator):"
                    + "\(header.frameRate.denominator) cannot be written; both parts must be positive")
        }
        if path == "-" {
            try self.init(
                descriptor: try FileDescriptorIO.createForWriting("-"), header: header,
                writeTimestamps: writeTimestamps)
            return
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var info = stat()
        let exists = stat(path, &info) == 0
        if base.isEmpty || (exists && (info.st_mode & S_IFMT) == S_IFDIR) {
            throw StreamError(.usage, file: path, "output path is a directory, not a file")
        }
        if exists && (info.st_mode & S_IFMT) != S_IFREG {
            // A device or FIFO (/dev/null, a pipe a player reads): written in place; renaming a finished temporary
            // over it would replace the device node with a plain file.
            let file: FileDescriptorIO
            do {
                file = try FileDescriptorIO.createForWriting(path)
            } catch let error as StreamError {
                throw StreamError(.ioError, file: path, error.message)
            }
            try self.init(descriptor: file, header: header, writeTimestamps: writeTimestamps)
            return
        }
        let temporary = directory + "." + base + ".tmp-\(getpid())"
        let file: FileDescriptorIO
        do {
            file = try FileDescriptorIO.createForWriting(temporary)
        } catch let error as StreamError {
            // Name the output the user asked for; creation failures are output failures, never "missing input".
            throw StreamError(.ioError, file: path, error.message)
        }
        try self.init(
            path: path, temporaryPath: temporary, file: file, header: header,
            writeTimestamps: writeTimestamps)
    }

    /// Writes straight to an open descriptor (no temporary file, no rename), e.g. stdout or a pipe.
    /// `finish()` closes the descriptor if `descriptor` owns it.
    convenience init(descriptor: FileDescriptorIO, header: Y4MHeader, writeTimestamps: Bool) throws {
        try self.init(
            path: descriptor.name, temporaryPath: nil, file: descriptor, header: header,
            writeTimestamps: writeTimestamps)
    }

    private init(
        path: String, temporaryPath: String?, file: FileDescriptorIO, header: Y4MHeader,
        writeTimestamps: Bool
    ) throws {
        self.path = path
        self.temporaryPath = temporaryPath
        self.file = file
        self.header = header
        self.writeTimestamps = writeTimestamps
        frameLine = UnsafeMutableRawBufferPointer.allocate(byteCount: Y4MFrameLine.maxFormattedBytes, alignment: 16)
        var line = header.line
        do {
            try line.withUTF8 { bytes in
                try file.writeAll(UnsafeRawBufferPointer(bytes), UnsafeRawBufferPointer(start: nil, count: 0))
            }
        } catch {
            abort()
            throw renamed(error)
        }
    }

    deinit {
        if state == .open && temporaryPath != nil { abort() }
        frameLine.deallocate()
    }

    /// Appends one frame: its FRAME line (with `Xts_us` when enabled and known) and its pixels.
    /// - Throws: `StreamError(.ioError)` (ENOSPC, EPIPE, …) naming the output and the frame index, or
    ///   `.internalError` for a frame of the wrong geometry or a sink that is already finished.
    public func write(_ frame: FrameBuffer) throws {
        guard state == .open else {
            throw StreamError(.internalError, file: path, frame: framesWritten, "write after finish or abort")
        }
        guard frame.geometry == header.geometry else {
            throw StreamError(
                .internalError, file: path, frame: framesWritten,
                "frame is \(frame.geometry), the output is \(header.geometry)")
        }
        let lineBytes = Y4MFrameLine.format(
            timestampNs: writeTimestamps ? frame.sourceTimestampNs : nil,
            into: frameLine)
        do {
            try file.writeAll(
                UnsafeRawBufferPointer(rebasing: frameLine[..<lineBytes]),
                UnsafeRawBufferPointer(frame.pixels), frame: framesWritten)
        } catch {
            throw renamed(error)
        }
        framesWritten += 1
    }

    /// Closes the output and renames the temporary file into place. Idempotent.
    /// - Throws: `StreamError(.ioError)` when closing or renaming fails (the temporary file is then removed).
    public func finish() throws {
        guard state == .open else {
            if state == .aborted {
                throw StreamError(.internalError, file: path, "finish after abort")
            }
            return
        }
        do {
            try file.close()
            if let temporaryPath {
                _ = try FileDescriptorIO.reporting(name: path, operation: "rename") { () throws(Errno) in
                    try Errno.retryingInterrupts { rename(temporaryPath, path) }
                }
            }
            state = .finished
        } catch {
            abort()
            throw renamed(error)
        }
    }

    /// Closes and unlinks the temporary file (nothing to undo on stdout). Safe after a failure; idempotent.
    public func abort() {
        guard state == .open else { return }
        state = .aborted
        try? file.close()
        if let temporaryPath { unlink(temporaryPath) }
    }

    /// Errors from the descriptor name the temporary file; report them against the output path instead.
    private func renamed(_ error: Error) -> Error {
        guard let error = error as? StreamError else { return error }
        return StreamError(.ioError, file: path, byteOffset: error.byteOffset, frame: error.frame, error.message)
    }
}
