import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// The byte-level half of `Y4MSource`: a file descriptor plus a small read-ahead buffer, handing out whole
/// lines (header, FRAME) and reading frame payloads straight into caller memory.
///
/// A payload read first drains the read-ahead, then issues `readv(2)` for the rest of the payload *and* a fresh
/// read-ahead, so a regular file costs one system call per frame. Constant memory: `readAheadBytes` plus
/// nothing per frame. Threading: one thread at a time.
final class Y4MReader {
    /// Size of the read-ahead buffer; holds the longest header or FRAME line.
    static let readAheadBytes = 4096

    let file: FileDescriptorIO
    /// Read-ahead bytes live in `readAhead[aheadStart..<aheadEnd]`.
    private let readAhead: UnsafeMutableRawBufferPointer
    private var aheadStart = 0
    private var aheadEnd = 0
    /// File offset just past the last byte read from the descriptor.
    private var readOffset: Int64 = 0

    /// What `nextLine` found at the front of the read-ahead.
    enum LineScan: Equatable {
        /// A complete line of `count` bytes (newline excluded), available through `pendingBytes`.
        case line(count: Int)
        /// End of file after `count` buffered bytes with no newline.
        case endOfFile(count: Int)
        /// The bytes so far cannot start the expected line.
        case implausible
        /// No newline within the allowed length.
        case tooLong
    }

    init(file: FileDescriptorIO) {
        precondition(Y4MReader.readAheadBytes >= max(Y4MHeader.maxLineBytes, Y4MFrameLine.maxLineBytes))
        self.file = file
        readAhead = UnsafeMutableRawBufferPointer.allocate(byteCount: Y4MReader.readAheadBytes, alignment: 64)
    }

    deinit { readAhead.deallocate() }

    /// File offset of the next byte not yet consumed.
    var consumedOffset: Int64 { readOffset - Int64(aheadEnd - aheadStart) }

    /// The buffered, not yet consumed bytes (valid until the next call that reads or consumes).
    var pendingBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: readAhead[aheadStart..<aheadEnd]) }

    /// Drops `count` buffered bytes (at most `pendingBytes.count`).
    func consume(_ count: Int) {
        precondition(count <= aheadEnd - aheadStart, "consuming more than is buffered")
        aheadStart += count
    }

    /// Makes sure a whole line (at most `maxBytes` including its newline) is at the front of the read-ahead,
    /// reading and compacting as needed. Consumes nothing. `plausible` sees the bytes so far (without newline)
    /// after every read, so garbage is rejected without buffering more than one read.
    func nextLine(maxBytes: Int, plausible: (UnsafeRawBufferPointer) -> Bool) throws -> LineScan {
        var searched = 0
        while true {
            let pending = pendingBytes
            if pending.count > searched,
                let found = memchr(pending.baseAddress! + searched, Int32(UInt8(ascii: "\n")), pending.count - searched)
            {
                let count = pending.baseAddress!.distance(to: UnsafeRawPointer(found))
                if count + 1 > maxBytes { return .tooLong }
                let line = UnsafeRawBufferPointer(rebasing: pending[..<count])
                return plausible(line) ? .line(count: count) : .implausible
            }
            searched = pending.count
            if !plausible(pending) { return .implausible }
            if pending.count >= maxBytes { return .tooLong }
            if aheadEnd == readAhead.count && aheadStart > 0 {
                // Move the partial line to the front to make room.
                readAhead.baseAddress!.copyMemory(from: readAhead.baseAddress! + aheadStart, byteCount: pending.count)
                aheadStart = 0
                aheadEnd = pending.count
            }
            let space = UnsafeMutableRawBufferPointer(rebasing: readAhead[aheadEnd...])
            let got = try file.readSome(into: space, offset: readOffset)
            if got == 0 { return .endOfFile(count: pending.count) }
            readOffset += Int64(got)
            aheadEnd += got
        }
    }

    /// Fills `destination` from the read-ahead and then the file, refilling the read-ahead in the same call.
    /// - Returns: bytes placed in `destination`; fewer than its count only at end of file.
    func readPayload(into destination: UnsafeMutableRawBufferPointer) throws -> Int {
        let buffered = min(aheadEnd - aheadStart, destination.count)
        if buffered > 0 {
            destination.baseAddress!.copyMemory(from: readAhead.baseAddress! + aheadStart, byteCount: buffered)
            aheadStart += buffered
        }
        guard buffered < destination.count else { return buffered }
        // The read-ahead is empty: read the rest straight into the destination, plus a new read-ahead.
        aheadStart = 0
        aheadEnd = 0
        let rest = UnsafeMutableRawBufferPointer(rebasing: destination[buffered...])
        let (got, extra) = try file.readFully(rest, thenSome: readAhead, offset: readOffset)
        readOffset += Int64(got + extra)
        aheadEnd = extra
        return buffered + got
    }

    /// Seeks the file to `offset` and empties the read-ahead (regular files only).
    func seek(toOffset offset: Int64) throws {
        try file.seek(toOffset: offset)
        readOffset = offset
        aheadStart = 0
        aheadEnd = 0
    }
}
