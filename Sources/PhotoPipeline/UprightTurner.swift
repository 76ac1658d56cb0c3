import ColorcamCore
import Infer

/// Colours a print's view the right way up. A print on a table has no up the detector can see: its view is rectified
/// with the corners clockwise from the one nearest the frame's top left, so a print lying turned is fed turned, and a
/// model that learned skies at the top paints a turned sky as grass. When the model has an orientation head
/// (`ModelBundle.orientation`), the view is turned four ways and the head's answers vote (`UprightVote`, 4 runs); the
/// view is then coloured turned upright, hints turned along, and its ab (and kept suggestions) turned back, so
/// everything after sees the view's own frame. Run locally, the four runs that vote also colour
/// (`decideAndColorize`): the winner's run is the colorization, with no fifth run.
///
/// Threading: the inference thread only (one colorization runs at a time); owns its scratch, allocated once.
final class UprightTurner {
    let inputSizePx: Int, abWidthPx: Int, abHeightPx: Int
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<Float>
    private let points: UnsafeMutablePointer<HintPoint>
    private let maxPoints: Int
    private let keptBins: UnsafeMutablePointer<UInt16>
    private let keptProbabilities: UnsafeMutablePointer<Float>
    private let keptCount: Int
    /// Each probe run's ab (its turned frame: the probes run straight into it) and kept suggestions.
    private let probeAB: UnsafeMutablePointer<Float>
    private let probeBins: UnsafeMutablePointer<UInt16>
    private let probeProbabilities: UnsafeMutablePointer<Float>

    init(inputSizePx: Int, abWidthPx: Int, abHeightPx: Int, maxHints: Int, keptSuggestions: Int) {
        self.inputSizePx = inputSizePx
        self.abWidthPx = abWidthPx
        self.abHeightPx = abHeightPx
        input = .allocate(capacity: inputSizePx * inputSizePx)
        output = .allocate(capacity: 2 * abWidthPx * abHeightPx)
        maxPoints = maxHints
        points = .allocate(capacity: max(1, maxHints))
        keptCount = keptSuggestions
        keptBins = .allocate(capacity: max(1, keptSuggestions))
        keptProbabilities = .allocate(capacity: max(1, keptSuggestions))
        probeAB = .allocate(capacity: 4 * 2 * abWidthPx * abHeightPx)
        probeBins = .allocate(capacity: 4 * max(1, keptSuggestions))
        probeProbabilities = .allocate(capacity: 4 * max(1, keptSuggestions))
    }

    deinit {
        input.deallocate(); output.deallocate(); points.deallocate()
        keptBins.deallocate(); keptProbabilities.deallocate()
        probeAB.deallocate(); probeBins.deallocate(); probeProbabilities.deallocate()
    }

    /// Whether `bundle`'s views can be turned: it has an orientation head and its ab (and distribution) grids are
    /// square.
    func canTurn(_ bundle: ModelBundle) -> Bool {
        guard bundle.orientation != nil, abWidthPx == abHeightPx else { return false }
        return bundle.distribution.map { $0.shape[2] == $0.shape[3] } ?? true
    }

