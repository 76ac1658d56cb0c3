import ColorcamCore

/// Tuning of `PhotoMotionEstimator`.
public struct PhotoMotionParameters: Sendable, Hashable {
    /// Key-frame samples per pyramid level (finest first): at most this many of the photo's strongest-gradient
    /// pixels, spread over a grid of cells. The cost of a frame is about proportional to their sum.
    public var samplesPerLevel = SIMD4<Int>(1000, 1000, 600, 300)
    /// A level with fewer samples than this is skipped (a small photo at a coarse level).
    public var minimumSamples = 50
    /// The coarsest level registered (0 = full resolution … 3). The registration starts from the last frame's
    /// registration moved on by the last frame's motion (constant velocity), so level 2 (4× coarser) holds the
    /// shake of a hand-held camera; a photo that moved further (a slide starting or stopping) is searched for
    /// (`searchRadiusPx`).
    public var coarsestLevel = 2
    /// Cauchy scale floor of the intensity residual (grey levels): pixels differing far more (a hand over the
    /// photo, a glare) weigh little. The scale starts at 64 and follows the residuals' robust spread down to this.
    public var residualScale: Float = 8
    /// A registration is accepted when at least this fraction of the finest level's samples fit within
    /// 3 × `residualScale`.
    public var minimumInlierFraction = 0.6
    /// Samples are taken at least this far inside the photo's outline (full-resolution pixels): its edge and the
    /// table beside it move with the outline's errors, not with the photo.
    public var regionMarginPx = 6.0
    /// A cell votes on the photo's shift when its samples' weaker gradient direction averages at least this (grey
    /// levels² per full-resolution pixel²); cells whose shift disagrees with the largest agreeing group (within
    /// `voteTolerancePx`) are left out of the fit (something moving over the photo).
    public var cellVoteMinimumGradient = 4.0
    public var voteTolerancePx = 1.0
    /// The key frame is replaced when a corner of the photo has moved this far from it (full-resolution pixels).
    public var rekeyDisplacementPx = 60.0
    /// Iterations stop when a step moves the photo's corners less than this (full-resolution pixels, at the finest
    /// level; coarser levels stop at this times their factor).
    public var convergencePx = 0.05
    /// A registration is rejected when the fit places the photo's corners with a standard deviation above this
    /// (full-resolution pixels, from the fit's normal matrix and residuals): a photo with little texture, or with
    /// texture running one way, would move the track by its noise.
    public var maximumCornerUncertaintyPx = 0.2
    /// A frame-to-frame motion whose linear part is not a rotation and scale within this of the identity's scale
    /// (both singular values within 1 ± this) is rejected: a flat print cannot change scale or shape that fast,
    /// so such a fit has slipped (a photo of low contrast can fit a wrong warp with small residuals) …
    public var maximumDeformation = 0.02
    /// … plus this much per pixel the photo's centre moved in the frame: a print sliding across a table seen at
    /// a slant changes its scale in the picture as it goes (at 50° of tilt and 75° of field of view, about 4 %
    /// for 15 px).
    public var deformationPerPx = 0.003

    /// How far a frame-to-frame motion that moved the photo's centre `shiftPx` may stray from a rotation and
    /// uniform scale (`maximumDeformation`, `deformationPerPx`).
    public func deformationTolerance(shiftPx: Double) -> Double { maximumDeformation + deformationPerPx * shiftPx }
    /// When the registration from the constant-velocity guess fails right after a frame that registered, the photo
    /// is searched for within this distance of the guess (full-resolution pixels) and registered again from the
    /// best place (`searchTranslation`): a hand starting or stopping a slide moves a print up to ~15 px between two
    /// frames. 0 turns the search off.
    public var searchRadiusPx = 24.0

    public init() {}
}

