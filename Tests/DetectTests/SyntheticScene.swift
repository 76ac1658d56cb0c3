import ColorcamCore

@testable import Detect

/// Deterministic synthetic frames for the detect tests: a table (flat or with a seeded fine texture), and prints
/// (a smooth picture, optionally with a white border) placed through a homography, rendered with 4×4 supersampling so
/// edges are anti-aliased like a camera's.
struct SyntheticPhoto {
    let widthPx: Int
    let heightPx: Int
    /// Packed luma, Cb, Cr, each widthPx × heightPx.
    var luma: [UInt8]
    var cb: [UInt8]
    var cr: [UInt8]

    /// A smooth picture: diagonal gradients and soft blobs, colourful when `colour`.
    init(widthPx: Int, heightPx: Int, seed: UInt64, colour: Bool = true, borderFraction: Double = 0) {
        self.widthPx = widthPx
        self.heightPx = heightPx
        var rng = SplitMix(seed)
        let fx = 2 + rng.unit() * 3, fy = 2 + rng.unit() * 3, phase = rng.unit() * 6
        let border = Int(borderFraction * Double(max(widthPx, heightPx)))
        luma = []; cb = []; cr = []
        for y in 0..<heightPx {
            for x in 0..<widthPx {
                let u = Double(x) / Double(widthPx), v = Double(y) / Double(heightPx)
                if x < border || y < border || x >= widthPx - border || y >= heightPx - border {
                    luma.append(242); cb.append(127); cr.append(129)
                    continue
                }
                let l = 110 + 60 * sinApprox(fx * u * 6.283 + phase) * cosApprox(fy * v * 6.283) + 30 * (u - v)
                luma.append(UInt8(max(20, min(200, l))))
                cb.append(colour ? UInt8(128 + 40 * sinApprox(3 * v + phase)) : 128)
                cr.append(colour ? UInt8(128 + 40 * cosApprox(4 * u)) : 128)
            }
        }
    }

    func sample(_ plane: [UInt8], _ x: Double, _ y: Double) -> Double {
        let fx = min(max(x - 0.5, 0), Double(widthPx - 1)), fy = min(max(y - 0.5, 0), Double(heightPx - 1))
        let x0 = Int(fx), y0 = Int(fy), x1 = min(x0 + 1, widthPx - 1), y1 = min(y0 + 1, heightPx - 1)
        let ax = fx - Double(x0), ay = fy - Double(y0)
        let top = Double(plane[y0 * widthPx + x0]) * (1 - ax) + Double(plane[y0 * widthPx + x1]) * ax
        let bottom = Double(plane[y1 * widthPx + x0]) * (1 - ax) + Double(plane[y1 * widthPx + x1]) * ax
        return top * (1 - ay) + bottom * ay
    }
}

/// A tiny deterministic generator (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    /// Roughly normal (sum of 4 uniforms, scaled to unit variance).
    mutating func gaussian() -> Double { (unit() + unit() + unit() + unit() - 2) * 1.7320508 }
}

func sinApprox(_ x: Double) -> Double { Double(sinf(Float(x))) }
func cosApprox(_ x: Double) -> Double { Double(cosf(Float(x))) }

#if canImport(Glibc)
    import Glibc
#endif

/// A soft drop shadow under every photo: the photo's quad moved by `offsetPx`, its edge blurred by a Gaussian of
/// `sigmaPx`, darkening the table by up to `strength` (0...1; luma and chroma's distance from neutral alike).
struct DropShadow {
    var offsetPx: PixelPoint
    var sigmaPx: Double
    var strength: Double

    /// Darkening factor at `p` for a photo at `quad` (clockwise): strength × the blurred inside of the moved quad.
    func darkening(at p: PixelPoint, quad: Quad) -> Double {
        // Signed distance to a convex quad, positive outside: the largest signed distance to its side lines.
        var distance = -Double.infinity
        for side in 0..<4 {
            let a = quad[side] + offsetPx, b = quad[side + 1] + offsetPx
            let u = (b - a) / ((b - a) * (b - a)).sum().squareRoot()
            distance = max(distance, ((p - a) * PixelPoint(u.y, -u.x)).sum())
        }
        return strength * 0.5 * erfc(distance / (sigmaPx * 2.0.squareRoot()))
    }
}