    /// Colours `view` (the model's input, N×N) the right way up, into `ab` (the view's frame), keeping the local run's
    /// suggestions into `suggestions` (view frame) when given and the run was local. The turns are `knownTurns` (the
    /// track's, decided before with this model) or decided now: locally, by the four runs that also colour the view
    /// (`decideAndColorize`); with `remote`, by four local runs, and the server colours the view turned so. A model
    /// that cannot be turned (`canTurn`) colours the view as fed.
    func colour(
        view: UnsafeBufferPointer<Float>, knownTurns: Int?, hints: UnsafeBufferPointer<HintPoint>,
        engine: InferenceEngine, bundle: ModelBundle, remote: ModelRunner?, fallbackLocal: Bool,
        ab: UnsafeMutableBufferPointer<Float>, suggestions: SuggestionSink?
    ) -> (turns: Int, outcome: InferenceOutcome, suggested: Bool) {
        let turnable = canTurn(bundle)
        if turnable, knownTurns == nil, remote == nil {
            let (turns, suggested) = decideAndColorize(
                view: view, hints: hints, engine: engine, bundle: bundle, ab: ab, suggestions: suggestions)
            return (turns, .local, suggested)
        }
        let turns =
            turnable ? knownTurns ?? uprightTurns(view: view, hints: hints, engine: engine, bundle: bundle) : 0
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
    /// 0…3 times (4 local runs of `engine`, `hints` turned along). 0 when the head's tensor is missing.
    func uprightTurns(
        view: UnsafeBufferPointer<Float>, hints: UnsafeBufferPointer<HintPoint>, engine: InferenceEngine,
        bundle: ModelBundle
    ) -> Int {
        vote(view: view, hints: hints, engine: engine, bundle: bundle) { _ in } ?? 0
    }

    /// Decides the quarter turns that make `view` upright and colours it with the same four local runs: each run's
    /// ab (and, given `suggestions`, its kept suggestions) is kept, and the winner's, turned back into the view's
    /// frame, is the colorization, written into `ab` (and `suggestions`' arrays). Returns the turns and whether
    /// suggestions were kept. Without the head's tensor: the view as fed, coloured by one run.
    func decideAndColorize(
        view: UnsafeBufferPointer<Float>, hints: UnsafeBufferPointer<HintPoint>, engine: InferenceEngine,
        bundle: ModelBundle, ab: UnsafeMutableBufferPointer<Float>, suggestions: SuggestionSink?
    ) -> (turns: Int, suggested: Bool) {
        let abCount = 2 * abWidthPx * abHeightPx, kept = suggestions?.count ?? 0
        precondition(ab.count == abCount && kept <= keptCount, "buffers of the wrong size")
        var suggested = suggestions != nil
        let voted = vote(view: view, hints: hints, engine: engine, bundle: bundle) { j in
            if let suggestions, suggested {
                suggested = suggestions.keep(
                    from: engine, bins: probeBins + j * keptCount, probabilities: probeProbabilities + j * keptCount)
            }
        }
        guard let turns = voted else {
            Colorizer.setHints(hints, engine: engine, bundle: bundle)
            engine.run(input: view, output: ab)
            return (0, suggestions?.keep(from: engine) ?? false)
        }
        let plane = abWidthPx * abHeightPx, winner = probeAB + turns * abCount
        for c in 0..<2 {
            QuarterTurn.turn(winner + c * plane, into: ab.baseAddress! + c * plane, sidePx: abWidthPx, turns: -turns)
        }
        if let suggestions, suggested {
            QuarterTurn.turn(
                probeBins + turns * keptCount, into: suggestions.bins, sidePx: suggestions.sidePx, turns: -turns,
                stride: ABSuggestions.keptPerCell)
            QuarterTurn.turn(
                probeProbabilities + turns * keptCount, into: suggestions.probabilities, sidePx: suggestions.sidePx,
                turns: -turns, stride: ABSuggestions.keptPerCell)
        }
        return (turns, suggested)
    }

    /// The head's vote over the view turned 0…3 times (4 local runs, hints turned along); `afterRun(j)` is called
    /// after the run on the view turned j, while the engine's taps hold that run (its ab is in `probeAB`'s j-th
    /// slot). Nil when the model has no head or its tensor is missing.
    private func vote(
        view: UnsafeBufferPointer<Float>, hints: UnsafeBufferPointer<HintPoint>, engine: InferenceEngine,
        bundle: ModelBundle, afterRun: (Int) -> Void
    ) -> Int? {
        guard let head = bundle.orientation else { return nil }
        var vote = UprightVote(priorUpright: head.priorUpright)
        for j in 0..<4 {
            run(view: view, turns: j, hints: hints, engine: engine, bundle: bundle)
            guard let answer = engine.tapped(head.tensor), answer.values.count == 4 else { return nil }
            vote.add(answer.values, viewTurns: j)
            afterRun(j)
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

    /// One local run on `view` turned `turns`, its hints turned along; the ab lands in `probeAB`'s slot `turns`.
    private func run(
        view: UnsafeBufferPointer<Float>, turns: Int, hints: UnsafeBufferPointer<HintPoint>, engine: InferenceEngine,
        bundle: ModelBundle
    ) {
        let abCount = 2 * abWidthPx * abHeightPx
        turn(view: view, turns: turns, hints: hints, engine: engine, bundle: bundle)
        engine.run(
            input: UnsafeBufferPointer(start: input, count: inputSizePx * inputSizePx),
            output: UnsafeMutableBufferPointer(start: probeAB + turns * abCount, count: abCount))
    }
}
