import ColorcamCore

/// The line before each YUV4MPEG2 frame payload: `FRAME`, optional space-separated parameters, `\n`.
///
/// colorcam reads and writes one parameter, `Xts_us=<integer microseconds>` (the source time of the frame);
/// all others are ignored, as the format asks. Parsing and formatting work on caller-provided bytes and
/// allocate nothing, so they can run once per frame in the hot loop.
///
/// Interop note: ffmpeg (5.1, `yuv4mpegdec.c`) skips FRAME parameters but computes each frame's pts as
/// `byte offset / (frame bytes + 6)`, i.e. it assumes bare `FRAME\n` lines. Every `Xts_us` adds ~10–25 bytes,
/// so ffmpeg's pts run ahead by one frame every `frameBytes / extraBytes` frames (≈25,000 frames for 640×480
/// 4:2:0) and a constant-rate ffmpeg output duplicates a frame there. `-fps_mode passthrough` avoids that.
enum Y4MFrameLine {
    /// Longest FRAME line accepted, in bytes including the newline.
    static let maxLineBytes = 1024
    /// Room `format` needs: `FRAME Xts_us=-9223372036854775808\n` is 34 bytes.
    static let maxFormattedBytes = 40

    /// Whether `bytes` (what has arrived so far of a FRAME line, without its newline) can still become one:
    /// a prefix of `FRAME`, or `FRAME` followed by a space. Lets a reader reject garbage without buffering it.
    static func isPlausibleStart(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let tag: StaticString = "FRAME"
        let tagCount = tag.utf8CodeUnitCount
        let common = min(bytes.count, tagCount)
        for index in 0..<common where bytes[index] != tag.utf8Start[index] { return false }
        return bytes.count <= tagCount || bytes[tagCount] == UInt8(ascii: " ")
    }

    /// Parses one FRAME line.
    /// - Parameters:
    ///   - line: the line's bytes without the newline.
    ///   - file, byteOffset, frame: where the line is, for error messages.
    /// - Returns: the `Xts_us` timestamp converted to nanoseconds, or nil when the line has none.
    /// - Throws: `StreamError(.badData)` when the line is not a FRAME line or `Xts_us` is not an integer.
    static func parse(_ line: UnsafeRawBufferPointer, file: String, byteOffset: Int64, frame: Int) throws -> Int64? {
        guard line.count >= 5, isPlausibleStart(line) else {
            throw StreamError(
                .badData, file: file, byteOffset: byteOffset, frame: frame,
                "expected a FRAME line, found \(preview(line))")
        }
        var timestampNs: Int64?
        var index = 5
        while index < line.count {
            if line[index] == UInt8(ascii: " ") { index += 1; continue }
            var end = index
            while end < line.count && line[end] != UInt8(ascii: " ") { end += 1 }
            let token = UnsafeRawBufferPointer(rebasing: line[index..<end])
            if hasTimestampPrefix(token) {
                let digits = UnsafeRawBufferPointer(rebasing: token[7...])
                guard let micros = signedDecimal(digits),
                    case let (nanos, overflow) = micros.multipliedReportingOverflow(by: 1000), !overflow
                else {
                    throw StreamError(
                        .badData, file: file, byteOffset: byteOffset + Int64(index), frame: frame,
                        "Xts_us must be an integer number of microseconds, got \(preview(token))")
                }
                timestampNs = nanos
            }
            index = end
        }
        return timestampNs
    }

    /// Writes `FRAME\n`, or `FRAME Xts_us=<N>\n` when `timestampNs` is given (truncated to whole microseconds),
    /// into `buffer` (at least `maxFormattedBytes` long).
    /// - Returns: the number of bytes written.
    static func format(timestampNs: Int64?, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(buffer.count >= maxFormattedBytes, "FRAME line buffer too small")
        var count = 0
        func put(_ text: StaticString) {
            for index in 0..<text.utf8CodeUnitCount {
                buffer[count] = text.utf8Start[index]
                count += 1
            }
        }
        put("FRAME")
        if let timestampNs {
            put(" Xts_us=")
            let micros = timestampNs / 1000
            if micros < 0 { put("-") }
            var magnitude = micros.magnitude
            var digits = 0
            let start = count
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
                digits += 1
            } while magnitude > 0
            // Digits went in least significant first; reverse them in place.
            var low = start
            var high = count - 1
            while low < high {
                buffer.swapAt(low, high)
                low += 1
                high -= 1
            }
        }
        put("\n")
        return count
    }

    /// Whether `token` starts with `Xts_us=`.
    private static func hasTimestampPrefix(_ token: UnsafeRawBufferPointer) -> Bool {
        let prefix: StaticString = "Xts_us="
        guard token.count >= prefix.utf8CodeUnitCount else { return false }
        for index in 0..<prefix.utf8CodeUnitCount where token[index] != prefix.utf8Start[index] { return false }
        return true
    }

    /// An optionally negative decimal of 1...18 digits.
    private static func signedDecimal(_ text: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let negative = !text.isEmpty && text[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        let digitCount = text.count - index
        guard digitCount >= 1, digitCount <= 18 else { return nil }
        var value: Int64 = 0
        while index < text.count {
            guard isDigit(text[index]) else { return nil }
            value = value * 10 + Int64(text[index] - UInt8(ascii: "0"))
            index += 1
        }
        return negative ? -value : value
    }

    /// Up to 32 bytes of `bytes` for a message, quoted, with non-printable bytes as `\xNN` (error path only).
    static func preview(_ bytes: UnsafeRawBufferPointer) -> String {
        var text = "'"
        for byte in bytes.prefix(32) {
            if byte >= 0x20 && byte < 0x7f && byte != UInt8(ascii: "'") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        text += bytes.count > 32 ? "'…" : "'"
        return text
    }
}