/// Renders a frame: a table of (lumaLevel, cb, cr) with optional seeded texture and drop shadows, then each photo at
/// its quad (photo pixel rectangle → quad), 4×4 supersampled, then seeded noise of `noiseSigma` levels.
func renderFrame(
    widthPx: Int, heightPx: Int, chroma: ChromaFormat = .yuv420(.jpeg), table: (Double, Double, Double),
    textureAmplitude: Double = 0, shadow: DropShadow? = nil, photos: [(SyntheticPhoto, Quad)],
    noiseSigma: Double = 0, seed: UInt64 = 1
) -> FrameBuffer {
    let frame = FrameBuffer(geometry: FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: chroma))
    let g = frame.geometry
    var rng = SplitMix(seed)
    let maps: [(SyntheticPhoto, Homography, Quad)] = photos.compactMap { photo, quad in
        let w = Double(photo.widthPx), h = Double(photo.heightPx)
        guard
            let toPhoto = Homography(
                from: quad,
                to: Quad(
                    PixelPoint(0, 0), PixelPoint(w, 0), PixelPoint(w, h),
                    PixelPoint(0, h)))
        else { return nil }
        return (photo, toPhoto, quad)
    }
    // Full-resolution Y, Cb, Cr as doubles, then subsample chroma.
    var planes = [[Double]](repeating: [Double](repeating: 0, count: widthPx * heightPx), count: 3)
    for y in 0..<heightPx {
        for x in 0..<widthPx {
            var acc = (0.0, 0.0, 0.0)
            for sy in 0..<4 {
                for sx in 0..<4 {
                    let p = PixelPoint(Double(x) + (Double(sx) + 0.5) / 4, Double(y) + (Double(sy) + 0.5) / 4)
                    var value = table
                    if textureAmplitude > 0 {
                        let t =
                            textureAmplitude * sinApprox(p.x * 0.9 + 2 * sinApprox(p.y * 0.05)) * sinApprox(p.y * 1.3)
                        value.0 += t
                    }
                    if let shadow {
                        var lit = 1.0
                        for (_, _, quad) in maps { lit *= 1 - shadow.darkening(at: p, quad: quad) }
                        value = (value.0 * lit, 128 + (value.1 - 128) * lit, 128 + (value.2 - 128) * lit)
                    }
                    for (photo, toPhoto, quad) in maps where quad.contains(p) {
                        if let q = toPhoto.apply(p), q.x >= 0, q.y >= 0, q.x <= Double(photo.widthPx),
                            q.y <= Double(photo.heightPx)
                        {
                            value = (
                                photo.sample(photo.luma, q.x, q.y), photo.sample(photo.cb, q.x, q.y),
                                photo.sample(photo.cr, q.x, q.y)
                            )
                        }
                    }
                    acc.0 += value.0; acc.1 += value.1; acc.2 += value.2
                }
            }
            planes[0][y * widthPx + x] = acc.0 / 16
            planes[1][y * widthPx + x] = acc.1 / 16
            planes[2][y * widthPx + x] = acc.2 / 16
        }
    }
    let luma = frame.luma.bindMemory(to: UInt8.self)
    for k in 0..<(widthPx * heightPx) {
        luma[k] = UInt8(max(0, min(255, planes[0][k] + noiseSigma * rng.gaussian() + 0.5)))
    }
    guard g.chroma.hasChroma else { return frame }
    let (shx, shy) = g.chroma.subsamplingShift
    let cb = frame.cb.bindMemory(to: UInt8.self), cr = frame.cr.bindMemory(to: UInt8.self)
    for cy in 0..<g.chromaHeightPx {
        for cx in 0..<g.chromaWidthPx {
            var sums = (0.0, 0.0), n = 0.0
            for dy in 0..<(1 << shy) {
                for dx in 0..<(1 << shx) {
                    let x = (cx << shx) + dx, y = (cy << shy) + dy
                    guard x < widthPx, y < heightPx else { continue }
                    sums.0 += planes[1][y * widthPx + x]; sums.1 += planes[2][y * widthPx + x]; n += 1
                }
            }
            cb[cy * g.chromaWidthPx + cx] = UInt8(max(0, min(255, sums.0 / n + 0.5)))
            cr[cy * g.chromaWidthPx + cx] = UInt8(max(0, min(255, sums.1 / n + 0.5)))
        }
    }
    return frame
}

