import CSched
import ColorcamCore
import Foundation
import Synchronization

/// Runs frames from a source through capture → inference (≤ `maxInFlight` at once) → composite → output, tracing
/// every frame's fate.
///
/// The work of each stage is written once, as steps that never block (`Pipeline+Capture.swift`,
/// `Pipeline+Inference.swift`, `Pipeline+Output.swift`): a step does its part and says what the stage waits for
/// next (`StageWait`). Two drivers run the same steps:
/// - `run()`: the product. A capture thread, one inference thread per in-flight place and an output thread; each
///   loops over its stage's steps and blocks where the step says (a condition variable, or the clock).
/// - `PipelineStepper`: tests and diagnostics. One thread plays every stage on a `SteppedClock`, always running
///   the stage whose time is earliest, so every drop decision, lag and output time is reproducible exactly.
///
/// Output never waits for inference in `realtime` pace: each frame carries the latest finished result. In `asap`
/// pace every frame is inferred and output with its own result (batch conversion).
///
/// Per frame nothing is allocated: frames come from a `FramePool`, hand-offs are fixed-capacity, trace events
/// are fixed-size values.
public final class Pipeline: @unchecked Sendable {
    // Invariant for @unchecked Sendable: `source` and the capture state are used only by the capture stage, `sink`
    // and the output state only by the output stage; shared state is `core` (Mutex), the hand-off queues (their
    // NSConditions) and atomics. Under `PipelineStepper` every stage runs on the stepper's one thread.

    let source: FrameSource
    let sink: FrameSink?
    /// Detect/colorize/composite hooks (the product's, or the diagnostic simulation); nil runs no inference.
    let processor: FrameProcessor?
    let trace: TraceSink
    let clock: MonotonicClock
    public let config: PipelineConfig

    let core: Locked<PipelineCore>
    let framePool: FramePool
    /// Free inference input slots (indices; the processor owns the storage). In flight + queue + 1 places.
    let freeSlots: Locked<[Int]>
    let slotCount: Int
    let scratch: FrameBuffer

    // Hand-off to the inference stages.
    let startCondition = NSCondition()
    var startQueue: [InferenceJob] = []
    var stopping = false
    /// `startQueue.count`, readable without the lock: what the inference thread polls before it sleeps.
    let pendingStarts = Atomic<Int>(0)
    /// Set when the capture stage has ended (no more requests): ends the inference thread's poll.
    let captureEnded = Atomic<Bool>(false)
    // Completion notices (asap waits for free inference places, composites and a frame's own result).
    let resultCondition = NSCondition()
    /// asap: the sequence of the last frame the output stage has composited (or dropped); signalled on
    /// `resultCondition`.
    let compositedThrough = Atomic<Int>(Int.min)
    // Hand-off to the output stage: FIFO of (frame, inference submitted?) or nil = end of stream.
    let outputCondition = NSCondition()
    var outputQueue: [(FrameBuffer, Bool)?] = []

    let failure = Locked<Error?>(nil)
    let stopRequested = Atomic<Bool>(false)
    /// Frames captured so far (for progress display; any thread may read).
    public let framesCaptured = Atomic<Int>(0)
    let framesOutput = Atomic<Int>(0)
    let lastCapture = Atomic<Int64>(0)
    /// One past the last sequence number used (capture or drop); what a resumed run continues from.
    let nextSequence: Atomic<Int>
    private let done = DispatchGroup()

    /// - Parameters:
    ///   - sink: where output frames go; nil to discard them (still traced).
    ///   - processor: detect/colorize/composite hooks (the product, or `SimulatedInference`); nil runs no
    ///     inference and outputs frames as they come.
    public init(
        source: FrameSource, sink: FrameSink?, processor: FrameProcessor?, trace: TraceSink, clock: MonotonicClock,
        config: PipelineConfig
    ) {
        self.source = source
        self.sink = sink
        self.processor = processor
        self.trace = trace
        self.clock = clock
        self.config = config
        nextSequence = Atomic(config.firstSequence)
        core = Locked(PipelineCore(maxInFlight: config.maxInFlight, queueCapacity: config.queueCapacity))
        framePool = FramePool(geometry: source.geometry, count: config.framePoolSize)
        slotCount = config.maxInFlight + config.queueCapacity + 1
        var slots = Array((0..<slotCount).reversed())
        slots.reserveCapacity(slotCount)
        freeSlots = Locked(slots)
        processor?.prepare(framePoolSize: config.framePoolSize, inputSlotCount: slotCount)
        scratch = FrameBuffer(geometry: source.geometry)
        startQueue.reserveCapacity(config.maxInFlight + config.queueCapacity + 1)
        outputQueue.reserveCapacity(config.framePoolSize + 1)
    }

    /// The frame interval used for pacing: the `--fps` override or the source's nominal interval.
    public var frameIntervalNs: Int64 { config.frameIntervalNs(sourceIntervalNs: source.nominalFrameIntervalNs) }
    /// How long the inference thread polls for a request before sleeping (`PipelineConfig.inferenceSpinNs`
    /// resolved: with no setting, 1.25 frame intervals on a core of its own, else 0).
    public var inferenceSpinNs: Int64 {
        max(0, config.inferenceSpinNs ?? (config.inferenceCPU == nil ? 0 : frameIntervalNs + frameIntervalNs / 4))
    }

    /// The realtime output latency budget.
    public var outputBudgetNs: Int64? { config.outputBudgetNs(frameIntervalNs: frameIntervalNs) }

    /// How many inference stages run (one per in-flight place; none without a processor).
    var inferenceStageCount: Int { processor == nil ? 0 : config.maxInFlight }

