import CTurboJPEG
import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// A packed 8-bit sRGB image (R G B per pixel, rows packed, no padding).
public struct RGBImage: Sendable {
    public let widthPx: Int
    public let heightPx: Int
    public var pixels: [UInt8]

    public init(widthPx: Int, heightPx: Int, pixels: [UInt8]) {
        precondition(pixels.count == widthPx * heightPx * 3, "pixel count disagrees with the size")
        self.widthPx = widthPx
        self.heightPx = heightPx
        self.pixels = pixels
    }
}

/// Why an image or model file could not be read, written or used: one line naming the file.
public struct ImageFileError: ColorcamError {
    public let kind: FailureKind
    public let file: String
    public let message: String
    public init(_ kind: FailureKind, file: String, _ message: String) {
        self.kind = kind
        self.file = file
        self.message = message
    }
    public var description: String { "\(file): \(message)" }
}

/// PNG and JPEG files in and out (ColorcamCore's `PNGDecoder`/`PNGEncoder`, TurboJPEG), chosen by the file's first bytes on
/// read and by the extension on write. Grey, palette and alpha PNGs are converted to RGB (alpha composited on
/// black); grey JPEGs too. 16-bit PNGs and CMYK/YCCK JPEGs are refused with a one-line `badData` error, as are
/// empty, truncated and oversized (> 16384 px a side) images. Not thread-confined; allocates per call.
public enum ImageFile {
    public static let maxSidePx = 16384

    public static func read(_ path: String) throws -> RGBImage {
        try decode(try readBytes(path), path: path)
    }

    /// The whole file at `path`, read through `FileDescriptor` (`EINTR` retried).
    /// - Throws: `ImageFileError(.missingInput)` naming the file when it cannot be opened, and `.badData` with the
    ///   byte offset when a read fails there (never a silently shorter buffer).
    public static func readBytes(_ path: String) throws -> [UInt8] {
        let file: FileDescriptor
        do { file = try FileDescriptor.open(path, O_RDONLY) } catch {
            throw ImageFileError(.missingInput, file: path, "cannot open (\(error))")
        }
        defer { try? file.close() }
        var bytes: [UInt8] = []
        do { try file.readAll(into: &bytes) } catch {
            throw ImageFileError(.badData, file: path, "read failed at byte \(bytes.count) (\(error))")
        }
        return bytes
    }

