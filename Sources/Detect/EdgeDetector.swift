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
    private let neighbourOffsets: [Int]
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
        neighbourOffsets = [-widthPx - 1, -widthPx, -widthPx + 1, -1, 1, widthPx - 1, widthPx, widthPx + 1]
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
        magnitude.update(repeating: 0, count: count)
        gradX.update(repeating: 0, count: count)
        gradY.update(repeating: 0, count: count)
        guard w >= 3, h >= 3 else { return }
        // Squared magnitude goes in `magnitude` first; plane by plane, a stronger (weighted) plane replaces the
        // direction and magnitude. Each row loop is branch-light so the compiler can vectorise it.
        sobel(frame.luma, weight2: 1, first: true)
        if useChroma && frame.geometry.chroma.hasChroma {
            let weight2 = chromaWeight * chromaWeight
            sobel(frame.cb, weight2: weight2, first: false)
            sobel(frame.cr, weight2: weight2, first: false)
        }
        for k in 0..<count { magnitude[k] = magnitude[k].squareRoot() }
    }

    /// Sobel of `src`; where `weight2 · |g|²` beats the stored squared magnitude (or for the `first` plane), stores it.
    private func sobel(_ src: UnsafeMutablePointer<Float>, weight2: Float, first: Bool) {
        let w = widthPx, h = heightPx
        for j in 1..<(h - 1) {
            let up = src + (j - 1) * w, mid = src + j * w, down = src + (j + 1) * w
            let gxRow = gradX + j * w, gyRow = gradY + j * w, mRow = magnitude + j * w
            for i in 1..<(w - 1) {
                let gx = (up[i + 1] + 2 * mid[i + 1] + down[i + 1]) - (up[i - 1] + 2 * mid[i - 1] + down[i - 1])
                let gy = (down[i - 1] + 2 * down[i] + down[i + 1]) - (up[i - 1] + 2 * up[i] + up[i + 1])
                let m2 = (gx * gx + gy * gy) * weight2
                let take = first || m2 > mRow[i]
                gxRow[i] = take ? gx : gxRow[i]
                gyRow[i] = take ? gy : gyRow[i]
                mRow[i] = take ? m2 : mRow[i]
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
        for j in 1..<(h - 1) {
            for i in 1..<(w - 1) {
                let c = j * w + i
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
        var top = 0
        for c in 0..<count {
            let m = peaks[c]
            if m >= high {
                edges[c] = 1
                stack[top] = Int32(c); top += 1
            } else {
                edges[c] = m >= low && m > 0 ? 2 : 0
            }
        }
        guard w >= 3, h >= 3 else { return }
        // Pass 2: grow from the seeds through 8-connected candidates.
        while top > 0 {
            top -= 1
            let c = Int(stack[top])
            for offset in neighbourOffsets {
                let n = c + offset
                if edges[n] == 2 {
                    edges[n] = 1
                    stack[top] = Int32(n); top += 1
                }
            }
        }
        for k in 0..<(w * h) where edges[k] == 2 { edges[k] = 0 }
    }
}
