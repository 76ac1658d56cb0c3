import Infer

/// Where a local run's colour suggestions are kept (`ABSuggestions.keep`): the model's distribution, read from the
/// engine's taps right after the run, and an entry's arrays (`count` = cells × `ABSuggestions.keptPerCell` each).
/// Value type; borrows its arrays (owned by the processor's slots). Inference thread only.
struct SuggestionSink {
    let distribution: ModelBundle.Distribution
    /// Cells of the distribution's square grid (`sidePx`²).
    let cells: Int
    let bins: UnsafeMutablePointer<UInt16>
    let probabilities: UnsafeMutablePointer<Float>

    var count: Int { cells * ABSuggestions.keptPerCell }
    var sidePx: Int { distribution.shape[3] }

    /// Keeps the engine's last run's suggestions into `bins` and `probabilities`. False when the engine has no such
    /// tensor of the expected size. Allocates nothing.
    func keep(from engine: InferenceEngine) -> Bool {
        guard let tapped = engine.tapped(distribution.tensor), tapped.values.count == cells * distribution.shape[1]
        else { return false }
        ABSuggestions.keep(
            tapped.values, bins: distribution.shape[1], cells: cells, binIndices: bins, probabilities: probabilities)
        return true
    }
}