/// Measures how one photo moved in the picture between consecutive frames — camera motion and the photo's own
/// together — as an affine map, by registering the photo's own picture to a key frame (inverse-compositional
/// Lucas–Kanade, coarse to fine on a `LumaPyramid`, Cauchy-weighted, with a gain/ramp/bias model of the brightness
/// so that light changing over the photo is not taken for motion).
///
/// Registering to a key frame rather than to the previous frame keeps the estimate from drifting: the motion
/// between two frames is the difference of their two registrations. The key frame is taken again when the
/// registration fails or the photo has moved `rekeyDisplacementPx` from it.
///
/// Why the tracker wants it: the detector's outline of a still print wanders by a fraction of a pixel from frame to
/// frame, and the camera moves it by pixels. With the photo's motion measured from its picture (whose texture pins
/// it far better than four edges do), the tracker moves its estimate by it and averages the outlines over many
/// frames (`PhotoTracker.applyMotion`).
///
/// Ownership and threading: one instance per tracked photo, used from one thread (the capture thread), frames in
/// order. The sample buffers are allocated in `init`; `estimate` allocates nothing.
public final class PhotoMotionEstimator {
    public let parameters: PhotoMotionParameters
    static let gridColumns = 8, gridRows = 6
    /// Floats per sample: normalised position (2), key value (1), steepest-descent row (6), cell (1).
    static let sampleStride = 10
    /// Per level, the key frame's samples (`sampleStride` floats each), their count and capacity.
    var samples = [UnsafeMutablePointer<Float>]()
    var sampleCounts = [Int](repeating: 0, count: LumaPyramid.levelCount)
    var capacities = [Int]()
    /// Per grid cell: the last step's sum of |residual| and sample count; cells left out of the fit (bit per cell).
    let cellSum = UnsafeMutablePointer<Double>.allocate(capacity: 64)
    let cellCount = UnsafeMutablePointer<Double>.allocate(capacity: 64)
    /// The last step's weighted normal matrix (10 × 10, row-major), for `cornerUncertaintyPx`.
    let lastHessian = UnsafeMutablePointer<Double>.allocate(capacity: 100)
    /// Working memory of the fit's functions (each uses it from the start; none calls another while using it).
    let scratch = UnsafeMutablePointer<Double>.allocate(capacity: PhotoMotionEstimator.scratchCount)
    static let scratchCount = 256
    public private(set) var lastUncertaintyPx = 0.0
    var excludedCells: UInt64 = 0
    /// Normalisation: normalised = (pixel − centre) / scale, fixed at the key frame (centre and half size of the
    /// photo), so the fit is equally conditioned for any photo.
    var centre = PixelPoint(0, 0)
    var scalePx = 1.0
    /// The key frame's photo outline (full-resolution pixels).
    var keyRegion: Quad?
    /// Key frame → previous frame, normalised coordinates.
    var previousWarp = Homography.identity
    /// The last frame-to-frame motion (normalised coordinates): this frame's starting guess moves on by it.
    var lastMotion = Homography.identity
    /// The last registration's inlier fraction (diagnostics).
    public private(set) var lastInlierFraction = 0.0
    /// Whether the previous frame's registration succeeded: a failure right after one may be a photo that moved
    /// further than the guess, worth searching for (a photo that never registers, e.g. one without texture, is not
    /// searched for every frame).
    private(set) var wasRegistered = false

    public init(parameters: PhotoMotionParameters = PhotoMotionParameters()) {
        self.parameters = parameters
        cellSum.initialize(repeating: 0, count: 64)
        cellCount.initialize(repeating: 0, count: 64)
        lastHessian.initialize(repeating: 0, count: 100)
        scratch.initialize(repeating: 0, count: PhotoMotionEstimator.scratchCount)
        for level in 0..<LumaPyramid.levelCount {
            let capacity = max(0, parameters.samplesPerLevel[level])
            capacities.append(capacity)
            let s = UnsafeMutablePointer<Float>.allocate(capacity: max(1, capacity * PhotoMotionEstimator.sampleStride))
            s.initialize(repeating: 0, count: max(1, capacity * PhotoMotionEstimator.sampleStride))
            samples.append(s)
        }
    }

    deinit {
        for s in samples { s.deallocate() }
        cellSum.deallocate()
        cellCount.deallocate()
        lastHessian.deallocate()
        scratch.deallocate()
    }