    /// Asks a running pipeline to stop after the current frame (e.g. on SIGINT). Any thread.
    public func requestStop() { stopRequested.store(true, ordering: .releasing) }

    /// Runs to the end of the source (or `requestStop`, or an error) on the pipeline's threads. Blocks the calling
    /// thread.
    /// - Throws: the first error a stage hit (source data, sink I/O); the sink is then aborted, not finished.
    public func run() throws -> PipelineStats {
        let startNs = clock.nowNs()
        for i in 0..<inferenceStageCount { spawn("colorcam-infer-\(i)") { self.inferenceThread() } }
        spawn("colorcam-output") { self.outputThread() }
        spawn("colorcam-capture") { self.captureThread() }
        done.wait()
        return try finishRun(startNs: startNs)
    }

    /// After every stage has ended: finishes (or, after an error, aborts) the sink and returns what the run did.
    func finishRun(startNs: Int64) throws -> PipelineStats {
        let error = failure.withLock { $0 }
        if let error {
            sink?.abort()
            throw PipelineFailure(underlying: error, stats: stats(sinceNs: startNs))
        }
        try sink?.finish()
        return stats(sinceNs: startNs)
    }

    /// What the run did so far (after the stages have ended).
    private func stats(sinceNs startNs: Int64) -> PipelineStats {
        var stats = PipelineStats()
        core.withLock { core in
            stats.drops = core.dropCounts
            stats.inferences = core.inferencesStarted
            stats.maxInFlightSeen = core.maxInFlightSeen
        }
        stats.framesCaptured = framesCaptured.load(ordering: .acquiring)
        stats.framesOutput = framesOutput.load(ordering: .acquiring)
        stats.durationNs = clock.nowNs() - startNs
        stats.nextSequence = nextSequence.load(ordering: .acquiring)
        stats.lastCaptureTsNs = lastCapture.load(ordering: .relaxed)
        return stats
    }

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        done.enter()
        let thread = Thread { [done] in
            body()
            done.leave()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    func fail(_ error: Error) {
        failure.withLock { if $0 == nil { $0 = error } }
        stopRequested.store(true, ordering: .releasing)
    }

    // MARK: threads: each loops over its stage's steps and blocks where a step says

    private func captureThread() {
        var state = CaptureState(pipeline: self)
        while true {
            let wait = captureStep(&state)
            if case .ended = wait { return }
            block(on: wait)
        }
    }

    private func inferenceThread() {
        if let cpu = config.inferenceCPU { CPUPlacement.setThreadCPUs([cpu]) }
        let spinNs = inferenceSpinNs
        var state = InferenceState()
        while true {
            let wait = inferenceStep(&state)
            if case .ended = wait { return }
            if case .job = wait, spinNs > 0 { pollForRequest(forNs: spinNs) }
            block(on: wait)
        }
    }

    private func outputThread() {
        var state = OutputState()
        while true {
            let wait = outputStep(&state)
            if case .ended = wait { return }
            block(on: wait)
        }
    }

    /// Blocks the calling thread until `wait` is satisfied (`isSatisfied`), on the condition its satisfier signals.
    private func block(on wait: StageWait) {
        switch wait {
        case .none, .ended:
            return
        case .until(let ns):
            clock.sleep(untilNs: ns)
        case .frameBuffer:
            framePool.waitForFree()
        case .inferencePlace, .ownResult:
            resultCondition.lock()
            while !isSatisfied(wait) { resultCondition.wait() }
            resultCondition.unlock()
        case .job:
            startCondition.lock()
            while startQueue.isEmpty && !stopping { startCondition.wait() }
            startCondition.unlock()
        case .outputItem:
            outputCondition.lock()
            while outputQueue.isEmpty { outputCondition.wait() }
            outputCondition.unlock()
        }
    }

    /// Whether a stage waiting for `wait` may take its next step now (`.until` is the clock's business: false).
    func isSatisfied(_ wait: StageWait) -> Bool {
        switch wait {
        case .none: return true
        case .ended, .until: return false
        case .frameBuffer: return framePool.freeCount > 0
        case .inferencePlace(let frame):
            return compositedThrough.load(ordering: .acquiring) >= frame && core.withLock { $0.limiter.canStart }
        case .ownResult(let frame): return core.withLock { $0.hasFinished(frame: frame) }
        case .job:
            startCondition.lock()
            defer { startCondition.unlock() }
            return !startQueue.isEmpty || stopping
        case .outputItem:
            outputCondition.lock()
            defer { outputCondition.unlock() }
            return !outputQueue.isEmpty
        }
    }
}

/// What a pipeline stage needs before its next step. A step never blocks: it returns one of these, and the driver
/// (a thread in `Pipeline.run()`, or `PipelineStepper`) waits for it.
enum StageWait: Equatable {
    /// Nothing: take the next step now (a step that spent time on the clock returns this, so that the driver can
    /// run, first, whatever another stage had due in the meantime).
    case none
    /// Until the pipeline clock reads this time (realtime pacing, the presentation delay).
    case until(Int64)
    /// asap capture: a free frame buffer.
    case frameBuffer
    /// asap capture: a free inference place (every frame gets its own inference), once the output stage has
    /// composited frame `afterComposite` (the last frame capture handed it; `Int.min`: none yet).
    case inferencePlace(afterComposite: Int)
    /// An inference stage: a start request (or the end of capture).
    case job
    /// The output stage: a frame (or the end of the stream).
    case outputItem
    /// asap output: this frame's own inference has finished.
    case ownResult(frame: Int)
    /// The stage has finished for good.
    case ended
}
