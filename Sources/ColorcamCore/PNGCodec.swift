import CPNG

/// Why libpng could not read or write a PNG, in its own words (one line). Callers wrap it in their own error, which
/// names the file (and the frame) it concerns.
public struct PNGFailure: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// A PNG's header, as `PNGDecoder.begin` reads it.
public struct PNGHeader: Sendable, Equatable {
    public let widthPx: Int
    public let heightPx: Int
    /// 16 bits per channel (libpng's simplified API then treats the samples as linear light).
    public let sixteenBit: Bool

    public init(widthPx: Int, heightPx: Int, sixteenBit: Bool) {
        self.widthPx = widthPx
        self.heightPx = heightPx
        self.sixteenBit = sixteenBit
    }
}

/// colorcam's one PNG reader: libpng's simplified API, always decoding to packed 8-bit RGB (grey and palette images
/// are expanded, alpha is composited onto black).
///
/// Reading is two steps, so a caller can check the size before it hands over pixel storage: `begin` (the header) →
/// `finishRGB` (the pixels) or `cancel`. The decoder owns libpng's control structure at a fixed heap address: libpng
/// keeps that address as its error handler's context between the two steps, so it must never live in a Swift
/// variable, which may move. One decoder serves any number of images; per image libpng allocates its own decoder
/// state and nothing else is allocated.
/// Threading: one thread at a time. Ownership: bytes given to `begin(bytes:)` must stay valid until `finishRGB` or
/// `cancel`.
public final class PNGDecoder {
    private let image: UnsafeMutablePointer<png_image>
    private var open = false

    public init() {
        image = .allocate(capacity: 1)
        image.initialize(to: png_image())
    }

    deinit {
        cancel()
        image.deallocate()
    }

    /// Reads the header of the PNG file at `path` (cancelling an image begun before).
    public func begin(file path: String) throws -> PNGHeader {
        try begin { png_image_begin_read_from_file($0, path) }
    }

    /// Reads the header of a PNG in memory (cancelling an image begun before).
    public func begin(bytes: UnsafeRawBufferPointer) throws -> PNGHeader {
        try begin { png_image_begin_read_from_memory($0, bytes.baseAddress, bytes.count) }
    }

    private func begin(_ read: (UnsafeMutablePointer<png_image>) -> Int32) throws -> PNGHeader {
        cancel()
        image.pointee = png_image()
        image.pointee.version = ccpng_image_version
        guard read(image) != 0 else {
            let failure = PNGFailure(message: message)
            png_image_free(image)
            throw failure
        }
        open = true
        // PNG_FORMAT_FLAG_LINEAR (0x04): 16-bit channels.
        return PNGHeader(
            widthPx: Int(image.pointee.width), heightPx: Int(image.pointee.height),
            sixteenBit: image.pointee.format & 0x04 != 0)
    }

    /// Decodes the image begun into `rgb` as packed 8-bit RGB (`widthPx × heightPx × 3` bytes, the caller's), and
    /// ends it.
    /// - Throws: `PNGFailure` for corrupt or truncated data (the image is ended all the same).
    public func finishRGB(into rgb: UnsafeMutableRawPointer) throws {
        precondition(open, "finishRGB without a successful begin")
        open = false
        image.pointee.format = ccpng_format_rgb
        var black = png_color(red: 0, green: 0, blue: 0)
        let ok = png_image_finish_read(image, &black, rgb, 0, nil)
        if ok == 0 || ccpng_image_failed(image) != 0 {
            let failure = PNGFailure(message: message)
            png_image_free(image)
            throw failure
        }
    }

    /// Ends the image begun without decoding it (a no-op when none is).
    public func cancel() {
        guard open else { return }
        open = false
        png_image_free(image)
    }

    private var message: String { libpngMessage(image) }
}

/// colorcam's one PNG writer: packed 8-bit RGB to a file with libpng's simplified API. Threading: any thread.
public enum PNGEncoder {
    /// - Parameter rgb: `widthPx × heightPx × 3` bytes, rows packed.
    /// - Throws: `PNGFailure` when libpng cannot write the file.
    public static func writeRGB(_ rgb: UnsafeRawBufferPointer, widthPx: Int, heightPx: Int, to path: String) throws {
        precondition(rgb.count >= widthPx * heightPx * 3, "fewer bytes than the image needs")
        let image = UnsafeMutablePointer<png_image>.allocate(capacity: 1)
        defer { image.deallocate() }
        image.initialize(to: png_image())
        image.pointee.version = ccpng_image_version
        image.pointee.width = UInt32(widthPx)
        image.pointee.height = UInt32(heightPx)
        image.pointee.format = ccpng_format_rgb
        guard png_image_write_to_file(image, path, 0, rgb.baseAddress, Int32(widthPx * 3), nil) != 0 else {
            let failure = PNGFailure(message: libpngMessage(image))
            png_image_free(image)
            throw failure
        }
        png_image_free(image)
    }
}

/// libpng's message for the last call on `image` (a fixed 64-byte C string inside the control structure).
private func libpngMessage(_ image: UnsafeMutablePointer<png_image>) -> String {
    withUnsafeBytes(of: &image.pointee.message) { bytes in
        let text = bytes.prefix(while: { $0 != 0 })
        return text.isEmpty ? "unknown libpng error" : String(decoding: text, as: UTF8.self)
    }
}
