import ColorcamCore

/// A deterministic synthetic clip: a drifting luma gradient, a bouncing bright square and a row of blocks that
/// encode the frame number in binary, in 4:2:0. For demos and benchmarks before real scenes exist; every frame
/// is a pure function of its index, so two runs produce identical files.
///
/// Threading: one thread at a time, like every `FrameSource`.
public final class TestPatternSource: FrameSource {
    public let geometry: FrameGeometry
    public let nominalFrameIntervalNs: Int64
    public let frameRate: (numerator: Int, denominator: Int)
    public let name = "test pattern"
    public let canRewind = true
    public let frameCount: Int
    private var next = 0

    public init(widthPx: Int, heightPx: Int, fps: Int, frameCount: Int) {
        geometry = FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: .yuv420(.jpeg))
        frameRate = (fps, 1)
        nominalFrameIntervalNs = 1_000_000_000 / Int64(fps)
        self.frameCount = frameCount
    }

    public func readFrame(into buffer: FrameBuffer) throws -> Bool {
        guard next < frameCount else { return false }
        let t = next
        let w = geometry.widthPx, h = geometry.heightPx
        let y = buffer.luma.bindMemory(to: UInt8.self)
        for row in 0..<h {
            let base = row * w
            let rowValue = (row + 2 * t) & 0xFF
            for col in 0..<w { y[base + col] = UInt8(truncatingIfNeeded: (col + rowValue) >> 1 &+ 32) }
        }
        // Bouncing square, a quarter of the shorter side.
        let side = max(2, min(w, h) / 4)
        let spanX = max(1, w - side), spanY = max(1, h - side)
        let px = bounce(t * 5, spanX), py = bounce(t * 3, spanY)
        for row in py..<min(h, py + side) { for col in px..<min(w, px + side) { y[row * w + col] = 235 } }
        // Frame number in binary, 16 blocks along the top.
        let block = max(1, w / 32)
        for bit in 0..<16 where (t >> bit) & 1 == 1 {
            for row in 0..<min(h, block) {
                for col in (bit * 2 * block)..<min(w, bit * 2 * block + block) { y[row * w + col] = 16 }
            }
        }
        let cw = geometry.chromaWidthPx, ch = geometry.chromaHeightPx
        let cb = buffer.cb.bindMemory(to: UInt8.self), cr = buffer.cr.bindMemory(to: UInt8.self)
        for row in 0..<ch {
            for col in 0..<cw {
                cb[row * cw + col] = UInt8(truncatingIfNeeded: 128 + (col * 64 / max(1, cw)) - 32)
                cr[row * cw + col] = UInt8(truncatingIfNeeded: 128 + ((row + t) % max(1, ch)) * 64 / max(1, ch) - 32)
            }
        }
        buffer.sequence = t
        buffer.sourceTimestampNs = nil
        next += 1
        return true
    }

    public func rewind() throws { next = 0 }

    private func bounce(_ position: Int, _ span: Int) -> Int {
        let period = 2 * span
        let p = position % period
        return p < span ? p : period - p
    }
}
