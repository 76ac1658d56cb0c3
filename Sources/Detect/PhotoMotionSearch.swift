import ColorcamCore

/// `PhotoMotionEstimator`'s recapture: where the photo went when the registration from the constant-velocity guess
/// failed to fit (a hand starting or stopping a slide moves a print by up to ~15 px in one frame, beyond what the
/// coarse-to-fine fit converges from).
extension PhotoMotionEstimator {
    /// The best translation of `start` (key → current, normalised) within `PhotoMotionParameters.searchRadiusPx`,
    /// found by an exhaustive search over whole pixels of the coarsest level that holds enough samples; nil when no
    /// level does or too few samples stay in the frame. The cost is the key samples' truncated absolute difference
    /// after their mean difference is removed (a brightness change is not a shift). Allocates nothing.
    func searchTranslation(_ pyramid: LumaPyramid, around start: Homography) -> Homography? {
        var level = -1
        for l in stride(from: LumaPyramid.levelCount - 1, through: 0, by: -1)
        where sampleCounts[l] >= parameters.minimumSamples {
            level = l
            break
        }
        guard level >= 0 else { return nil }
        let factor = pyramid.factor(level)
        let radius = max(1, Int((parameters.searchRadiusPx / factor).rounded(.up)))
        let sampler = WarpSampler(pyramid, level: level, warp: start, centre: centre, scalePx: scalePx)
        let s = samples[level], stride = PhotoMotionEstimator.sampleStride, count = sampleCounts[level]
        let truncation = Double(3 * parameters.residualScale)
        let differences = scratch
        let capacity = PhotoMotionEstimator.scratchCount
        // Every `step`-th sample: the search needs the photo's layout, not every pixel of it.
        let step = max(1, (count + capacity - 1) / capacity)
        var bestCost = Double.infinity, bestShift = SIMD2<Int>(0, 0)
        for dv in -radius...radius {
            for du in -radius...radius {
                var used = 0, sum = 0.0
                for index in Swift.stride(from: 0, to: count, by: step) {
                    let row = s + index * stride
                    guard
                        let value = sampler.value(
                            Double(row[0]), Double(row[1]), du: Double(du), dv: Double(dv))
                    else { continue }
                    let r = Double(value) - Double(row[2])
                    differences[used] = r
                    sum += r
                    used += 1
                }
                guard used * 2 >= count / step, used >= parameters.minimumSamples / step else { continue }
                let mean = sum / Double(used)
                var cost = 0.0
                for k in 0..<used { cost += min(truncation, abs(differences[k] - mean)) }
                cost /= Double(used)
                if cost < bestCost { bestCost = cost; bestShift = SIMD2(du, dv) }
            }
        }
        guard bestCost.isFinite else { return nil }
        let tx = Double(bestShift.x) * factor / scalePx, ty = Double(bestShift.y) * factor / scalePx
        return Homography((1, 0, tx, 0, 1, ty, 0, 0, 1)) * start
    }
}
