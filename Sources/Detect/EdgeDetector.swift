/// Canny-style edges on a `CoarseFrame`: Sobel gradients of luma and chroma (per pixel the strongest channel),
/// non-maximum suppression, and hysteresis with thresholds that adapt to the frame's gradient statistics
/// (a textured table raises them, a clean one lowers them to fixed floors).
///
/// Ownership: all buffers are allocated once in `init` for one coarse size. Threading: one thread at a time.
final class EdgeDetector {
    let widthPx: Int
    let heightPx: Int
    /// Gradient magnitude per coarse pixel (Sobel units: a step of 1 level gives 4).
    let magnitude: UnsafeMutablePointer<Float>
    private let gradX: UnsafeMutablePointer<Float>
    private let gradY: UnsafeMutablePointer<Float>
    /// 1 where an edge survives hysteresis, else 0.
    let edges: UnsafeMutablePointer<UInt8>
    /// Gradient magnitude at non-maximum-suppression survivors, 0 elsewhere.
    private let peaks: UnsafeMutablePointer<Float>
    private let stack: UnsafeMutablePointer<Int32>
    private var histogram: [Int]
    /// The 8 neighbour offsets in a row-major plane (stored so the hot loop does not build an array).
    /// The thresholds the last `detect` used (for diagnostics).
    private(set) var lowThreshold: Float = 0
    private(set) var highThreshold: Float = 0

    /// Chroma gradients are scaled by this before competing with luma (chroma spans a smaller range).
    var chromaWeight: Float = 2.0
    /// Threshold floors and multiples of the median gradient magnitude.
    var lowFloor: Float = 18
    var highFloor: Float = 36
    var lowMedianMultiple: Float = 3
    var highMedianMultiple: Float = 6

    init(widthPx: Int, heightPx: Int) {
        self.widthPx = widthPx
        self.heightPx = heightPx
        let count = widthPx * heightPx
        magnitude = .allocate(capacity: count)
        gradX = .allocate(capacity: count)
        gradY = .allocate(capacity: count)
        edges = .allocate(capacity: count)
        peaks = .allocate(capacity: count)
        peaks.initialize(repeating: 0, count: count)
        stack = .allocate(capacity: count)
        magnitude.initialize(repeating: 0, count: count)
        gradX.initialize(repeating: 0, count: count)
        gradY.initialize(repeating: 0, count: count)
        edges.initialize(repeating: 0, count: count)
        stack.initialize(repeating: 0, count: count)
        histogram = [Int](repeating: 0, count: 1024)
    }

    deinit {
        magnitude.deallocate()
        gradX.deallocate()
        gradY.deallocate()
        edges.deallocate()
        peaks.deallocate()
        stack.deallocate()
    }

    /// Computes `edges` for `frame`; `sensitivity` scales both thresholds (1 = default, 0.6 = finds weaker edges).
    func detect(_ frame: CoarseFrame, useChroma: Bool, sensitivity: Float) {
        computeGradients(frame, useChroma: useChroma)
        computeMedian()
        suppressNonMaxima()
        chooseThresholds(sensitivity: sensitivity)
        suppressAndLink()
    }

    /// Recomputes only the hysteresis (gradients from the previous `detect`) at another sensitivity.
    func relink(sensitivity: Float) {
        chooseThresholds(sensitivity: sensitivity)
        suppressAndLink()
    }

    private func computeGradients(_ frame: CoarseFrame, useChroma: Bool) {
        let w = widthPx, h = heightPx
        let count = w * h
        guard w >= 3, h >= 3 else {
            magnitude.update(repeating: 0, count: count)
            gradX.update(repeating: 0, count: count)
            gradY.update(repeating: 0, count: count)
            return
        }
        // The first plane writes every inner pixel; only the frame's outer ring stays 0.
        zeroOuterRing(magnitude)
        zeroOuterRing(gradX)
        zeroOuterRing(gradY)
        // Squared magnitude goes in `magnitude` first; plane by plane, a stronger (weighted) plane replaces the
        // direction and magnitude.
        sobel(frame.luma, weight2: 1, first: true)
        if useChroma && frame.geometry.chroma.hasChroma {
            let weight2 = chromaWeight * chromaWeight
            sobel(frame.cb, weight2: weight2, first: false)
            sobel(frame.cr, weight2: weight2, first: false)
        }
        var k = 0
        while k + Lane.scalarCount <= count {
            store((load(magnitude + k) as Lane).squareRoot(), magnitude + k)
            k += Lane.scalarCount
        }
        while k < count { magnitude[k] = magnitude[k].squareRoot(); k += 1 }
    }

