import ColorcamCore

/// `PhotoMotionEstimator`'s fit: the robust Gauss–Newton step, the cells' shift votes, the fit's uncertainty.
extension PhotoMotionEstimator {
    /// Bilinear sampling of one pyramid level at the warped positions of key samples. The warp is affine (the
    /// estimator fits no perspective). A value type built once per step: the inner loops touch no class state.
    struct WarpSampler {
        let plane: UnsafeMutablePointer<Float>
        let width: Int, height: Int
        /// Normalised → level pixel: u = a·x + b·y + c, v = d·x + e·y + f (pixel centres at integers).
        let a: Double, b: Double, c: Double, d: Double, e: Double, f: Double

        init(_ pyramid: LumaPyramid, level: Int, warp: Homography, centre: PixelPoint, scalePx: Double) {
            plane = pyramid.plane(level)
            width = pyramid.width(level)
            height = pyramid.height(level)
            let h = warp.h, k = scalePx / pyramid.factor(level)
            let ox = centre.x / pyramid.factor(level) - 0.5, oy = centre.y / pyramid.factor(level) - 0.5
            a = h.0 / h.8 * k; b = h.1 / h.8 * k; c = h.2 / h.8 * k + ox
            d = h.3 / h.8 * k; e = h.4 / h.8 * k; f = h.5 / h.8 * k + oy
        }

        /// The value at key position `(x, y)` (normalised) shifted by `(du, dv)` level pixels, or nil outside.
        @inline(__always) func value(_ x: Double, _ y: Double, du: Double = 0, dv: Double = 0) -> Float? {
            let u = a * x + b * y + c + du, v = d * x + e * y + f + dv
            let iu = Int(u.rounded(.down)), iv = Int(v.rounded(.down))
            guard iu >= 0, iv >= 0, iu + 1 < width, iv + 1 < height else { return nil }
            let fu = Float(u - Double(iu)), fv = Float(v - Double(iv))
            let p = plane + iv * width + iu
            return (p[0] * (1 - fu) + p[1] * fu) * (1 - fv) + (p[width] * (1 - fu) + p[width + 1] * fu) * fv
        }
    }

    /// Per-cell translation votes: each grid cell's samples are aligned by a shift alone (3 Lucas–Kanade steps from
    /// `warp`); cells whose shift is well determined vote, the largest group agreeing within `voteTolerancePx` is
    /// the photo's, and the other cells are left out of the fit (a hand, a print sliding over this one). Cells that
    /// cannot vote (flat) stay in.
    func voteCells(_ pyramid: LumaPyramid, level: Int, warp: Homography, photometric q: SIMD4<Double>) {
        let s = samples[level], stride = PhotoMotionEstimator.sampleStride
        let cells = PhotoMotionEstimator.gridColumns * PhotoMotionEstimator.gridRows
        let tolerance = parameters.voteTolerancePx, minimumGradient = parameters.cellVoteMinimumGradient
        let sampler = WarpSampler(pyramid, level: level, warp: warp, centre: centre, scalePx: scalePx)
        let levelPxPerUnit = scalePx / pyramid.factor(level)
        do {
            let shiftX = scratch, shiftY = shiftX + 64, valid = shiftY + 64
            for cc in 0..<64 { shiftX[cc] = 0; shiftY[cc] = 0; valid[cc] = 0 }
            var start = 0
            let count = sampleCounts[level]
            while start < count {
                let cell = Int(s[start * stride + 9])
                var end = start
                while end < count && Int(s[end * stride + 9]) == cell { end += 1 }
                var dx = 0.0, dy = 0.0, ok = false
                for _ in 0..<3 {
                    var hxx = 0.0, hxy = 0.0, hyy = 0.0, bx = 0.0, by = 0.0, used = 0
                    for index in start..<end {
                        let row = s + index * stride
                        let x = Double(row[0]), y = Double(row[1])
                        guard let value = sampler.value(x, y, du: dx * levelPxPerUnit, dv: dy * levelPxPerUnit)
                        else { continue }
                        let t = Double(row[2])
                        let r = Double(value) - (t * (1 + q[0] + q[1] * x + q[2] * y) + q[3])
                        let gx = Double(row[7]), gy = Double(row[8])
                        hxx += gx * gx; hxy += gx * gy; hyy += gy * gy; bx += gx * r; by += gy * r
                        used += 1
                    }
                    let det = hxx * hyy - hxy * hxy
                    let trace = hxx + hyy
                    let minEigen = trace / 2 - (max(0, trace * trace / 4 - det)).squareRoot()
                    // Well determined: the weaker direction still has real gradient (per sample, in grey levels
                    // per full-resolution pixel squared; the rows are per normalised unit).
                    guard used >= 8, det > 0,
                        minEigen / Double(used) > minimumGradient * scalePx * scalePx
                    else { ok = false; break }
                    dx -= (hyy * bx - hxy * by) / det
                    dy -= (hxx * by - hxy * bx) / det
                    ok = true
                }
                if ok, cell < 64 { shiftX[cell] = dx * scalePx; shiftY[cell] = dy * scalePx; valid[cell] = 1 }
                start = end
            }
            // The largest agreeing group.
            var best = -1, bestSupport = 0
            for i in 0..<cells where valid[i] != 0 {
                var support = 0
                for j in 0..<cells where valid[j] != 0 {
                    let ddx = shiftX[i] - shiftX[j], ddy = shiftY[i] - shiftY[j]
                    if ddx * ddx + ddy * ddy <= tolerance * tolerance { support += 1 }
                }
                if support > bestSupport { bestSupport = support; best = i }
            }
            guard best >= 0, bestSupport >= 3 else { return }
            for j in 0..<cells where valid[j] != 0 {
                let ddx = shiftX[best] - shiftX[j], ddy = shiftY[best] - shiftY[j]
                if ddx * ddx + ddy * ddy > tolerance * tolerance { excludedCells |= 1 << UInt64(j) }
            }
        }
    }

