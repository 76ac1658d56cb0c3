/// What a photo looks like, for recognising it when it comes back (under a new track id, or after a restart): a
/// 32×32 grid of its lightness in its own (rectified) coordinates, zero-mean and unit-norm. Two signatures are the
/// same photo when their normalised correlation is ≥ 0.9 in one of the 4 rotations (a print put back turned).
///
/// Used by `--save-photos` (one file per physical photo) and by colour hints (a photo found again gets its hints
/// back). Value type; allocates its grid.
struct ContentSignature: Equatable, Sendable {
    static let side = 32
    /// Correlation at or above which two signatures are the same photo.
    static let sameContentCorrelation: Float = 0.9

    /// `side`² values, zero-mean, unit-norm (all zeros for a flat picture, which matches nothing).
    private(set) var values: [Float]

    /// Normalises `grid` (`side`² values, row-major, any units: luma or L*).
    init(grid: UnsafeBufferPointer<Float>) {
        precondition(grid.count == Self.side * Self.side, "a signature wants \(Self.side)x\(Self.side) values")
        var t = Array(grid)
        let mean = t.reduce(0, +) / Float(t.count)
        for i in t.indices { t[i] -= mean }
        let norm = t.reduce(0) { $0 + $1 * $1 }.squareRoot()
        if norm > 1e-6 { for i in t.indices { t[i] /= norm } } else { t = [Float](repeating: 0, count: t.count) }
        values = t
    }

    /// Values as stored (a hints file): `side`² finite numbers; nil otherwise. Normalised again.
    init?(stored: [Float]) {
        guard stored.count == Self.side * Self.side, stored.allSatisfy(\.isFinite) else { return nil }
        self = stored.withUnsafeBufferPointer { ContentSignature(grid: $0) }
    }

    /// The rotation (0…3, quarter turns) under which `other` is the same photo as this one, the best when several
    /// are; nil when none reaches `sameContentCorrelation`. Rotation r maps a point of `other` to this photo's
    /// coordinates by `mapFromOther(_:_:rotation:)`.
    func rotation(matching other: ContentSignature) -> Int? {
        let side = Self.side
        var best: (rotation: Int, dot: Float)?
        for rotation in 0..<4 {
            var dot: Float = 0
            for v in 0..<side {
                for u in 0..<side {
                    let (ru, rv): (Int, Int)
                    switch rotation {
                    case 0: (ru, rv) = (u, v)
                    case 1: (ru, rv) = (side - 1 - v, u)
                    case 2: (ru, rv) = (side - 1 - u, side - 1 - v)
                    default: (ru, rv) = (v, side - 1 - u)
                    }
                    dot += values[v * side + u] * other.values[rv * side + ru]
                }
            }
            if dot >= Self.sameContentCorrelation && dot > (best?.dot ?? -1) { best = (rotation, dot) }
        }
        return best?.rotation
    }

    /// A point of the other photo (fractions `u`, `v` of its width and height) in this photo's coordinates, for the
    /// rotation `rotation(matching:)` found.
    static func mapFromOther(_ u: Float, _ v: Float, rotation: Int) -> (u: Float, v: Float) {
        switch rotation {
        case 1: return (v, 1 - u)
        case 2: return (1 - u, 1 - v)
        case 3: return (1 - v, u)
        default: return (u, v)
        }
    }
}
