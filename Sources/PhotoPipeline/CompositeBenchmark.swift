import ColorcamCore
import Detect
import Foundation
import Infer

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam bench composite`: the output thread's per-frame cost of writing cached colours into a frame —
/// `photos` prints of about 190×175 px on a 640×480 4:2:0 frame (smooth photo-like shading with fine texture), ab
/// from a 256² grid, grey background.
/// Measures the calling thread's CPU time (so other load on the machine barely moves it) and wall time.
public enum CompositeBenchmark {
    public struct Result: Sendable {
        public var cpuMsPerFrame: [Double]
        public var wallMsPerFrame: [Double]
        public var photoPixels: Int
        /// FNV-1a (64-bit) of the last run's composited frame (all planes): two builds that composite alike print
        /// the same value.
        public var outputChecksum: UInt64
    }

    public static func run(photos: Int, runs: Int, encoding: YCbCrEncoding = .bt601Full) -> Result {
        let geometry = FrameGeometry(widthPx: 640, heightPx: 480, chroma: .yuv420(.jpeg))
        let frame = FrameBuffer(geometry: geometry)
        let pristine = FrameBuffer(geometry: geometry)
        let luma = pristine.luma.bindMemory(to: UInt8.self)
        // Photo-like content: smooth shading over the full range plus fine texture (some highlights and shadows).
        for y in 0..<geometry.heightPx {
            for x in 0..<geometry.widthPx {
                let shade = 128 + 110 * sin(Double(x) / 23) * cos(Double(y) / 31) + Double((x * 7 + y * 13) % 9) - 4
                luma[y * geometry.widthPx + x] = UInt8(max(0, min(255, shade)))
            }
        }
        pristine.cb.initializeMemory(as: UInt8.self, repeating: 128)
        pristine.cr.initializeMemory(as: UInt8.self, repeating: 128)
        let n = 256
        let ab = UnsafeMutablePointer<Float>.allocate(capacity: 2 * n * n)
        defer { ab.deallocate() }
        for i in 0..<(2 * n * n) { ab[i] = Float((i % 97) - 48) * 0.8 }
        let quads = (0..<max(1, photos)).map { k -> Quad in
            let x = 20 + Double(k % 3) * 205, y = 40 + Double(k / 3 % 2) * 200
            return Quad(
                PixelPoint(x, y), PixelPoint(x + 190, y + 8), PixelPoint(x + 184, y + 180), PixelPoint(x - 6, y + 172))
        }
        let codec = PixelCodec(encoding: encoding)
        let cb = UnsafeMutablePointer<UInt8>.allocate(capacity: geometry.chromaPlaneBytes)
        let cr = UnsafeMutablePointer<UInt8>.allocate(capacity: geometry.chromaPlaneBytes)
        defer { cb.deallocate(); cr.deallocate() }
        var cpu: [Double] = [], wall: [Double] = []
        for run in 0...runs {
            frame.copy(from: pristine)
            let cpu0 = SystemClock.threadCPUNs(), wall0 = SystemClock.rawNs()
            cb.update(from: frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self), count: geometry.chromaPlaneBytes)
            cr.update(from: frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self), count: geometry.chromaPlaneBytes)
            frame.cb.initializeMemory(as: UInt8.self, repeating: 128)
            frame.cr.initializeMemory(as: UInt8.self, repeating: 128)
            for quad in quads {
                ColourCompositor.composite(
                    ColourCompositor.Grid(ab: ab, widthPx: n, heightPx: n, scale: 1), into: frame,
                    at: quad, originalCb: cb, originalCr: cr, codec: codec, featherPx: 2)
            }
            if run > 0 {  // the first is a warm-up
                cpu.append(Double(SystemClock.threadCPUNs() - cpu0) / 1e6)
                wall.append(Double(SystemClock.rawNs() - wall0) / 1e6)
            }
        }
        var checksum: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in UnsafeRawBufferPointer(frame.pixels) { checksum = (checksum ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Result(
            cpuMsPerFrame: cpu, wallMsPerFrame: wall, photoPixels: Int(quads.map(\.area).reduce(0, +)),
            outputChecksum: checksum)
    }
}