    /// The photo's motion from the previous frame to this one (`pyramid`, already loaded), in full-resolution pixel
    /// coordinates: a point of the photo at `p` in the previous frame is at `motion.apply(p)` in this one. Nil when
    /// it was not measured: no key frame yet (one is taken from `region`, the photo's current outline), a failed
    /// registration (the key is taken again), a photo without texture.
    public func estimate(_ pyramid: LumaPyramid, region: Quad) -> Homography? {
        guard keyRegion != nil else {
            makeKey(pyramid, region: region)
            return nil
        }
        let guess = lastMotion * previousWarp
        var registered = register(pyramid, from: guess)
        if registered == nil, wasRegistered, parameters.searchRadiusPx > 0,
            let found = searchTranslation(pyramid, around: guess)
        {
            registered = register(pyramid, from: found)
        }
        guard let warp = registered, let previousInverse = previousWarp.inverse,
            case let motion = warp * previousInverse,
            PhotoMotionEstimator.isRigid(motion, tolerance: deformationTolerance(motion))
        else {
            wasRegistered = false
            makeKey(pyramid, region: region)
            return nil
        }
        wasRegistered = true
        lastMotion = motion
        previousWarp = warp
        // In pixels before a re-key moves the normalised frame's centre and scale.
        let motionPx = fromNormalised(motion)
        if maxCornerDisplacementPx(warp) > parameters.rekeyDisplacementPx {
            // Where the photo is in this frame: `region` is its outline in the last one.
            makeKey(pyramid, region: region.mapped(by: motionPx) ?? region)
        }
        return motionPx
    }

    // MARK: - Key frame

    /// Makes the current pyramid the key frame for the photo inside `region`: picks each level's strongest-gradient
    /// pixels per grid cell (so no one detail holds most samples) with their steepest-descent rows at the identity.
    /// A tracker keys a new photo's estimator with it on the frame the photo was found, with that frame's outline
    /// (`estimate` would take the key a frame later, from the outline of the frame before).
    public func makeKey(_ pyramid: LumaPyramid, region: Quad) {
        keyRegion = region
        previousWarp = .identity
        lastMotion = .identity
        centre = region.centroid
        var extent = 0.0
        for k in 0..<4 { extent = max(extent, max(abs(region[k].x - centre.x), abs(region[k].y - centre.y))) }
        scalePx = max(1, extent)
        let minX = min(min(region[0].x, region[1].x), min(region[2].x, region[3].x))
        let maxX = max(max(region[0].x, region[1].x), max(region[2].x, region[3].x))
        let minY = min(min(region[0].y, region[1].y), min(region[2].y, region[3].y))
        let maxY = max(max(region[0].y, region[1].y), max(region[2].y, region[3].y))
        for level in 0..<LumaPyramid.levelCount {
            sampleCounts[level] = 0
            let w = pyramid.width(level), h = pyramid.height(level), f = pyramid.factor(level)
            let margin = 3
            let cellsX = PhotoMotionEstimator.gridColumns, cellsY = PhotoMotionEstimator.gridRows
            let bx0 = max(margin, Int(minX / f)), bx1 = min(w - margin, Int(maxX / f) + 1)
            let by0 = max(margin, Int(minY / f)), by1 = min(h - margin, Int(maxY / f) + 1)
            guard bx1 - bx0 >= cellsX, by1 - by0 >= cellsY else { continue }
            let quota = capacities[level] / (cellsX * cellsY)
            for cy in 0..<cellsY {
                for cx in 0..<cellsX {
                    let x0 = bx0 + (bx1 - bx0) * cx / cellsX, x1 = bx0 + (bx1 - bx0) * (cx + 1) / cellsX
                    let y0 = by0 + (by1 - by0) * cy / cellsY, y1 = by0 + (by1 - by0) * (cy + 1) / cellsY
                    selectSamples(
                        pyramid, level: level, x: x0..<x1, y: y0..<y1, quota: quota, cell: cy * cellsX + cx,
                        region: region)
                }
            }
        }
    }

