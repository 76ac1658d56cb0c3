import ColorcamCore
import Infer

/// Colours a print's view the right way up. A print on a table has no up the detector can see: its view is rectified
/// with the corners clockwise from the one nearest the frame's top left, so a print lying turned is fed turned, and a
/// model that learned skies at the top paints a turned sky as grass. When the model has an orientation head
/// (`ModelBundle.orientation`), the view is turned four ways and the head's answers vote (`UprightVote`); the view is
/// then coloured turned upright, hints turned along, and its ab (and kept suggestions) turned back, so everything
/// after sees the view's own frame. The four runs that vote are runs of the model's graph cut at the head
/// (`Colorizer.orientationEngine`: no decoder, about half a colorizer run each), locally, whether the colours come
/// from the local engine or from a server.
///
/// Threading: the inference thread only (one colorization runs at a time); owns its scratch, allocated once.
final class UprightTurner {
    let inputSizePx: Int, abWidthPx: Int, abHeightPx: Int
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private let answer: UnsafeMutablePointer<Float>
    private let points: UnsafeMutablePointer<HintPoint>
    private let maxPoints: Int
    private let keptBins: UnsafeMutablePointer<UInt16>
    private let keptProbabilities: UnsafeMutablePointer<Float>
    private let keptCount: Int

    init(inputSizePx: Int, abWidthPx: Int, abHeightPx: Int, maxHints: Int, keptSuggestions: Int) {
        self.inputSizePx = inputSizePx
        self.abWidthPx = abWidthPx
        self.abHeightPx = abHeightPx
        input = .allocate(capacity: inputSizePx * inputSizePx)
        output = .allocate(capacity: 2 * abWidthPx * abHeightPx)
        answer = .allocate(capacity: 4)
        maxPoints = maxHints
        points = .allocate(capacity: max(1, maxHints))
        keptCount = keptSuggestions
        keptBins = .allocate(capacity: max(1, keptSuggestions))
        keptProbabilities = .allocate(capacity: max(1, keptSuggestions))
    }

    deinit {
        input.deallocate(); output.deallocate(); answer.deallocate(); points.deallocate()
        keptBins.deallocate(); keptProbabilities.deallocate()
    }

    /// Whether `bundle`'s views can be turned: it has an orientation head and its ab (and distribution) grids are
    /// square.
    func canTurn(_ bundle: ModelBundle) -> Bool {
        guard bundle.orientation != nil, abWidthPx == abHeightPx else { return false }
        return bundle.distribution.map { $0.shape[2] == $0.shape[3] } ?? true
    }

    /// Colours `view` (the model's input, N×N) the right way up, into `ab` (the view's frame), keeping the local run's
    /// suggestions into `suggestions` (view frame) when given and the run was local. The turns are `knownTurns` (the
    /// track's, decided before with this model) or decided now by `orientation` (`uprightTurns`); the view is then
    /// coloured turned so by one run, on `remote` when given, else on `engine`. A model that cannot be turned
    /// (`canTurn`), or no `orientation` engine, colours the view as fed.
    func colour(
        view: UnsafeBufferPointer<Float>, knownTurns: Int?, hints: UnsafeBufferPointer<HintPoint>,
        engine: InferenceEngine, orientation: InferenceEngine?, bundle: ModelBundle, remote: ModelRunner?,
        fallbackLocal: Bool, ab: UnsafeMutableBufferPointer<Float>, suggestions: SuggestionSink?
    ) -> (turns: Int, outcome: InferenceOutcome, suggested: Bool) {
        var turns = 0
        if canTurn(bundle), let orientation {
            turns = knownTurns ?? uprightTurns(view: view, hints: hints, orientation: orientation, bundle: bundle)
        }
        let outcome = colorize(
            view: view, turns: turns, hints: hints, engine: engine, bundle: bundle, remote: remote,
            fallbackLocal: fallbackLocal, ab: ab)
        let suggested = outcome.gaveResult && remote == nil && suggestions?.keep(from: engine) == true
        if suggested, turns != 0, let suggestions {
            turnBack(
                bins: suggestions.bins, probabilities: suggestions.probabilities, sidePx: suggestions.sidePx,
                perCell: ABSuggestions.keptPerCell, turns: turns)
        }
        return (turns, outcome, suggested)
    }