    /// Zeroes the first and last row and column of a `widthPx` × `heightPx` plane (at least 3 × 3).
    private func zeroOuterRing(_ plane: UnsafeMutablePointer<Float>) {
        let w = widthPx, h = heightPx
        plane.update(repeating: 0, count: w)
        (plane + (h - 1) * w).update(repeating: 0, count: w)
        for j in 1..<(h - 1) { plane[j * w] = 0; plane[j * w + w - 1] = 0 }
    }

    private typealias Lane = SIMD8<Float>

    @inline(__always) private func load(_ p: UnsafeMutablePointer<Float>) -> Lane {
        UnsafeRawPointer(p).loadUnaligned(as: Lane.self)
    }

    @inline(__always) private func store(_ v: Lane, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: Lane.self)
    }

    /// Sobel of `src`; where `weight2 · |g|²` beats the stored squared magnitude (or for the `first` plane), stores it.
    /// Eight pixels at a time with the scalar form's operations in its order (bit-identical), the row's tail one by one.
    private func sobel(_ src: UnsafeMutablePointer<Float>, weight2: Float, first: Bool) {
        let w = widthPx, h = heightPx
        let n = Lane.scalarCount
        for j in 1..<(h - 1) {
            let up = src + (j - 1) * w, mid = src + j * w, down = src + (j + 1) * w
            let gxRow = gradX + j * w, gyRow = gradY + j * w, mRow = magnitude + j * w
            var i = 1
            while i + n <= w - 1 {
                let ul = load(up + i - 1), uc = load(up + i), ur = load(up + i + 1)
                let ml = load(mid + i - 1), mr = load(mid + i + 1)
                let dl = load(down + i - 1), dc = load(down + i), dr = load(down + i + 1)
                let gx = (ur + 2 * mr + dr) - (ul + 2 * ml + dl)
                let gy = (dl + 2 * dc + dr) - (ul + 2 * uc + ur)
                let m2 = (gx * gx + gy * gy) * weight2
                if first {
                    store(gx, gxRow + i); store(gy, gyRow + i); store(m2, mRow + i)
                } else {
                    let take = m2 .> load(mRow + i)
                    store(load(gxRow + i).replacing(with: gx, where: take), gxRow + i)
                    store(load(gyRow + i).replacing(with: gy, where: take), gyRow + i)
                    store(load(mRow + i).replacing(with: m2, where: take), mRow + i)
                }
                i += n
            }
            while i < w - 1 {
                let gx = (up[i + 1] + 2 * mid[i + 1] + down[i + 1]) - (up[i - 1] + 2 * mid[i - 1] + down[i - 1])
                let gy = (down[i - 1] + 2 * down[i] + down[i + 1]) - (up[i - 1] + 2 * up[i] + up[i + 1])
                let m2 = (gx * gx + gy * gy) * weight2
                let take = first || m2 > mRow[i]
                gxRow[i] = take ? gx : gxRow[i]
                gyRow[i] = take ? gy : gyRow[i]
                mRow[i] = take ? m2 : mRow[i]
                i += 1
            }
        }
    }

    /// Median gradient magnitude of the last `detect` (computed once per frame).
    private var median: Float = 0

    private func computeMedian() {
        let count = widthPx * heightPx
        histogram.withUnsafeMutableBufferPointer { bins in
            bins.update(repeating: 0)
            let last = bins.count - 1
            for k in 0..<count { bins[min(last, Int(magnitude[k]))] += 1 }
            var seen = 0
            median = 0
            for k in 0..<bins.count {
                seen += bins[k]
                if seen * 2 >= count { median = Float(k) + 0.5; break }
            }
        }
    }

    private func chooseThresholds(sensitivity: Float) {
        lowThreshold = max(lowFloor, lowMedianMultiple * median) * sensitivity
        highThreshold = max(highFloor, highMedianMultiple * median) * sensitivity
    }

    /// Non-maximum suppression along the gradient direction: `peaks` = magnitude where it is a local maximum
    /// across the edge, else 0. Independent of the thresholds, so it runs once per frame.
    private func suppressNonMaxima() {
        let w = widthPx, h = heightPx
        peaks.update(repeating: 0, count: w * h)
        guard w >= 3, h >= 3 else { return }
        let tan22: Float = 0.41421356
        let floor = min(lowFloor, lowMedianMultiple * median) * 0.5
        let n = Lane.scalarCount
        for j in 1..<(h - 1) {
            var i = 1
            // Eight pixels at a time: every direction's two neighbours are loaded and the pixel's own chosen by
            // the same comparisons as the scalar tail's branches (bit-identical: no arithmetic on the values).
            while i + n <= w - 1 {
                let c = magnitude + j * w + i
                let m = load(c)
                let gx = load(gradX + j * w + i), gy = load(gradY + j * w + i)
                let ax = gx.replacing(with: -gx, where: gx .< 0), ay = gy.replacing(with: -gy, where: gy .< 0)
                let horizontal = ay .<= tan22 * ax
                let vertical = .!horizontal .& (ax .<= tan22 * ay)
                let falling = .!horizontal .& .!vertical .& .!((gx .> 0) .^ (gy .> 0))
                var a = load(c - w + 1), b = load(c + w - 1)
                a.replace(with: load(c - w - 1), where: falling)
                b.replace(with: load(c + w + 1), where: falling)
                a.replace(with: load(c - w), where: vertical)
                b.replace(with: load(c + w), where: vertical)
                a.replace(with: load(c - 1), where: horizontal)
                b.replace(with: load(c + 1), where: horizontal)
                let peak = (m .>= floor) .& (m .>= a) .& (m .> b)
                store(Lane(repeating: 0).replacing(with: m, where: peak), peaks + j * w + i)
                i += n
            }
            while i < w - 1 {
                let c = j * w + i
                i += 1
                let m = magnitude[c]
                if m < floor { continue }
                let gx = gradX[c], gy = gradY[c]
                let ax = abs(gx), ay = abs(gy)
                let a: Float, b: Float
                if ay <= tan22 * ax {
                    a = magnitude[c - 1]; b = magnitude[c + 1]
                } else if ax <= tan22 * ay {
                    a = magnitude[c - w]; b = magnitude[c + w]
                } else if (gx > 0) == (gy > 0) {
                    a = magnitude[c - w - 1]; b = magnitude[c + w + 1]
                } else {
                    a = magnitude[c - w + 1]; b = magnitude[c + w - 1]
                }
                if m >= a && m > b { peaks[c] = m }
            }
        }
    }

    /// Hysteresis on `peaks`: edges are peaks ≥ high, grown through 8-connected peaks ≥ low.
    private func suppressAndLink() {
        let w = widthPx, h = heightPx, count = w * h
        let low = lowThreshold, high = highThreshold
        let edges = edges, peaks = peaks, stack = stack  // locals: the stores to `edges` cannot reload them
        var top = 0
        @inline(__always) func classify(_ c: Int) {
            let m = peaks[c]
            if m >= high {
                edges[c] = 1
                stack[top] = Int32(truncatingIfNeeded: c); top += 1
            } else {
                edges[c] = m >= low && m > 0 ? 2 : 0
            }
        }
        // Most pixels are no candidate at all: eight of them at a time are cleared in one store, and only a group
        // holding a candidate is classified pixel by pixel (the seeds stacked in the same order).
        let n = Lane.scalarCount
        var c = 0
        while c + n <= count {
            let m = load(peaks + c)
            if any((m .>= low) .& (m .> 0)) || any(m .>= high) {
                for k in c..<(c + n) { classify(k) }
            } else {
                UnsafeMutableRawPointer(edges + c).storeBytes(of: SIMD8<UInt8>(), as: SIMD8<UInt8>.self)
            }
            c += n
        }
        while c < count { classify(c); c += 1 }
        guard w >= 3, h >= 3 else { return }
        // Pass 2: grow from the seeds through 8-connected candidates.
        @inline(__always) func grow(_ n: Int) {
            if edges[n] == 2 {
                edges[n] = 1
                stack[top] = Int32(truncatingIfNeeded: n); top += 1
            }
        }
        while top > 0 {
            top -= 1
            let c = Int(stack[top])
            // The 8 neighbours: the row above left to right, left, right, the row below left to right.
            grow(c - w - 1); grow(c - w); grow(c - w + 1); grow(c - 1)
            grow(c + 1); grow(c + w - 1); grow(c + w); grow(c + w + 1)
        }
        // Candidates never reached are no edge: codes 0, 1, 2 become 0, 1, 0 (sixteen at a time).
        var k = 0
        while k + 16 <= count {
            let v = UnsafeRawPointer(edges + k).loadUnaligned(as: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(edges + k).storeBytes(of: v & 1, as: SIMD16<UInt8>.self)
            k += 16
        }
        while k < count { edges[k] &= 1; k += 1 }
    }
}
