import ColorcamCore

/// The pipeline clock under `PipelineStepper`: every stage has its own time, and `nowNs`/`sleep` read and move the
/// time of the stage being stepped, as each of the product's threads sees the one clock while the others run. Work
/// that takes time advances it by sleeping (`SimulatedInference` in `.sleep` mode, a sink that sleeps for its write
/// cost); nothing else moves it. Outside a stepped run there is one time, the latest any stage reached.
///
/// Threading: used from the stepper's one thread only (`@unchecked Sendable` to be a `MonotonicClock`).
public final class SteppedClock: MonotonicClock, @unchecked Sendable {
    private var stageNs: [Int64]
    private var current = 0

    public init(startNs: Int64 = 0) { stageNs = [startNs] }

    public func nowNs() -> Int64 { stageNs[current] }

    public func sleep(untilNs deadlineNs: Int64) {
        if deadlineNs > stageNs[current] { stageNs[current] = deadlineNs }
    }

    /// Gives each of `count` stages its own time, all at the current time.
    func beginStages(_ count: Int) {
        stageNs = Array(repeating: stageNs[current], count: count)
        current = 0
    }

    /// Back to one time: the latest any stage reached.
    func endStages() {
        stageNs = [stageNs.max()!]
        current = 0
    }

    /// Makes `stage` the one whose time `nowNs`/`sleep` use.
    func enter(_ stage: Int) { current = stage }

    func timeNs(of stage: Int) -> Int64 { stageNs[stage] }

    /// Moves `stage`'s time forward to `ns` (never back).
    func advance(_ stage: Int, toNs ns: Int64) { stageNs[stage] = max(stageNs[stage], ns) }
}

/// Runs a `Pipeline`'s own stage steps (the code its threads run) on one thread, in virtual time: the stage whose
/// time is earliest takes the next step (ties: inference, then capture, then output, so a result due at the
/// instant a frame is offered or composited is in first). A stage that waits for another (a request, a frame, a
/// free place) resumes at the time that other stage made it possible. Every drop decision, lag and output time
/// is therefore exact and the same on every run — what the scheduler's tests assert.
///
/// Differences from the threads, by design: hand-offs take no time (a request starts the instant it is made, as
/// the threads aim for), there is no inference poll (`inferenceSpinNs`), and work takes only the time it sleeps
/// on the clock. A processor's `infer` runs at the start of its inference, so results it publishes itself become
/// visible then; the scheduler's own `latestResult` changes at the inference's end.
///
/// Threading: `run` on one thread; the pipeline must have been made with this stepper's `clock`.
public final class PipelineStepper {
    public let pipeline: Pipeline
    public let clock: SteppedClock
    /// Called after every step with the scheduler's state (e.g. to check that in flight never exceeds the limit).
    public var observe: ((PipelineCore) -> Void)?

    public init(pipeline: Pipeline, clock: SteppedClock) {
        precondition(pipeline.clock as AnyObject === clock, "the pipeline must run on the stepper's clock")
        self.pipeline = pipeline
        self.clock = clock
    }

    private enum Stage {
        case inference(InferenceState)
        case capture(CaptureState)
        case output(OutputState)
    }

    /// Runs to the end of the source (or an error), like `Pipeline.run()`.
    /// - Throws: what `Pipeline.run()` throws.
    public func run() throws -> PipelineStats {
        let startNs = clock.nowNs()
        var stages: [Stage] = Array(repeating: .inference(InferenceState()), count: pipeline.inferenceStageCount)
        stages.append(.capture(CaptureState(pipeline: pipeline)))
        stages.append(.output(OutputState()))
        var waits = Array(repeating: StageWait.none, count: stages.count)
        clock.beginStages(stages.count)
        while true {
            var next: Int?
            for i in stages.indices {
                switch waits[i] {
                case .none, .until:
                    if next == nil || clock.timeNs(of: i) < clock.timeNs(of: next!) { next = i }
                default:
                    continue
                }
            }
            guard let stage = next else {
                precondition(waits.allSatisfy { $0 == .ended }, "stepped pipeline stalled: stages wait for \(waits)")
                break
            }
            clock.enter(stage)
            let wait = step(&stages[stage])
            waits[stage] = wait
            if case .until(let ns) = wait { clock.advance(stage, toNs: ns) }
            // Stages waiting on what this step may have changed go on from this step's time (or their own, later).
            let stepEndNs = clock.timeNs(of: stage)
            for i in stages.indices {
                switch waits[i] {
                case .none, .until, .ended:
                    continue
                default:
                    if pipeline.isSatisfied(waits[i]) {
                        waits[i] = .none
                        clock.advance(i, toNs: stepEndNs)
                    }
                }
            }
            if let observe { observe(pipeline.core.withLock { $0 }) }
        }
        clock.endStages()
        return try pipeline.finishRun(startNs: startNs)
    }

    private func step(_ stage: inout Stage) -> StageWait {
        switch stage {
        case .inference(var state):
            defer { stage = .inference(state) }
            return pipeline.inferenceStep(&state)
        case .capture(var state):
            defer { stage = .capture(state) }
            return pipeline.captureStep(&state)
        case .output(var state):
            defer { stage = .output(state) }
            return pipeline.outputStep(&state)
        }
    }
}