    /// Decodes a PNG or JPEG file's bytes (`path` names it in errors).
    public static func decode(_ bytes: [UInt8], path: String) throws -> RGBImage {
        if bytes.count >= 8 && bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return try readPNG(bytes, path: path)
        }
        if bytes.count >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF {
            return try readJPEG(bytes, path: path)
        }
        throw ImageFileError(.badData, file: path, bytes.isEmpty ? "empty file" : "not a PNG or JPEG file (byte 0)")
    }

    static func checkSize(_ w: Int, _ h: Int, path: String) throws {
        guard w >= 1, h >= 1 else {
            throw ImageFileError(.badData, file: path, "image is \(w)x\(h) px: nothing to colorize")
        }
        guard w <= maxSidePx, h <= maxSidePx else {
            throw ImageFileError(.badData, file: path, "image is \(w)x\(h) px: larger than \(maxSidePx) px a side")
        }
    }

    static func readPNG(_ bytes: [UInt8], path: String) throws -> RGBImage {
        let decoder = PNGDecoder()
        // libpng reads from the buffer until finishRGB, so the whole read stays inside one closure.
        return try bytes.withUnsafeBytes { raw in
            let header: PNGHeader
            do {
                header = try decoder.begin(bytes: raw)
            } catch {
                throw ImageFileError(.badData, file: path, "PNG header: \(error)")
            }
            defer { decoder.cancel() }
            if header.sixteenBit {
                throw ImageFileError(
                    .badData, file: path, "16-bit PNG is not supported (convert it to 8 bits per channel)")
            }
            let w = header.widthPx, h = header.heightPx
            try checkSize(w, h, path: path)
            var pixels = [UInt8](repeating: 0, count: w * h * 3)
            do {
                try pixels.withUnsafeMutableBytes { try decoder.finishRGB(into: $0.baseAddress!) }
            } catch {
                throw ImageFileError(.badData, file: path, "PNG data: \(error)")
            }
            return RGBImage(widthPx: w, heightPx: h, pixels: pixels)
        }
    }

    static func readJPEG(_ bytes: [UInt8], path: String) throws -> RGBImage {
        guard let handle = tjInitDecompress() else {
            throw ImageFileError(.internalError, file: path, "TurboJPEG init failed")
        }
        defer { tjDestroy(handle) }
        var w: Int32 = 0, h: Int32 = 0, subsamp: Int32 = 0, colorspace: Int32 = 0
        let header = bytes.withUnsafeBufferPointer {
            tjDecompressHeader3(handle, $0.baseAddress, UInt(bytes.count), &w, &h, &subsamp, &colorspace)
        }
        if header != 0 {
            throw ImageFileError(.badData, file: path, "JPEG header: \(String(cString: tjGetErrorStr2(handle)))")
        }
        if colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue) {
            throw ImageFileError(.badData, file: path, "CMYK/YCCK JPEG is not supported (convert it to RGB)")
        }
        try checkSize(Int(w), Int(h), path: path)
        var pixels = [UInt8](repeating: 0, count: Int(w) * Int(h) * 3)
        let rc = bytes.withUnsafeBufferPointer { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                tjDecompress2(
                    handle, src.baseAddress, UInt(bytes.count), dst.baseAddress, w, 0, h,
                    Int32(TJPF_RGB.rawValue), 0)
            }
        }
        if rc != 0 {
            // A warning (e.g. premature end of data) still leaves an image; truncation is an error here.
            throw ImageFileError(.badData, file: path, "JPEG data: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return RGBImage(widthPx: Int(w), heightPx: Int(h), pixels: pixels)
    }

    /// Writes `image` as PNG (`.png`) or JPEG (`.jpg`/`.jpeg`, quality `jpegQuality`, 4:4:4).
    public static func write(_ image: RGBImage, to path: String, jpegQuality: Int = 95) throws {
        let lower = path.lowercased()
        if lower.hasSuffix(".png") {
            do {
                try image.pixels.withUnsafeBytes {
                    try PNGEncoder.writeRGB($0, widthPx: image.widthPx, heightPx: image.heightPx, to: path)
                }
            } catch {
                throw ImageFileError(.ioError, file: path, "cannot write PNG: \(error)")
            }
        } else if lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg") {
            guard let handle = tjInitCompress() else {
                throw ImageFileError(.internalError, file: path, "TurboJPEG init failed")
            }
            defer { tjDestroy(handle) }
            var out: UnsafeMutablePointer<UInt8>? = nil
            var size: UInt = 0
            let rc = image.pixels.withUnsafeBufferPointer {
                tjCompress2(
                    handle, $0.baseAddress, Int32(image.widthPx), 0, Int32(image.heightPx),
                    Int32(TJPF_RGB.rawValue), &out, &size, Int32(TJSAMP_444.rawValue), Int32(jpegQuality), 0)
            }
            defer { if let out { tjFree(out) } }
            guard rc == 0, let out else {
                throw ImageFileError(
                    .ioError, file: path, "cannot encode JPEG: \(String(cString: tjGetErrorStr2(handle)))")
            }
            guard let f = fopen(path, "wb") else {
                throw ImageFileError(.ioError, file: path, "cannot create (\(String(cString: strerror(errno))))")
            }
            let written = fwrite(out, 1, Int(size), f)
            if fclose(f) != 0 || written != Int(size) {
                throw ImageFileError(.ioError, file: path, "short write (\(written) of \(size) bytes)")
            }
        } else {
            throw ImageFileError(.usage, file: path, "output must end in .png, .jpg or .jpeg")
        }
    }
}