    /// Whether level pixel `(i, j)`'s centre lies inside `region` by at least `regionMarginPx`.
    private func inRegion(_ i: Int, _ j: Int, factor f: Double, region r: Quad) -> Bool {
        let p = PixelPoint((Double(i) + 0.5) * f, (Double(j) + 0.5) * f)
        let orientation: Double = r.signedArea >= 0 ? 1 : -1
        for k in 0..<4 {
            let a = r[k], b = r[(k + 1) % 4]
            let edge = b - a
            let length = (edge.x * edge.x + edge.y * edge.y).squareRoot()
            guard length > 1e-9 else { return false }
            if (edge.x * (p.y - a.y) - edge.y * (p.x - a.x)) / length * orientation < parameters.regionMarginPx {
                return false
            }
        }
        return true
    }

    /// Appends to `level`'s samples up to `quota` pixels of the cell with the strongest gradients (a magnitude
    /// histogram of 64 bins of 2 grey levels per pixel sets the threshold; flat pixels, under 4, are never taken).
    private func selectSamples(
        _ pyramid: LumaPyramid, level: Int, x: Range<Int>, y: Range<Int>, quota: Int, cell: Int,
        region: Quad
    ) {
        let w = pyramid.width(level), plane = pyramid.plane(level), f = pyramid.factor(level)
        let threshold = withUnsafeTemporaryAllocation(of: Int.self, capacity: 64) { histogram -> Int in
            histogram.initialize(repeating: 0)
            for j in y {
                for i in x where inRegion(i, j, factor: f, region: region) {
                    let g = PhotoMotionEstimator.gradient(plane, w, i, j)
                    histogram[min(63, Int((abs(g.x) + abs(g.y)) / 2))] += 1
                }
            }
            var threshold = 63, kept = 0
            while threshold > 2 && kept + histogram[threshold] <= quota {
                kept += histogram[threshold]
                threshold -= 1
            }
            return threshold
        }
        let minMagnitude = Float(threshold + 1) * 2
        let s = samples[level]
        let pxPerUnit = Float(scalePx / f)  // level pixels per normalised unit
        var taken = 0
        for j in y {
            for i in x {
                let g = PhotoMotionEstimator.gradient(plane, w, i, j)
                guard abs(g.x) + abs(g.y) >= minMagnitude, inRegion(i, j, factor: f, region: region) else { continue }
                guard taken < quota, sampleCounts[level] < capacities[level] else { return }
                let xn = Float(((Double(i) + 0.5) * f - centre.x) / scalePx)
                let yn = Float(((Double(j) + 0.5) * f - centre.y) / scalePx)
                // Template gradient per normalised unit times the affine Jacobian at the identity:
                // dx'/dp = (x, 0, y, 0, 1, 0), dy'/dp = (0, x, 0, y, 0, 1).
                let gx = g.x * pxPerUnit, gy = g.y * pxPerUnit
                let row = s + sampleCounts[level] * PhotoMotionEstimator.sampleStride
                row[0] = xn; row[1] = yn; row[2] = plane[j * w + i]
                row[3] = gx * xn; row[4] = gy * xn; row[5] = gx * yn; row[6] = gy * yn
                row[7] = gx; row[8] = gy
                row[9] = Float(cell)
                sampleCounts[level] += 1
                taken += 1
            }
        }
    }

    @inline(__always) static func gradient(_ p: UnsafeMutablePointer<Float>, _ w: Int, _ i: Int, _ j: Int)
        -> SIMD2<Float>
    {
        let c = j * w + i
        return SIMD2((p[c + 1] - p[c - 1]) * 0.5, (p[c + w] - p[c - w]) * 0.5)
    }

    // MARK: - Registration

