/// One frame's pixels plus what the pipeline knows about it. A reference type so frames move between stages
/// without copying; buffers come from a `FramePool` and go back to it.
///
/// Ownership: exactly one stage owns a buffer at a time (the source while filling it, then the pipeline stages in
/// turn); the pool hands it out and takes it back. Stages read `pixels` concurrently only after the writer
/// has published the buffer through a lock (the pool's or a stage hand-off), which orders the writes.
public final class FrameBuffer: @unchecked Sendable {
    // Invariant for @unchecked Sendable: mutable fields are written only by the buffer's current owner
    // (see the type's doc), and ownership changes only through Mutex-protected hand-offs.

    public let geometry: FrameGeometry
    /// Y, Cb, Cr planes back to back, `geometry.frameBytes` long. Allocated once, freed in deinit.
    public let pixels: UnsafeMutableRawBufferPointer

    /// Source sequence number (0-based frame index in the source, or the driver's sequence number).
    public var sequence: Int = 0
    /// Capture time on the pipeline's monotonic clock, in nanoseconds since the clock's origin.
    public var captureTimestampNs: Int64 = 0
    /// Time the source recorded for the frame (a Y4M `Xts_us` tag), nanoseconds; nil when the file has none.
    public var sourceTimestampNs: Int64?
    /// When the scene in the frame happened, in nanoseconds, for what measures motion (tracking): a live device's
    /// capture stamp; for a file, its recorded time from the start of the run (loops continue it), so the same file
    /// gives the same times whatever the pace and however fast the machine runs.
    public var sceneTimestampNs: Int64 = 0
    /// Index of this buffer in its pool (stable for the buffer's life).
    public let poolIndex: Int

    public init(geometry: FrameGeometry, poolIndex: Int = 0) {
        self.geometry = geometry
        self.poolIndex = poolIndex
        self.pixels = UnsafeMutableRawBufferPointer.allocate(byteCount: geometry.frameBytes, alignment: 64)
        self.pixels.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { pixels.deallocate() }

    /// The luma plane (`widthPx × heightPx` bytes, stride = width).
    public var luma: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: pixels[0..<geometry.lumaBytes])
    }
    /// The Cb plane (empty for mono).
    public var cb: UnsafeMutableRawBufferPointer {
        let start = geometry.lumaBytes
        return UnsafeMutableRawBufferPointer(rebasing: pixels[start..<(start + geometry.chromaPlaneBytes)])
    }
    /// The Cr plane (empty for mono).
    public var cr: UnsafeMutableRawBufferPointer {
        let start = geometry.lumaBytes + geometry.chromaPlaneBytes
        return UnsafeMutableRawBufferPointer(rebasing: pixels[start..<(start + geometry.chromaPlaneBytes)])
    }

    /// Copies pixels and metadata from `other` (same geometry required).
    public func copy(from other: FrameBuffer) {
        precondition(other.geometry == geometry, "copy between frames of different geometry")
        pixels.copyMemory(from: UnsafeRawBufferPointer(other.pixels))
        sequence = other.sequence
        captureTimestampNs = other.captureTimestampNs
        sourceTimestampNs = other.sourceTimestampNs
        sceneTimestampNs = other.sceneTimestampNs
    }
}
