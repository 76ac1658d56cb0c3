import ColorcamCore

/// Replays the pipeline's decisions in virtual time on a manual clock: frames arrive on a schedule, inference
/// takes the durations given, output takes `outputCostNs` per frame. No threads, no sleeps — every drop decision
/// is reproducible, and the same `PipelineCore` makes them as in the threaded `Pipeline`.
///
/// Used by tests and by `colorcam replay --clock manual` style diagnostics; it models the threads' hand-offs as
/// instantaneous (a request starts at the instant it is made).
public struct VirtualReplay {
    public var maxInFlight = 1
    public var queueCapacity = 1
    /// Realtime output budget (nil = no deadline).
    public var outputBudgetNs: Int64?
    /// Time the output stage spends per frame.
    public var outputCostNs: Int64 = 1_000_000

    public init() {}

    /// Runs `arrivalsNs.count` frames.
    /// - Parameters:
    ///   - arrivalsNs: capture time of each frame (non-decreasing).
    ///   - inferenceNs: duration of the inference started for a frame, by frame number.
    ///   - clock: advanced to each event's time as it is processed.
    ///   - observe: called after every event with the core (to check invariants such as in-flight ≤ limit).
    public func run(
        arrivalsNs: [Int64], inferenceNs: (Int) -> Int64, clock: ManualClock, trace: TraceSink,
        observe: (PipelineCore) -> Void = { _ in }
    ) -> PipelineStats {
        var core = PipelineCore(maxInFlight: maxInFlight, queueCapacity: queueCapacity)
        var running: [(job: InferenceJob, startNs: Int64, endNs: Int64)] = []
        var outputFreeNs: Int64 = 0
        var stats = PipelineStats()
        var next = 0

        func start(_ job: InferenceJob, at nowNs: Int64) {
            running.append((job, nowNs, nowNs + inferenceNs(job.frame)))
        }
        func finishDue(upTo limitNs: Int64) {
            // Completes, in time order, every inference ending at or before `limitNs` (and those they start).
            while let index = running.indices.min(by: { running[$0].endNs < running[$1].endNs }),
                running[index].endNs <= limitNs
            {
                let done = running.remove(at: index)
                clock.set(ns: max(clock.nowNs(), done.endNs))
                var span = TraceEvent.span(.infer, frame: done.job.frame, startNs: done.startNs, endNs: done.endNs)
                span.requestedNs = done.job.requestedNs
                span.queuedNs = done.job.requestedNs - done.job.arrivedNs
                span.photo = done.job.photo
                span.inferReason = done.job.reason
                span.count = 1
                trace.record(span)
                if let queued = core.finish(done.job, nowNs: done.endNs, trace: trace) {
                    start(queued, at: done.endNs)
                }
                observe(core)
            }
        }

        while next < arrivalsNs.count {
            let arrivalNs = arrivalsNs[next]
            finishDue(upTo: arrivalNs)
            clock.set(ns: max(clock.nowNs(), arrivalNs))
            let frame = next
            next += 1
            stats.framesCaptured += 1
            var capture = TraceEvent.span(.capture, frame: frame, startNs: arrivalNs, endNs: arrivalNs)
            capture.captureTsNs = arrivalNs
            trace.record(capture)
            let job = InferenceJob(frame: frame, captureTsNs: arrivalNs, arrivedNs: arrivalNs)
            let (started, _) = core.offer(job, nowNs: arrivalNs, trace: trace)
            if let started { start(started, at: arrivalNs) }
            observe(core)

            // Output: the frame goes on at once with the latest finished result; output is serial.
            let outputStartNs = max(arrivalNs, outputFreeNs)
            finishDue(upTo: outputStartNs)
            guard
                core.admitOutput(
                    frame: frame, captureTsNs: arrivalNs, nowNs: outputStartNs,
                    budgetNs: outputBudgetNs, trace: trace)
            else { continue }
            let result = core.latestResult
            outputFreeNs = outputStartNs + outputCostNs
            var composite = TraceEvent.span(.composite, frame: frame, startNs: outputStartNs, endNs: outputStartNs)
            composite.resultFrame = result?.frame ?? -1
            trace.record(composite)
            var output = TraceEvent.span(.output, frame: frame, startNs: outputStartNs, endNs: outputFreeNs)
            output.resultFrame = result?.frame ?? -1
            output.resultAgeNs = result.map { arrivalNs - $0.captureTsNs } ?? 0
            output.captureTsNs = arrivalNs
            trace.record(output)
            stats.framesOutput += 1
        }
        finishDue(upTo: .max)
        stats.drops = core.dropCounts
        stats.inferences = core.inferencesStarted
        stats.maxInFlightSeen = core.maxInFlightSeen
        return stats
    }
}