    /// Key frame → current frame (normalised coordinates), coarse to fine from `initial`; nil when it fails.
    private func register(_ pyramid: LumaPyramid, from initial: Homography) -> Homography? {
        let p = parameters
        var warp = initial
        var inliers = 0.0
        var scale: Float = 64
        var sigmaAtFinest: Float = 0
        var photometric = SIMD4<Double>.zero
        excludedCells = 0
        guard sampleCounts[0] >= p.minimumSamples else { return nil }
        let coarsest = min(max(0, p.coarsestLevel), LumaPyramid.levelCount - 1)
        for level in stride(from: coarsest, through: 0, by: -1)
        where sampleCounts[level] >= p.minimumSamples {
            let iterations = level == 0 ? 6 : 8
            let tolerancePx = p.convergencePx * pyramid.factor(level)
            // Residuals at the starting warp (the last frame's: close) show which cells move on their own.
            if level <= 1 {
                voteCells(pyramid, level: level, warp: warp, photometric: photometric)
            } else if gaussNewtonStep(pyramid, level: level, warp: warp, photometric: photometric, scale: scale) != nil
            {
                excludeDisagreeingCells()
            }
            for iteration in 0..<iterations {
                if iteration == 3 { excludeDisagreeingCells() }
                guard
                    let (step, photometricStep, fraction, sigma) = gaussNewtonStep(
                        pyramid, level: level, warp: warp,
                        photometric: photometric,
                        scale: scale),
                    let stepInverse = step.inverse
                else { return nil }
                photometric += photometricStep
                warp = warp * stepInverse
                inliers = fraction
                scale = max(p.residualScale, 2.4 * sigma)
                sigmaAtFinest = sigma
                if maxCornerDisplacementPx(step) < tolerancePx { break }
            }
        }
        lastInlierFraction = inliers
        lastUncertaintyPx = cornerUncertaintyPx(sigma: sigmaAtFinest)
        return inliers >= p.minimumInlierFraction && lastUncertaintyPx <= p.maximumCornerUncertaintyPx ? warp : nil
    }

    // MARK: - Coordinates

    /// Whether the linear part of `motion` is a rotation and scale within `tolerance` of the identity's scale and
    /// of a similarity's shape (both singular values within 1 ± tolerance): a print is flat and rigid, and between
    /// two frames the camera can change its scale and shape only a little.
    static func isRigid(_ motion: Homography, tolerance: Double) -> Bool {
        let m = motion.h
        let a = m.0 / m.8, b = m.1 / m.8, c = m.3 / m.8, d = m.4 / m.8
        // Singular values of [[a, b], [c, d]].
        let e = (a + d) / 2, f = (a - d) / 2, g = (c + b) / 2, h = (c - b) / 2
        let q = (e * e + h * h).squareRoot(), r = (f * f + g * g).squareRoot()
        let large = q + r, small = abs(q - r)
        return large <= 1 + tolerance && small >= 1 - tolerance
    }

    /// `PhotoMotionParameters.deformationTolerance` for a frame-to-frame `motion` (normalised coordinates, whose
    /// origin is the photo's centre at the key frame: its translation is about the centre's shift).
    func deformationTolerance(_ motion: Homography) -> Double {
        let m = motion.h
        return parameters.deformationTolerance(shiftPx: (m.2 * m.2 + m.5 * m.5).squareRoot() / abs(m.8) * scalePx)
    }

    /// The largest displacement of the key outline's corners under `warp` (normalised), full-resolution pixels.
    func maxCornerDisplacementPx(_ warp: Homography) -> Double {
        guard let r = keyRegion else { return .infinity }
        var worst = 0.0
        for k in 0..<4 {
            let p = PixelPoint((r[k].x - centre.x) / scalePx, (r[k].y - centre.y) / scalePx)
            guard let q = warp.apply(p) else { return .infinity }
            worst = max(worst, ((q.x - p.x) * (q.x - p.x) + (q.y - p.y) * (q.y - p.y)).squareRoot())
        }
        return worst * scalePx
    }

    /// A normalised-coordinate map as a full-resolution pixel map: N⁻¹ · m · N with N(X, Y) = ((X, Y) − centre) / scale.
    private func fromNormalised(_ m: Homography) -> Homography {
        let s = scalePx, cx = centre.x, cy = centre.y
        let n = Homography((1 / s, 0, -cx / s, 0, 1 / s, -cy / s, 0, 0, 1))
        let nInverse = Homography((s, 0, cx, 0, s, cy, 0, 0, 1))
        return nInverse * m * n
    }
}