/// A quad: a `widthPx × heightPx` rectangle rotated by `angleDegrees` about `centre`, its corners then nudged by
/// `perspective` (pixels, alternately in and out) to mimic camera tilt.
func placedQuad(
    centre: PixelPoint, widthPx: Double, heightPx: Double, angleDegrees: Double,
    perspective: Double = 0
) -> Quad {
    let a = angleDegrees * Double.pi / 180
    let c = cos(a), s = sin(a)
    let local = [
        PixelPoint(-widthPx / 2, -heightPx / 2), PixelPoint(widthPx / 2, -heightPx / 2),
        PixelPoint(widthPx / 2, heightPx / 2), PixelPoint(-widthPx / 2, heightPx / 2)
    ]
    let nudges = [PixelPoint(perspective, 0), PixelPoint(-perspective, 0), PixelPoint(0, 0), PixelPoint(0, 0)]
    let pts = (0..<4).map { i in
        centre + PixelPoint(c * local[i].x - s * local[i].y, s * local[i].x + c * local[i].y) + nudges[i]
    }
    return Quad(pts[0], pts[1], pts[2], pts[3])
}

/// Largest distance between corresponding corners of two quads, both taken clockwise, over the best cyclic
/// pairing (two corners equally near the origin may start either quad's canonical order).
func maxCornerError(_ a: Quad, _ b: Quad) -> Double {
    let x = a.canonicallyOrdered(), y = b.canonicallyOrdered()
    return (0..<4).map { shift in
        (0..<4).map { i in ((x[i] - y[i + shift]) * (x[i] - y[i + shift])).sum().squareRoot() }.max()!
    }.min()!
}

/// Two prints on a dark table, one plain, one with a white border, at different angles with mild perspective: the
/// frame and the two prints' true quads.
func twoPrintsOnADarkTable() -> (frame: FrameBuffer, a: Quad, b: Quad) {
    let a = placedQuad(centre: PixelPoint(190, 230), widthPx: 200, heightPx: 150, angleDegrees: 17, perspective: 6)
    let b = placedQuad(centre: PixelPoint(470, 250), widthPx: 140, heightPx: 190, angleDegrees: -8)
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (55, 120, 135),
        photos: [
            (SyntheticPhoto(widthPx: 200, heightPx: 150, seed: 1), a),
            (SyntheticPhoto(widthPx: 140, heightPx: 190, seed: 2, colour: false, borderFraction: 0.06), b)
        ], noiseSigma: 2)
    return (frame, a, b)
}

/// A grey print with a white border (`borderFraction` of its width) on a near-plain table of luma `tableLuma`: the
/// paper's outline, the picture's outline inside the border, and the frame (640×480).
func borderedPrintScene(
    centre: PixelPoint, widthPx: Int, heightPx: Int, angleDegrees: Double, borderFraction: Double, seed: UInt64,
    tableLuma: Double
) -> (paper: Quad, picture: Quad, frame: FrameBuffer) {
    let paper = placedQuad(
        centre: centre, widthPx: Double(widthPx), heightPx: Double(heightPx), angleDegrees: angleDegrees)
    let photo = SyntheticPhoto(
        widthPx: widthPx, heightPx: heightPx, seed: seed, colour: false, borderFraction: borderFraction)
    let border = Double(Int(borderFraction * Double(widthPx)))  // px, as SyntheticPhoto rounds it
    let picture = placedQuad(
        centre: centre, widthPx: Double(widthPx) - 2 * border, heightPx: Double(heightPx) - 2 * border,
        angleDegrees: angleDegrees)
    let frame = renderFrame(
        widthPx: 640, heightPx: 480, table: (tableLuma, 126, 132), textureAmplitude: 3, photos: [(photo, paper)],
        noiseSigma: 1.5)
    return (paper, picture, frame)
}
