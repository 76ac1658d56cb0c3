import CTurboJPEG
import ColorcamCore

/// One encoded JPEG image in a buffer the encoder reuses once no client is sending it.
///
/// Ownership: created and recycled by `JPEGFramePool` on the event-loop thread; clients hold a reference while a
/// send is in progress (`users` counts them). Threading: event-loop thread only.
final class JPEGFrame {
    /// Worst-case sized storage (`tjBufSize`), allocated once.
    let storage: UnsafeMutableRawBufferPointer
    /// Bytes of JPEG data at the start of `storage`.
    var byteCount = 0
    /// The source frame's sequence number.
    var sequence = 0
    var widthPx = 0
    var heightPx = 0
    /// Clients currently sending this frame; the pool reuses it only at 0.
    var users = 0

    init(capacity: Int) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
    }
    deinit { storage.deallocate() }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[0..<byteCount]) }
}

/// Encodes planar YCbCr `FrameBuffer`s to baseline JPEG with libturbojpeg, straight from the planes (no RGB pass).
///
/// Lifecycle: one TurboJPEG compressor handle for the encoder's life. Threading: one thread at a time.
final class JPEGEncoder {
    private let handle: tjhandle
    /// JPEG quality 1...100.
    let quality: Int32

    init(quality: Int32 = 80) throws {
        guard let handle = tjInitCompress() else {
            throw PreviewError(.unavailable, subject: "jpeg encoder", "tjInitCompress failed")
        }
        self.handle = handle
        self.quality = quality
    }

    deinit { tjDestroy(handle) }

    static func subsampling(of chroma: ChromaFormat) -> Int32 {
        switch chroma {
        case .yuv420: return Int32(TJSAMP_420.rawValue)
        case .yuv422: return Int32(TJSAMP_422.rawValue)
        case .yuv444: return Int32(TJSAMP_444.rawValue)
        case .mono: return Int32(TJSAMP_GRAY.rawValue)
        }
    }

    /// The buffer size that holds any JPEG of `geometry` (so encoding never reallocates).
    static func worstCaseBytes(for geometry: FrameGeometry) -> Int {
        Int(tjBufSize(Int32(geometry.widthPx), Int32(geometry.heightPx), subsampling(of: geometry.chroma)))
    }

    /// Encodes `frame` into `output` (whose storage must hold `worstCaseBytes(for: frame.geometry)`).
    /// - Throws: `PreviewError(.internalError)` with TurboJPEG's message when compression fails.
    func encode(_ frame: FrameBuffer, into output: JPEGFrame) throws {
        let geometry = frame.geometry
        precondition(output.storage.count >= Self.worstCaseBytes(for: geometry), "JPEG buffer too small")
        var planes: [UnsafePointer<UInt8>?] = [
            UnsafePointer(frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self)),
            geometry.chroma.hasChroma ? UnsafePointer(frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self)) : nil,
            geometry.chroma.hasChroma ? UnsafePointer(frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self)) : nil
        ]
        var strides: [Int32] = [Int32(geometry.widthPx), Int32(geometry.chromaWidthPx), Int32(geometry.chromaWidthPx)]
        var jpegPointer: UnsafeMutablePointer<UInt8>? = output.storage.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var jpegSize = UInt(output.storage.count)
        let status = planes.withUnsafeMutableBufferPointer { planePointers in
            tjCompressFromYUVPlanes(
                handle, planePointers.baseAddress, Int32(geometry.widthPx), &strides, Int32(geometry.heightPx),
                Self.subsampling(of: geometry.chroma), &jpegPointer, &jpegSize, quality, TJFLAG_NOREALLOC)
        }
        guard status == 0 else {
            let message = String(cString: tjGetErrorStr2(handle))
            throw PreviewError(
                .internalError, subject: "jpeg encoder",
                "frame \(frame.sequence) (\(geometry)): \(message)")
        }
        output.byteCount = Int(jpegSize)
        output.sequence = frame.sequence
        output.widthPx = geometry.widthPx
        output.heightPx = geometry.heightPx
    }
}

/// The JPEG buffers clients send from: reuses a buffer no client is sending and that is not the newest frame,
/// allocating a new one only when all are in use (so at most clients + 2 buffers ever exist).
/// Threading: event-loop thread only.
final class JPEGFramePool {
    private var frames: [JPEGFrame] = []
    private var capacity = 0

    /// A buffer to encode into, other than `current` (the newest frame, which new clients may still pick up).
    func take(capacity needed: Int, excluding current: JPEGFrame?) -> JPEGFrame {
        if needed > capacity {
            // Geometry grew: drop idle buffers that are too small; busy ones are released when their sends end.
            frames.removeAll { $0.users == 0 }
            capacity = needed
        }
        if let free = frames.first(where: { $0.users == 0 && $0 !== current && $0.storage.count >= needed }) {
            return free
        }
        let frame = JPEGFrame(capacity: capacity)
        frames.append(frame)
        return frame
    }

    /// Buffers allocated so far (for tests and the load report).
    var allocatedCount: Int { frames.count }
}
