import ColorcamCore

/// Reads a YUV4MPEG2 stream from a file or stdin (`-`) with constant memory.
///
/// Header and FRAME lines are parsed from a small read-ahead buffer; each frame's pixels go straight into the
/// caller's `FrameBuffer`, with one `readv(2)` per frame on a regular file (see `Y4MReader`). Nothing is
/// allocated per frame.
///
/// Lifecycle: `init` opens the file, reads the header and peeks at the first FRAME line (to learn
/// `carriesTimestamps`) → `readFrame` until it returns false → deinit closes the file.
/// Threading: one thread at a time (the capture thread).
public final class Y4MSource: FrameSource {
    public let header: Y4MHeader
    public let name: String
    public let canRewind: Bool
    /// Whether the first frame carries an `Xts_us` timestamp, so the pipeline can pace by source time
    /// instead of the header rate. False for a stream with no frames.
    public let carriesTimestamps: Bool

    public var geometry: FrameGeometry { header.geometry }
    public var frameRate: (numerator: Int, denominator: Int) { header.frameRate }
    public var nominalFrameIntervalNs: Int64 {
        Int64(1_000_000_000) * Int64(header.frameRate.denominator) / Int64(header.frameRate.numerator)
    }

    private let reader: Y4MReader
    /// File offset of the first FRAME line (where `rewind` goes back to).
    private let firstFrameOffset: Int64
    /// Index of the next frame `readFrame` returns.
    private var nextSequence = 0

    /// Opens `path` (`-` for stdin) and reads the stream header.
    /// - Throws: `StreamError`: `.missingInput` when the file does not exist or cannot be read, `.badData` for a
    ///   directory, an empty input or a malformed header (naming the byte offset), `.ioError` for read failures.
    public init(path: String) throws {
        name = path
        let file = try FileDescriptorIO.openForReading(path)
        canRewind = try file.isRegularFile()
        reader = Y4MReader(file: file)
        header = try Y4MSource.readHeader(reader, file: path)
        firstFrameOffset = reader.consumedOffset
        // Peek at the first FRAME line; a malformed one is reported by the first readFrame.
        var timestamped = false
        if case .line(let count) = try reader.nextLine(
            maxBytes: Y4MFrameLine.maxLineBytes,
            plausible: Y4MFrameLine.isPlausibleStart)
        {
            let line = UnsafeRawBufferPointer(rebasing: reader.pendingBytes[..<count])
            let timestampNs = try? Y4MFrameLine.parse(line, file: path, byteOffset: firstFrameOffset, frame: 0)
            timestamped = (timestampNs ?? nil) != nil
        }
        carriesTimestamps = timestamped
    }

    /// Reads the next frame's pixels, `sequence` and `sourceTimestampNs` (from `Xts_us`, else nil).
    /// - Returns: false at a clean end of file (exactly at a frame boundary).
    /// - Throws: `StreamError(.badData)` for a truncated frame or a malformed FRAME line, naming the byte offset
    ///   of the FRAME line and the frame index; `.ioError` for read failures.
    public func readFrame(into buffer: FrameBuffer) throws -> Bool {
        guard buffer.geometry == geometry else {
            throw StreamError(
                .internalError, file: name, frame: nextSequence,
                "frame buffer is \(buffer.geometry), the stream is \(geometry)")
        }
        let lineOffset = reader.consumedOffset
        func bad(_ message: String) -> StreamError {
            StreamError(.badData, file: name, byteOffset: lineOffset, frame: nextSequence, message)
        }
        let lineCount: Int
        switch try reader.nextLine(maxBytes: Y4MFrameLine.maxLineBytes, plausible: Y4MFrameLine.isPlausibleStart) {
        case .line(let count):
            lineCount = count
        case .endOfFile(0):
            return false
        case .endOfFile(let count):
            let partial = reader.pendingBytes
            throw bad(
                Y4MFrameLine.isPlausibleStart(partial)
                    ? "truncated: the file ends inside a FRAME line (\(count) bytes, no newline)"
                    : "expected a FRAME line, found \(Y4MFrameLine.preview(partial)) and then the end of the file")
        case .implausible:
            throw bad("expected a FRAME line, found \(Y4MFrameLine.preview(reader.pendingBytes))")
        case .tooLong:
            throw bad("FRAME line longer than \(Y4MFrameLine.maxLineBytes) bytes")
        }
        let line = UnsafeRawBufferPointer(rebasing: reader.pendingBytes[..<lineCount])
        let timestampNs = try Y4MFrameLine.parse(line, file: name, byteOffset: lineOffset, frame: nextSequence)
        reader.consume(lineCount + 1)

        let payloadBytes = geometry.frameBytes
        let got = try reader.readPayload(into: UnsafeMutableRawBufferPointer(rebasing: buffer.pixels[..<payloadBytes]))
        if got < payloadBytes {
            throw bad(
                "truncated frame: expected \(payloadBytes) bytes of pixels after the FRAME line, got \(got) "
                    + "before the end of the file")
        }
        buffer.sequence = nextSequence
        buffer.sourceTimestampNs = timestampNs
        nextSequence += 1
        return true
    }

    /// Seeks back to the first FRAME line; the next frame read is frame 0 again.
    /// - Throws: `StreamError(.usage)` when the input is a pipe or stdin (`canRewind` is false).
    public func rewind() throws {
        guard canRewind else {
            throw StreamError(.usage, file: name, "cannot rewind: the input is a pipe or stdin, not a regular file")
        }
        try reader.seek(toOffset: firstFrameOffset)
        nextSequence = 0
    }

    /// Reads and parses the header line at the start of the file, consuming it.
    private static func readHeader(_ reader: Y4MReader, file: String) throws -> Y4MHeader {
        let magic = Y4MHeader.magic
        func plausibleMagic(_ bytes: UnsafeRawBufferPointer) -> Bool {
            // "YUV4MPEG2" then a space (a bare "YUV4MPEG2" line is left to the parser, which reports no W/H).
            for index in 0..<min(bytes.count, magic.count - 1) where bytes[index] != magic[index] { return false }
            return bytes.count < magic.count || bytes[magic.count - 1] == UInt8(ascii: " ")
        }
        switch try reader.nextLine(maxBytes: Y4MHeader.maxLineBytes, plausible: plausibleMagic) {
        case .line(let count):
            let header = try Y4MHeader.parse(
                line: UnsafeRawBufferPointer(rebasing: reader.pendingBytes[..<count]),
                file: file)
            reader.consume(count + 1)
            return header
        case .endOfFile(0):
            throw StreamError(.badData, file: file, byteOffset: 0, "no YUV4MPEG2 header: the input is empty")
        case .endOfFile(let count):
            throw StreamError(
                .badData, file: file, byteOffset: Int64(count),
                "the YUV4MPEG2 header line has no newline before the end of the file")
        case .implausible:
            throw StreamError(
                .badData, file: file, byteOffset: 0,
                "not a YUV4MPEG2 file: it starts with "
                    + "\(Y4MFrameLine.preview(reader.pendingBytes)), not 'YUV4MPEG2 '")
        case .tooLong:
            throw StreamError(
                .badData, file: file, byteOffset: 0,
                "YUV4MPEG2 header line longer than \(Y4MHeader.maxLineBytes) bytes")
        }
    }
}
