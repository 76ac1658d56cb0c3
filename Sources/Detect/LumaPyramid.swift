import ColorcamCore

/// A frame's luma as floats at full resolution and three 2× box-downscaled levels, built once per frame and read by
/// every `PhotoMotionEstimator` of the stream.
///
/// Level `l` has `width(l) × height(l)` pixels; a level pixel covers `factor(l)` full-resolution pixels per side
/// (1, 2, 4, 8), and level pixel `(i, j)` has its centre at full-resolution `((i + 0.5)·f, (j + 0.5)·f)`.
///
/// Ownership and threading: one instance per stream geometry, used from one thread. All planes are allocated in
/// `init`; `load` allocates nothing. The planes are valid until the next `load`.
public final class LumaPyramid {
    public static let levelCount = 4
    public let geometry: FrameGeometry
    private var widths = [Int](), heights = [Int](), factors = [Double]()
    private var planes = [UnsafeMutablePointer<Float>]()

    public init(geometry: FrameGeometry) {
        self.geometry = geometry
        var w = geometry.widthPx, h = geometry.heightPx, f = 1.0
        for level in 0..<LumaPyramid.levelCount {
            if level > 0 { w = max(1, w / 2); h = max(1, h / 2); f *= 2 }
            widths.append(w); heights.append(h); factors.append(f)
            let plane = UnsafeMutablePointer<Float>.allocate(capacity: w * h)
            plane.initialize(repeating: 0, count: w * h)
            planes.append(plane)
        }
    }

    deinit { for plane in planes { plane.deallocate() } }

    @inline(__always) public func width(_ level: Int) -> Int { widths[level] }
    @inline(__always) public func height(_ level: Int) -> Int { heights[level] }
    /// Full-resolution pixels per level pixel (per side).
    @inline(__always) public func factor(_ level: Int) -> Double { factors[level] }
    /// The level's plane, row-major, `width(level)` floats per row (grey levels 0–255).
    @inline(__always) public func plane(_ level: Int) -> UnsafeMutablePointer<Float> { planes[level] }

    /// Fills every level from `frame`'s luma (the frame's geometry must be the pyramid's).
    public func load(_ frame: FrameBuffer) {
        precondition(frame.geometry == geometry, "LumaPyramid geometry mismatch")
        let src = UnsafePointer(frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self))
        let fullWidth = geometry.widthPx
        let w0 = widths[0], h0 = heights[0], out0 = planes[0]
        for j in 0..<h0 {
            let row = src + j * fullWidth, out = out0 + j * w0
            for i in 0..<w0 { out[i] = Float(row[i]) }
        }
        for level in 1..<LumaPyramid.levelCount {
            let w = widths[level], h = heights[level], pw = widths[level - 1]
            let src = planes[level - 1], dst = planes[level]
            for j in 0..<h {
                let r0 = src + 2 * j * pw, r1 = r0 + pw, out = dst + j * w
                for i in 0..<w { out[i] = (r0[2 * i] + r0[2 * i + 1] + r1[2 * i] + r1[2 * i + 1]) * 0.25 }
            }
        }
    }
}