    /// The quarter turns that make `view` (the model's input, N×N) upright: the head's vote over the view turned
    /// 0…3 times (4 runs of `orientation`, the model's graph cut at its head, `hints` turned along). 0 when the
    /// bundle has no head.
    func uprightTurns(
        view: UnsafeBufferPointer<Float>, hints: UnsafeBufferPointer<HintPoint>, orientation: InferenceEngine,
        bundle: ModelBundle
    ) -> Int {
        guard let head = bundle.orientation else { return 0 }
        var vote = UprightVote(priorUpright: head.priorUpright)
        for j in 0..<4 {
            turn(view: view, turns: j, hints: hints, engine: orientation, bundle: bundle)
            orientation.run(
                input: UnsafeBufferPointer(start: input, count: inputSizePx * inputSizePx),
                output: UnsafeMutableBufferPointer(start: answer, count: 4))
            vote.add(UnsafeBufferPointer(start: answer, count: 4), viewTurns: j)
        }
        return vote.uprightTurns
    }

    /// Colours `view` turned `turns` quarter turns (hints turned along) on `remote` when given (`runColorizer`:
    /// the local `engine` stands in with `fallbackLocal`), else on `engine`, and writes the ab turned back into `ab`
    /// (2 planes in the view's frame) when the run gave a result. Turns 0: the view as fed, straight into `ab`.
    func colorize(
        view: UnsafeBufferPointer<Float>, turns: Int, hints: UnsafeBufferPointer<HintPoint>, engine: InferenceEngine,
        bundle: ModelBundle, remote: ModelRunner?, fallbackLocal: Bool, ab: UnsafeMutableBufferPointer<Float>
    ) -> InferenceOutcome {
        guard turns % 4 != 0 else {
            Colorizer.setHints(hints, engine: engine, bundle: bundle)
            return runColorizer(local: engine, remote: remote, fallbackLocal: fallbackLocal, input: view, output: ab)
        }
        turn(view: view, turns: turns, hints: hints, engine: engine, bundle: bundle)
        let plane = abWidthPx * abHeightPx
        let outcome = runColorizer(
            local: engine, remote: remote, fallbackLocal: fallbackLocal,
            input: UnsafeBufferPointer(start: input, count: inputSizePx * inputSizePx),
            output: UnsafeMutableBufferPointer(start: output, count: 2 * plane))
        guard outcome.gaveResult else { return outcome }
        for c in 0..<2 {
            QuarterTurn.turn(
                output + c * plane, into: ab.baseAddress! + c * plane, sidePx: abWidthPx, turns: -turns)
        }
        return outcome
    }

    /// Turns the kept suggestions of a run on the view turned `turns` (cells of a `sidePx`² grid, `perCell` each)
    /// back to the view's frame, in place.
    func turnBack(
        bins: UnsafeMutablePointer<UInt16>, probabilities: UnsafeMutablePointer<Float>, sidePx n: Int, perCell: Int,
        turns: Int
    ) {
        let count = n * n * perCell
        precondition(count <= keptCount, "suggestions larger than the scratch")
        keptBins.update(from: bins, count: count)
        keptProbabilities.update(from: probabilities, count: count)
        QuarterTurn.turn(keptBins, into: bins, sidePx: n, turns: -turns, stride: perCell)
        QuarterTurn.turn(keptProbabilities, into: probabilities, sidePx: n, turns: -turns, stride: perCell)
    }

    /// Writes `view` turned `turns` into `input` and its hints, turned along, into `engine`'s hint inputs.
    private func turn(
        view: UnsafeBufferPointer<Float>, turns: Int, hints: UnsafeBufferPointer<HintPoint>, engine: InferenceEngine,
        bundle: ModelBundle
    ) {
        QuarterTurn.turn(view.baseAddress!, into: input, sidePx: inputSizePx, turns: turns)
        let count = min(hints.count, maxPoints)
        for k in 0..<count {
            var p = hints[k]
            (p.u, p.v) = QuarterTurn.turn(u: p.u, v: p.v, turns: turns)
            points[k] = p
        }
        Colorizer.setHints(UnsafeBufferPointer(start: points, count: count), engine: engine, bundle: bundle)
    }
}
