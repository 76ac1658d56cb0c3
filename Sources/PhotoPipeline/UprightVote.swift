import Foundation
import Infer

/// Which way is up on a print: the colorizer's orientation head (`ModelBundle.Orientation`) asked about a view turned
/// 0, 1, 2 and 3 quarter turns (`QuarterTurn`'s sense). Each answer gives the probabilities that the picture it saw is
/// its upright picture turned c; the view turned j is the upright picture turned c + j, so the four answers vote:
/// the view is its upright picture turned the c with the largest Σⱼ log pⱼ[(c + j) mod 4] + log prior[c], prior[0]
/// being `priorUpright` and the other turns sharing the rest. Value type; allocates nothing.
struct UprightVote {
    private var score: SIMD4<Double>

    init(priorUpright: Double) {
        let rest = (1 - priorUpright) / 3
        score = SIMD4(log(priorUpright), log(rest), log(rest), log(rest))
    }

    /// Counts the head's answer `probabilities` (4) for the view turned `viewTurns` quarter turns.
    mutating func add(_ probabilities: UnsafeBufferPointer<Float>, viewTurns j: Int) {
        precondition(probabilities.count == 4, "an orientation answer has 4 probabilities")
        for c in 0..<4 { score[c] += log(max(Double(probabilities[(c + j) % 4]), 1e-12)) }
    }

    /// How many quarter turns the view is from upright (the vote's winner; the lowest on a tie).
    var viewTurns: Int {
        var best = 0
        for c in 1..<4 where score[c] > score[best] { best = c }
        return best
    }

    /// The quarter turns that make the view upright.
    var uprightTurns: Int { (4 - viewTurns) % 4 }
}
