import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// A folder of PNG files played as a stream: its `*.png` files (dot-files skipped), sorted byte-wise by name,
/// decoded with `PNGDecoder` and converted to BT.601 full-range YCbCr 4:2:0 (`420jpeg`).
///
/// Every file must have the first file's size. Transparent pixels are composited onto black. Frames carry no
/// source timestamps; the pipeline paces them at `fps`. The file list and one RGB scratch frame are made at
/// `init`; per frame, libpng allocates its own decoder state (outside colorcam's control) and nothing else is
/// allocated.
///
/// Lifecycle: `init` lists the folder and reads the first file's header → `readFrame` per file until it returns
/// false → `rewind` to loop. Threading: one thread at a time (the capture thread).
public final class PNGFolderSource: FrameSource {
    public let geometry: FrameGeometry
    public let name: String
    public var canRewind: Bool { true }
    /// The pacing rate as a fraction: `fps`/1 for whole rates, else `fps` in thousandths, reduced.
    public let frameRate: (numerator: Int, denominator: Int)
    /// `1e9 / fps`, rounded to the nearest nanosecond.
    public let nominalFrameIntervalNs: Int64
    /// Frames are full-range YCbCr; write this into a Y4M header (`XCOLORRANGE=FULL`) so ffmpeg reads them right.
    public var colorRange: Y4MColorRange { .full }
    /// The PNG paths in play order.
    public let files: [String]

    /// Packed RGB for one decoded image (`widthPx × heightPx × 3` bytes).
    private let rgb: UnsafeMutableRawBufferPointer
    private let decoder = PNGDecoder()
    private var nextIndex = 0

    /// Lists `directory` and reads the first PNG's size.
    /// - Parameters:
    ///   - directory: the folder path.
    ///   - fps: the rate to pace frames at, frames per second (finite, 0.001...10,000).
    /// - Throws: `StreamError`: `.missingInput` when the folder does not exist or cannot be read, `.badData`
    ///   when it holds no PNG or the first PNG cannot be read or is too large, `.usage` for a non-positive fps.
    public convenience init(directory: String, fps: Double = 30) throws {
        let files = try PNGFolderSource.listPNGs(in: directory)
        guard !files.isEmpty else {
            throw StreamError(.badData, file: directory, "the folder holds no .png files")
        }
        try self.init(files: files, name: directory, fps: fps)
    }

    /// Plays the given PNG files in the given order (e.g. one image: `files: [path]`).
    /// - Throws: as `init(directory:fps:)`; `.usage` for an empty list or a bad fps.
    public init(files: [String], name: String, fps: Double = 30) throws {
        guard fps.isFinite, fps >= 0.001, fps <= 10_000 else {
            throw StreamError(.usage, file: name, "fps must be in 0.001...10000, got \(fps)")
        }
        guard let first = files.first else { throw StreamError(.usage, file: name, "no PNG files given") }
        self.name = name
        frameRate = PNGFolderSource.fraction(fps)
        nominalFrameIntervalNs = Int64((1e9 / fps).rounded())
        self.files = files
        let header = try PNGFolderSource.beginRead(first, frame: 0, with: decoder)
        decoder.cancel()
        let widthPx = header.widthPx, heightPx = header.heightPx
        guard widthPx <= FrameGeometry.maxDimensionPx, heightPx <= FrameGeometry.maxDimensionPx,
            widthPx * heightPx * 3 <= FrameGeometry.maxFrameBytes
        else {
            throw StreamError(
                .badData, file: first, frame: 0,
                "image is \(widthPx)x\(heightPx), over colorcam's limit of "
                    + "\(FrameGeometry.maxDimensionPx) pixels a side / \(FrameGeometry.maxFrameBytes) bytes")
        }
        geometry = FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: .yuv420(.jpeg))
        rgb = UnsafeMutableRawBufferPointer.allocate(byteCount: widthPx * heightPx * 3, alignment: 64)
    }

    deinit { rgb.deallocate() }

    /// Decodes the next PNG into `buffer` (`sequence` = its index in `files`, no source timestamp).
    /// - Returns: false after the last file.
    /// - Throws: `StreamError(.badData)` naming the PNG that fails to decode or has a different size.
    public func readFrame(into buffer: FrameBuffer) throws -> Bool {
        guard nextIndex < files.count else { return false }
        guard buffer.geometry == geometry else {
            throw StreamError(
                .internalError, file: name, frame: nextIndex,
                "frame buffer is \(buffer.geometry), the folder is \(geometry)")
        }
        let path = files[nextIndex]
        let header = try PNGFolderSource.beginRead(path, frame: nextIndex, with: decoder)
        guard header.widthPx == geometry.widthPx && header.heightPx == geometry.heightPx else {
            decoder.cancel()
            throw StreamError(
                .badData, file: path, frame: nextIndex,
                "image is \(header.widthPx)x\(header.heightPx) but the folder's first image "
                    + "(\(files[0])) is \(geometry.widthPx)x\(geometry.heightPx)")
        }
        do {
            try decoder.finishRGB(into: rgb.baseAddress!)
        } catch {
            throw StreamError(.badData, file: path, frame: nextIndex, "PNG does not decode: \(error)")
        }
        RGBToYCbCr.convert(
            rgb: UnsafeRawBufferPointer(rgb), widthPx: geometry.widthPx, heightPx: geometry.heightPx,
            into: buffer)
        buffer.sequence = nextIndex
        buffer.sourceTimestampNs = nil
        nextIndex += 1
        return true
    }

    /// `fps` as a reduced fraction: exact for whole rates, to a thousandth otherwise.
    static func fraction(_ fps: Double) -> (numerator: Int, denominator: Int) {
        if fps == fps.rounded() { return (Int(fps), 1) }
        var numerator = Int((fps * 1000).rounded()), denominator = 1000
        var (a, b) = (numerator, denominator)
        while b != 0 { (a, b) = (b, a % b) }
        numerator /= a
        denominator /= a
        return (numerator, denominator)
    }

    /// Starts again at the first file.
    public func rewind() throws { nextIndex = 0 }

    /// Reads a PNG's header with `decoder` (which then holds the image begun).
    private static func beginRead(_ path: String, frame: Int, with decoder: PNGDecoder) throws -> PNGHeader {
        do {
            return try decoder.begin(file: path)
        } catch {
            throw StreamError(.badData, file: path, frame: frame, "not a readable PNG: \(error)")
        }
    }

    /// The folder's `*.png` names (case-insensitive suffix, dot-files skipped) as full paths, sorted byte-wise.
    private static func listPNGs(in directory: String) throws -> [String] {
        guard let handle = opendir(directory) else {
            let code = errno
            let kind: FailureKind = (code == ENOENT || code == EACCES) ? .missingInput : .badData
            let reason = String(cString: strerror(code))
            throw StreamError(kind, file: directory, "cannot open the folder: \(reason) (errno \(code))")
        }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard !name.hasPrefix("."), name.count > 4 else { continue }
            if name.utf8.suffix(4).map({ $0 | 0x20 }) == Array(".png".utf8) { names.append(name) }
        }
        names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return names.map { prefix + $0 }
    }
}
