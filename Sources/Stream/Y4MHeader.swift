import ColorcamCore

/// The YUV4MPEG2 stream header: `YUV4MPEG2 W<w> H<h> F<n>:<d> I<i> A<n>:<d> C<tag> …\n`.
///
/// colorcam reads 8-bit planar progressive streams only. Parameters it does not know (`X…` comments, anything
/// else) are ignored. A missing `C` means `420jpeg`; a missing `F` means 25:1 (as ffmpeg assumes); a missing `A`
/// means unknown (`0:0`). A value type; parsing allocates only the small header line.
public struct Y4MHeader: Sendable, Hashable {
    public var geometry: FrameGeometry
    /// Frame rate as the `F` tag gives it (both parts > 0).
    public var frameRate: (numerator: Int, denominator: Int)
    /// Pixel aspect ratio as the `A` tag gives it; `0:0` when unknown.
    public var pixelAspect: (numerator: Int, denominator: Int)
    /// Sample range from ffmpeg's `XCOLORRANGE=FULL|LIMITED` comment; `.unspecified` when absent.
    public var colorRange: Y4MColorRange

    /// Longest header line accepted, in bytes including the newline (real headers are under 100).
    public static let maxLineBytes = 1024
    /// The stream magic, including its separating space.
    static let magic: [UInt8] = Array("YUV4MPEG2 ".utf8)

    public init(
        geometry: FrameGeometry, frameRate: (numerator: Int, denominator: Int),
        pixelAspect: (numerator: Int, denominator: Int) = (0, 0), colorRange: Y4MColorRange = .unspecified
    ) {
        self.geometry = geometry
        self.frameRate = frameRate
        self.pixelAspect = pixelAspect
        self.colorRange = colorRange
    }

    public static func == (a: Y4MHeader, b: Y4MHeader) -> Bool {
        a.geometry == b.geometry && a.frameRate == b.frameRate && a.pixelAspect == b.pixelAspect
            && a.colorRange == b.colorRange
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(geometry)
        hasher.combine(frameRate.numerator)
        hasher.combine(frameRate.denominator)
    }

    /// The header line colorcam writes: `YUV4MPEG2 W<w> H<h> F<n>:<d> Ip A<n>:<d> C<tag>[ XCOLORRANGE=…]\n`.
    public var line: String {
        "YUV4MPEG2 W\(geometry.widthPx) H\(geometry.heightPx) F\(frameRate.numerator):\(frameRate.denominator)"
            + " Ip A\(pixelAspect.numerator):\(pixelAspect.denominator) C\(geometry.chroma.y4mTag)"
            + (colorRange.y4mComment.map { " " + $0 } ?? "") + "\n"
    }

