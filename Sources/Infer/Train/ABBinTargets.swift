import Foundation

/// Soft targets over a colorizer's ab bins (Zhang et al. 2016): each target pixel's ab spread over its 5 nearest
/// bins with Gaussian weights (sigma 5 ab units), averaged over the pixels sampled in a cell of the distribution's
/// grid; and the cross-entropy of the graph's distribution against them.
///
/// Immutable after init (a lookup table of each ab point's nearest bins on a 2-unit grid); any thread.
public struct ABBinTargets: Sendable {
    public let binA: [Float]
    public let binB: [Float]
    public let sigma: Float
    static let neighbours = 5
    static let gridStep: Float = 2
    static let gridRange: Float = 128
    private let gridSide: Int
    /// Per grid point: `neighbours` (bin, weight) pairs.
    private let tableBins: [UInt16]
    private let tableWeights: [Float]

    public init(binA: [Float], binB: [Float], sigma: Float = 5) {
        precondition(binA.count == binB.count && binA.count >= Self.neighbours, "need at least 5 bins")
        self.binA = binA
        self.binB = binB
        self.sigma = sigma
        let side = Int(2 * Self.gridRange / Self.gridStep)
        gridSide = side
        var bins = [UInt16](repeating: 0, count: side * side * Self.neighbours)
        var weights = [Float](repeating: 0, count: side * side * Self.neighbours)
        var distances = [(Float, Int)](repeating: (0, 0), count: binA.count)
        for gy in 0..<side {
            for gx in 0..<side {
                let a = -Self.gridRange + (Float(gx) + 0.5) * Self.gridStep
                let b = -Self.gridRange + (Float(gy) + 0.5) * Self.gridStep
                for q in 0..<binA.count {
                    let da = a - binA[q], db = b - binB[q]
                    distances[q] = (da * da + db * db, q)
                }
                let nearest = distances.sorted { $0.0 < $1.0 }.prefix(Self.neighbours)
                let raw = nearest.map { exp(-$0.0 / (2 * sigma * sigma)) }
                let total = max(raw.reduce(0, +), 1e-20)
                for (k, (entry, w)) in zip(nearest, raw).enumerated() {
                    let slot = (gy * side + gx) * Self.neighbours + k
                    bins[slot] = UInt16(entry.1)
                    weights[slot] = w / total
                }
            }
        }
        tableBins = bins
        tableWeights = weights
    }

    /// Mean cross-entropy per cell of `probabilities` ([1, Q, H, W], a softmax over Q bins) against the soft
    /// targets of `targetAB` (planar a then b, `sizePx`², Lab units), and its gradient with respect to the
    /// softmax's input (p − t per cell, divided by the number of cells).
    public func crossEntropy(probabilities p: Tensor, targetAB: [Float], sizePx n: Int) -> (
        loss: Float, gradient: Tensor
    ) {
        let q = p.shape[1], h = p.shape[2], w = p.shape[3]
        precondition(q == binA.count, "the distribution has \(q) bins, the targets \(binA.count)")
        let fy = n / h, fx = n / w
        let sy = max(1, fy / 2), sx = max(1, fx / 2)
        let cells = h * w
        var gradient = p
        var loss: Double = 0
        var target = [Float](repeating: 0, count: q)
        var touched: [Int] = []
        for cy in 0..<h {
            for cx in 0..<w {
                var samples: Float = 0
                for y in stride(from: cy * fy + sy / 2, to: (cy + 1) * fy, by: sy) {
                    for x in stride(from: cx * fx + sx / 2, to: (cx + 1) * fx, by: sx) {
                        let a = targetAB[y * n + x], b = targetAB[n * n + y * n + x]
                        let gx = min(max(Int((a + Self.gridRange) / Self.gridStep), 0), gridSide - 1)
                        let gy = min(max(Int((b + Self.gridRange) / Self.gridStep), 0), gridSide - 1)
                        let base = (gy * gridSide + gx) * Self.neighbours
                        for k in 0..<Self.neighbours {
                            let bin = Int(tableBins[base + k])
                            if target[bin] == 0 { touched.append(bin) }
                            target[bin] += tableWeights[base + k]
                        }
                        samples += 1
                    }
                }
                let cell = cy * w + cx
                for bin in touched {
                    let t = target[bin] / samples
                    loss -= Double(t) * Double(log(max(p.data[bin * cells + cell], 1e-12)))
                    gradient.data[bin * cells + cell] -= t
                    target[bin] = 0
                }
                touched.removeAll(keepingCapacity: true)
            }
        }
        let scale = 1 / Float(cells)
        gradient.data.withUnsafeMutableBufferPointer { g in for i in 0..<g.count { g[i] *= scale } }
        return (Float(loss) * scale, gradient)
    }
}