    /// Leaves out of the fit the grid cells whose mean |residual| is far above the typical cell's (more than twice
    /// the median cell's, and above 0.75 × `residualScale`).
    func excludeDisagreeingCells() {
        let cells = PhotoMotionEstimator.gridColumns * PhotoMotionEstimator.gridRows
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 64) { means in
            var k = 0
            for c in 0..<cells where cellCount[c] >= 5 { means[k] = cellSum[c] / cellCount[c]; k += 1 }
            guard k >= 8 else { return }
            // Median by sorting (at most 48 values).
            insertionSort(UnsafeMutableBufferPointer(rebasing: means[0..<k]), by: <)
            let limit = max(Double(parameters.residualScale) * 0.75, 2 * means[k / 2])
            for c in 0..<cells where cellCount[c] >= 5 && cellSum[c] / cellCount[c] > limit {
                excludedCells |= 1 << UInt64(c)
            }
        }
    }

    /// One robust inverse-compositional Gauss–Newton step at `level` with Cauchy weights of `scale` (grey levels):
    /// the increment warp (to be inverted and composed), the photometric increment (added), the fraction of samples
    /// within 3 × `residualScale`, and the residuals' robust standard deviation (1.4826 × median |residual|).
    ///
    /// The key frame's brightness is modelled as `T · (1 + g0 + g1·x + g2·y) + g3` (x, y normalised): exposure
    /// changes, and light that stays with the camera while the photo moves under it, are not taken for motion.
    func gaussNewtonStep(
        _ pyramid: LumaPyramid, level: Int, warp: Homography, photometric q: SIMD4<Double>,
        scale: Float
    ) -> (Homography, SIMD4<Double>, Double, Float)? {
        let s = samples[level], stride = PhotoMotionEstimator.sampleStride
        let count = sampleCounts[level]
        guard count >= parameters.minimumSamples else { return nil }
        let c2 = 1 / Double(scale * scale)
        let inlierLimit = 3 * parameters.residualScale
        let n = 10
        let sampler = WarpSampler(pyramid, level: level, warp: warp, centre: centre, scalePx: scalePx)
        let cellSum = self.cellSum, cellCount = self.cellCount, excluded = excludedCells
        cellSum.update(repeating: 0, count: 64)
        cellCount.update(repeating: 0, count: 64)
        // The normal equations augmented with their right-hand side (n rows of n + 1), then the histogram.
        let columns = n + 1
        scratch.update(repeating: 0, count: n * columns + 64)
        do {
            let hm = scratch, histogram = hm + n * columns
            // The normal equations' rows, 8 + 2 lanes each (the Jacobian: 6 affine, then gain, x-ramp, y-ramp, bias).
            var rows8 = (
                SIMD8<Double>(), SIMD8<Double>(), SIMD8<Double>(), SIMD8<Double>(), SIMD8<Double>(),
                SIMD8<Double>(), SIMD8<Double>(), SIMD8<Double>(), SIMD8<Double>(), SIMD8<Double>()
            )
            var rows2 = (
                SIMD2<Double>(), SIMD2<Double>(), SIMD2<Double>(), SIMD2<Double>(), SIMD2<Double>(),
                SIMD2<Double>(), SIMD2<Double>(), SIMD2<Double>(), SIMD2<Double>(), SIMD2<Double>()
            )
            var b8 = SIMD8<Double>(), b2 = SIMD2<Double>()
            var used = 0, inliers = 0
            for index in 0..<count {
                let row = s + index * stride
                let x = Double(row[0]), y = Double(row[1])
                guard let value = sampler.value(x, y) else { continue }
                let t = Double(row[2])
                let r = Float(Double(value) - (t * (1 + q[0] + q[1] * x + q[2] * y) + q[3]))
                let cell = Int(row[9])
                cellSum[cell] += Double(abs(r)); cellCount[cell] += 1
                if excluded & (1 << UInt64(cell)) != 0 { continue }
                if abs(r) < inlierLimit { inliers += 1 }
                histogram[min(63, Int(abs(r) / 2))] += 1
                used += 1
                let weight = 1 / (1 + Double(r * r) * c2)
                let j8 = SIMD8<Double>(
                    Double(row[3]), Double(row[4]), Double(row[5]), Double(row[6]),
                    Double(row[7]), Double(row[8]), t, t * x)
                let j2 = SIMD2<Double>(t * y, 1)
                let w8 = weight * j8, w2 = weight * j2
                b8 += w8 * Double(r); b2 += w2 * Double(r)
                rows8.0 += w8[0] * j8; rows8.1 += w8[1] * j8; rows8.2 += w8[2] * j8; rows8.3 += w8[3] * j8
                rows8.4 += w8[4] * j8; rows8.5 += w8[5] * j8; rows8.6 += w8[6] * j8; rows8.7 += w8[7] * j8
                rows8.8 += w2[0] * j8; rows8.9 += w2[1] * j8
                rows2.0 += w8[0] * j2; rows2.1 += w8[1] * j2; rows2.2 += w8[2] * j2; rows2.3 += w8[3] * j2
                rows2.4 += w8[4] * j2; rows2.5 += w8[5] * j2; rows2.6 += w8[6] * j2; rows2.7 += w8[7] * j2
                rows2.8 += w2[0] * j2; rows2.9 += w2[1] * j2
            }
            guard used >= parameters.minimumSamples else { return nil }
            withUnsafeBytes(of: rows8) { r8 in
                withUnsafeBytes(of: rows2) { r2 in
                    let a8 = r8.bindMemory(to: SIMD8<Double>.self), a2 = r2.bindMemory(to: SIMD2<Double>.self)
                    for i in 0..<n {
                        for j in 0..<8 { hm[i * columns + j] = a8[i][j] }
                        hm[i * columns + 8] = a2[i][0]; hm[i * columns + 9] = a2[i][1]
                        (lastHessian + i * n).update(from: hm + i * columns, count: n)
                    }
                }
            }
            for j in 0..<8 { hm[j * columns + n] = b8[j] }
            hm[8 * columns + n] = b2[0]; hm[9 * columns + n] = b2[1]
            guard LinearSystem.solve(hm, unknowns: n) else { return nil }
            func x(_ k: Int) -> Double { hm[k * columns + n] }  // the solution
            let step = Homography((1 + x(0), x(2), x(4), x(1), 1 + x(3), x(5), 0, 0, 1))
            let photometricStep = SIMD4(x(6), x(7), x(8), x(9))
            var below = 0.0, bin = 0
            while bin < 63 && below + histogram[bin] < Double(used) / 2 { below += histogram[bin]; bin += 1 }
            let median = (Double(bin) + (Double(used) / 2 - below) / max(1, histogram[bin])) * 2
            return (step, photometricStep, Double(inliers) / Double(max(1, used)), Float(1.4826 * median))
        }
    }

    /// The standard deviation (full-resolution pixels) of the key outline's worst corner as placed by the last
    /// step's fit: σ² · J · H⁻¹ · Jᵀ, with H the last step's weighted normal matrix and σ its residuals' robust
    /// spread. A photo with little texture, or texture running one way, places its corners loosely.
    func cornerUncertaintyPx(sigma: Float) -> Double {
        guard let r = keyRegion else { return .infinity }
        let n = 10, m = 6
        do {
            // The affine block of H⁻¹: H augmented with the first 6 columns of the identity, solved at once.
            let a = scratch, stride = n + m
            for i in 0..<n {
                (a + i * stride).update(from: lastHessian + i * n, count: n)
                for k in 0..<m { a[i * stride + n + k] = i == k ? 1 : 0 }
            }
            guard LinearSystem.solve(a, unknowns: n, rightHandSides: m) else { return .infinity }
            func covariance(_ i: Int, _ j: Int) -> Double { a[i * stride + n + j] }
            var worst = 0.0
            for k in 0..<4 {
                let x = (r[k].x - centre.x) / scalePx, y = (r[k].y - centre.y) / scalePx
                // dx = p0·x + p2·y + p4, dy = p1·x + p3·y + p5.
                let jx = SIMD8<Double>(x, 0, y, 0, 1, 0, 0, 0), jy = SIMD8<Double>(0, x, 0, y, 0, 1, 0, 0)
                var vx = 0.0, vy = 0.0
                for i in 0..<6 {
                    for j in 0..<6 {
                        vx += jx[i] * covariance(i, j) * jx[j]
                        vy += jy[i] * covariance(i, j) * jy[j]
                    }
                }
                worst = max(worst, (max(0, vx) + max(0, vy)).squareRoot())
            }
            return worst * Double(sigma) * scalePx
        }
    }
}