    /// Parses one header line.
    /// - Parameters:
    ///   - line: the bytes of the line, without its newline.
    ///   - file: the file name for error messages (the header starts at byte 0).
    /// - Throws: `StreamError(.badData)` naming the file and the byte offset of the offending parameter.
    public static func parse(line: UnsafeRawBufferPointer, file: String) throws -> Y4MHeader {
        guard line.count >= magic.count - 1, line.starts(with: magic.dropLast()),
            line.count == magic.count - 1 || line[magic.count - 1] == UInt8(ascii: " ")
        else {
            throw StreamError(
                .badData, file: file, byteOffset: 0,
                "not a YUV4MPEG2 file: it does not start with 'YUV4MPEG2 '")
        }
        var widthPx: Int?
        var heightPx: Int?
        var chroma = ChromaFormat.yuv420(.jpeg)
        var rate = (numerator: 25, denominator: 1)
        var aspect = (numerator: 0, denominator: 0)
        var range = Y4MColorRange.unspecified
        for (offset, token) in tokens(of: line, from: magic.count) {
            let value = UnsafeRawBufferPointer(rebasing: token[(token.startIndex + 1)...])
            let text = String(decoding: value, as: UTF8.self)
            func bad(_ message: String) -> StreamError {
                StreamError(.badData, file: file, byteOffset: Int64(offset), message)
            }
            switch token.first {
            case UInt8(ascii: "W"), UInt8(ascii: "H"):
                let isWidth = token.first == UInt8(ascii: "W")
                let tag = isWidth ? "width" : "height"
                guard !value.isEmpty, value.allSatisfy(isDigit) else {
                    throw bad("\(tag) must be a positive integer, got '\(isWidth ? "W" : "H")\(text)'")
                }
                guard let pixels = decimal(value), pixels <= FrameGeometry.maxDimensionPx else {
                    throw bad("\(tag) \(text) exceeds the limit of \(FrameGeometry.maxDimensionPx) pixels")
                }
                guard pixels > 0 else { throw bad("\(tag) must be a positive integer, got 0") }
                if isWidth { widthPx = pixels } else { heightPx = pixels }
            case UInt8(ascii: "C"):
                guard let format = ChromaFormat(y4mTag: text) else {
                    throw bad(
                        "unsupported colour space 'C\(text)' (supported: "
                            + "420jpeg, 420paldv, 420mpeg2, 420, 422, 444, mono; 8-bit only)")
                }
                chroma = format
            case UInt8(ascii: "F"):
                guard let (num, den) = ratio(value), num > 0, den > 0 else {
                    throw bad("frame rate must be F<num>:<den> with both positive, got 'F\(text)'")
                }
                rate = (num, den)
            case UInt8(ascii: "A"):
                // Aspect is informational; an unreadable one is treated as unknown rather than fatal.
                if let (num, den) = ratio(value) { aspect = (num, den) }
            case UInt8(ascii: "I"):
                switch text {
                case "p", "?": break
                case "t", "b", "m":
                    throw bad("interlaced video ('I\(text)') is not supported; colorcam reads progressive ('Ip') only")
                default:
                    throw bad("unknown interlacing 'I\(text)' (expected Ip)")
                }
            default:
                if text == "COLORRANGE=FULL" && token.first == UInt8(ascii: "X") { range = .full }
                if text == "COLORRANGE=LIMITED" && token.first == UInt8(ascii: "X") { range = .limited }
            // Other X… comments and unknown parameters are ignored.
            }
        }
        guard let widthPx else {
            throw StreamError(.badData, file: file, byteOffset: 0, "header has no width (W) parameter")
        }
        guard let heightPx else {
            throw StreamError(.badData, file: file, byteOffset: 0, "header has no height (H) parameter")
        }
        let geometry = FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: chroma)
        guard geometry.frameBytes <= FrameGeometry.maxFrameBytes else {
            throw StreamError(
                .badData, file: file, byteOffset: 0,
                "a \(geometry) frame is \(geometry.frameBytes) bytes, over the limit of "
                    + "\(FrameGeometry.maxFrameBytes)")
        }
        return Y4MHeader(geometry: geometry, frameRate: rate, pixelAspect: aspect, colorRange: range)
    }

    /// Space-separated tokens of `line` from `start`, each with its byte offset (empty tokens skipped).
    static func tokens(of line: UnsafeRawBufferPointer, from start: Int)
        -> [(offset: Int, token: Slice<UnsafeRawBufferPointer>)]
    {
        var result: [(Int, Slice<UnsafeRawBufferPointer>)] = []
        var index = start
        while index < line.count {
            if line[index] == UInt8(ascii: " ") { index += 1; continue }
            var end = index
            while end < line.count && line[end] != UInt8(ascii: " ") { end += 1 }
            result.append((index, line[index..<end]))
            index = end
        }
        return result
    }

    /// A non-negative decimal integer of at most 9 digits (enough for any sane dimension or rate), else nil.
    static func decimal(_ digits: UnsafeRawBufferPointer) -> Int? {
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        var value = 0
        for byte in digits {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// `<num>:<den>` with both parts non-negative decimals.
    static func ratio(_ text: UnsafeRawBufferPointer) -> (Int, Int)? {
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")),
            let num = decimal(UnsafeRawBufferPointer(rebasing: text[..<colon])),
            let den = decimal(UnsafeRawBufferPointer(rebasing: text[(colon + 1)...]))
        else { return nil }
        return (num, den)
    }
}

/// An ASCII decimal digit.
@inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

/// Whether 8-bit samples use the full 0...255 range (JPEG, colorcam's PNG input) or the limited 16...235/240 range
/// (broadcast video, ffmpeg's default for `yuv420p`). YUV4MPEG2 has no standard tag; ffmpeg writes and reads the
/// comment `XCOLORRANGE=FULL|LIMITED`, and assumes limited for YCbCr when it is absent.
public enum Y4MColorRange: Sendable, Hashable {
    case unspecified
    case full
    case limited

    /// The header comment to write, if any.
    var y4mComment: String? {
        switch self {
        case .unspecified: return nil
        case .full: return "XCOLORRANGE=FULL"
        case .limited: return "XCOLORRANGE=LIMITED"
        }
    }
}
