/// The colours a colorizer thinks a point could be, from its ab distribution (`ModelBundle.Distribution`: per cell
/// of a grid, a probability per ab bin): the few most likely bins of every cell are kept after each run (`keep`), and
/// a point's suggestions are those bins merged into distinct colours (`modes`). Allocates nothing in `keep`.
public enum ABSuggestions {
    /// Bins kept per cell.
    public static let keptPerCell = 8
    /// Bins closer than this (Lab units) are one colour in `modes`.
    public static let mergeDistance: Float = 15

    /// The `keptPerCell` most likely bins of each of `cells` cells of `distribution` (`[1, bins, H, W]`, H × W =
    /// `cells`), written cell by cell (`cell * keptPerCell + j`), most likely first, into `binIndices` and
    /// `probabilities`. Allocates nothing.
    public static func keep(
        _ distribution: UnsafeBufferPointer<Float>, bins: Int, cells: Int, binIndices: UnsafeMutablePointer<UInt16>,
        probabilities: UnsafeMutablePointer<Float>
    ) {
        precondition(distribution.count == bins * cells && bins <= Int(UInt16.max))
        let k = keptPerCell
        probabilities.update(repeating: -1, count: cells * k)
        binIndices.update(repeating: 0, count: cells * k)
        // Bins outer, cells inner: the distribution is read in order; most bins fail the first comparison.
        for bin in 0..<bins {
            let plane = distribution.baseAddress! + bin * cells
            for cell in 0..<cells {
                let p = plane[cell], row = cell * k
                guard p > probabilities[row + k - 1] else { continue }
                var j = k - 1
                while j > 0 && probabilities[row + j - 1] < p {
                    probabilities[row + j] = probabilities[row + j - 1]
                    binIndices[row + j] = binIndices[row + j - 1]
                    j -= 1
                }
                probabilities[row + j] = p
                binIndices[row + j] = UInt16(bin)
            }
        }
    }

    /// A colour the model suggests: ab (Lab units) and how likely the model finds it (the merged bins' sum).
    public struct Suggestion: Sendable, Equatable {
        public var a: Float
        public var b: Float
        public var probability: Float
    }

    /// The distinct colours among one cell's kept bins (`keep`'s layout, `cell`'s row): each bin joins the first
    /// colour within `mergeDistance` (its ab the probability-weighted mean), else starts one; the `count` most likely.
    public static func modes(
        binIndices: UnsafePointer<UInt16>, probabilities: UnsafePointer<Float>, cell: Int,
        distribution: ModelBundle.Distribution, count: Int
    ) -> [Suggestion] {
        var out: [Suggestion] = []
        for j in 0..<keptPerCell {
            let p = probabilities[cell * keptPerCell + j]
            guard p > 0 else { break }
            let bin = Int(binIndices[cell * keptPerCell + j])
            guard bin < distribution.binA.count else { continue }  // kept under another model
            let a = distribution.binA[bin], b = distribution.binB[bin]
            if let i = out.firstIndex(where: {
                ($0.a - a) * ($0.a - a) + ($0.b - b) * ($0.b - b) < mergeDistance * mergeDistance
            }) {
                let w = out[i].probability + p
                out[i].a = (out[i].a * out[i].probability + a * p) / w
                out[i].b = (out[i].b * out[i].probability + b * p) / w
                out[i].probability = w
            } else {
                out.append(Suggestion(a: a, b: b, probability: p))
            }
        }
        return Array(out.sorted { $0.probability > $1.probability }.prefix(count))
    }
}
