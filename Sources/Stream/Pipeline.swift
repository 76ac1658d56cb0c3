import CSched
import ColorcamCore
import Foundation
import Synchronization

/// Runs frames from a source through capture → inference (≤ `maxInFlight` at once) → composite → output on
/// dedicated threads, tracing every frame's fate.
///
/// Threads: a capture thread (paces the source, offers inference, hands frames to output), one inference thread
/// per in-flight place, an output thread (deadline check, composite, sink). The caller's thread only waits.
/// Output never waits for inference in `realtime` pace: each frame carries the latest finished result. In `asap`
/// pace every frame is inferred and output with its own result (batch conversion).
///
/// Per frame nothing is allocated: frames come from a `FramePool`, hand-offs are fixed-capacity, trace events
/// are fixed-size values.
public final class Pipeline: @unchecked Sendable {
    // Invariant for @unchecked Sendable: `source` is used only by the capture thread, `sink` only by the output
    // thread; shared state is `core` (Mutex), the hand-off queues (NSCondition) and atomics.

    private let source: FrameSource
    private let sink: FrameSink?
    private let runner: InferenceRunner?
    private let processor: FrameProcessor?
    private let trace: TraceSink
    private let clock: MonotonicClock
    public let config: PipelineConfig

    private let core: Locked<PipelineCore>
    private let framePool: FramePool
    /// Free inference input slots (indices; the processor owns the storage). In flight + queue + 1 places.
    private let freeSlots: Locked<[Int]>
    private let slotCount: Int
    private let scratch: FrameBuffer

    // Hand-off to the inference threads.
    private let startCondition = NSCondition()
    private var startQueue: [InferenceJob] = []
    private var stopping = false
    /// `startQueue.count`, readable without the lock: what the inference thread polls before it sleeps.
    private let pendingStarts = Atomic<Int>(0)
    /// Set when the capture loop has ended (no more requests): ends the inference thread's poll.
    private let captureEnded = Atomic<Bool>(false)
    // Completion notices (asap waits for free inference places and for a frame's own result).
    private let resultCondition = NSCondition()
    // Hand-off to the output thread: FIFO of (frame, inference submitted?) or nil = end of stream.
    private let outputCondition = NSCondition()
    private var outputQueue: [(FrameBuffer, Bool)?] = []

    private let failure = Locked<Error?>(nil)
    private let stopRequested = Atomic<Bool>(false)
    /// Frames captured so far (for progress display; any thread may read).
    public let framesCaptured = Atomic<Int>(0)
    private let framesOutput = Atomic<Int>(0)
    private let lastCapture = Atomic<Int64>(0)
    /// One past the last sequence number used (capture or drop); what a resumed run continues from.
    private let nextSequence: Atomic<Int>
    private let done = DispatchGroup()

    /// - Parameters:
    ///   - sink: where output frames go; nil to discard them (still traced).
    ///   - runner: a frame-level inference to schedule (the simulated stand-in); nil runs none.
    ///   - processor: detect/colorize/composite hooks (the real product); exclusive with `runner`.
    public init(
        source: FrameSource, sink: FrameSink?, runner: InferenceRunner?, processor: FrameProcessor? = nil,
        trace: TraceSink, clock: MonotonicClock, config: PipelineConfig
    ) {
        precondition(runner == nil || processor == nil, "a pipeline runs either a simulated runner or a processor")
        self.source = source
        self.sink = sink
        self.runner = runner
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
    public var frameIntervalNs: Int64 { config.frameIntervalOverrideNs ?? source.nominalFrameIntervalNs }
    /// How long the inference thread polls for a request before sleeping (`PipelineConfig.inferenceSpinNs`
    /// resolved: with no setting, 1.25 frame intervals on a core of its own, else 0).
    public var inferenceSpinNs: Int64 {
        max(0, config.inferenceSpinNs ?? (config.inferenceCPU == nil ? 0 : frameIntervalNs + frameIntervalNs / 4))
    }

    /// The realtime output latency budget.
    public var outputBudgetNs: Int64? {
        config.pace == .asap ? nil : (config.outputBudgetNs ?? 2 * frameIntervalNs)
    }

    /// Asks a running pipeline to stop after the current frame (e.g. on SIGINT). Any thread.
    public func requestStop() { stopRequested.store(true, ordering: .releasing) }

    /// Runs to the end of the source (or `requestStop`, or an error). Blocks the calling thread.
    /// - Throws: the first error a stage hit (source data, sink I/O); the sink is then aborted, not finished.
    public func run() throws -> PipelineStats {
        let startNs = clock.nowNs()
        if runner != nil || processor != nil {
            for i in 0..<config.maxInFlight { spawn("colorcam-infer-\(i)") { self.inferenceLoop() } }
        }
        spawn("colorcam-output") { self.outputLoop() }
        spawn("colorcam-capture") { self.captureLoop() }
        done.wait()
        let error = failure.withLock { $0 }
        if let error {
            sink?.abort()
            throw PipelineFailure(underlying: error, stats: stats(sinceNs: startNs))
        }
        try sink?.finish()
        return stats(sinceNs: startNs)
    }

    /// What the run did so far (after the threads have ended).
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

    private func fail(_ error: Error) {
        failure.withLock { if $0 == nil { $0 = error } }
        stopRequested.store(true, ordering: .releasing)
    }

    // MARK: capture

    private func captureLoop() {
        defer {
            pushOutput(nil)
            captureEnded.store(true, ordering: .releasing)
            startCondition.lock()
            stopping = true
            startCondition.broadcast()
            startCondition.unlock()
        }
        let intervalNs = frameIntervalNs
        let useSourceTimestamps = config.frameIntervalOverrideNs == nil
        var sequence = config.firstSequence
        var liveSequenceOffset: Int?
        // Whether the run's first frame still has to account for a device loss (`config.resumeAfterCaptureNs`): a
        // local flag, so later frames pay nothing for it.
        var resumeGapPending = config.resumeAfterCaptureNs != nil
        var loopBaseNs = clock.nowNs() + config.startLeadNs
        do {
            for loop in 0..<config.loops {
                if stopRequested.load(ordering: .acquiring) { break }
                if loop > 0 { try source.rewind() }
                var firstSourceTsNs: Int64?
                var lastOffsetNs: Int64 = -intervalNs
                var indexInLoop: Int64 = 0
                while !stopRequested.load(ordering: .acquiring) {
                    let buffer: FrameBuffer
                    var discard = false
                    if config.pace == .asap {
                        buffer = framePool.acquire()
                    } else if let free = framePool.tryAcquire() {
                        buffer = free
                    } else {
                        buffer = scratch  // the output is backed up: read the frame and drop it, never buffer
                        discard = true
                    }
                    guard try source.readFrame(into: buffer) else {
                        if !discard { framePool.release(buffer) }
                        break
                    }
                    var offsetNs = indexInLoop * intervalNs
                    if useSourceTimestamps, let ts = buffer.sourceTimestampNs {
                        if firstSourceTsNs == nil { firstSourceTsNs = ts }
                        offsetNs = max(lastOffsetNs, ts - firstSourceTsNs!)
                    }
                    lastOffsetNs = offsetNs
                    indexInLoop += 1
                    let captureNs: Int64
                    if source.isLive {
                        // The device paced the frame and stamped it; its gaps become driver_gap drops. Its
                        // numbering is shifted to start at `firstSequence`, so a daemon that reopens a device
                        // (whose driver counts from 0 again) keeps one increasing numbering in the trace.
                        // After a device loss the frames missed meanwhile come first (see `resumeAfterCaptureNs`).
                        captureNs = buffer.captureTimestampNs
                        if liveSequenceOffset == nil {
                            let missed = traceResumeGap(firstFrameNs: captureNs, intervalNs: intervalNs)
                            liveSequenceOffset = config.firstSequence + missed - buffer.sequence
                        }
                        buffer.sequence += liveSequenceOffset!
                        traceSourceLosses(before: buffer, atNs: captureNs)
                        sequence = buffer.sequence + 1
                    } else {
                        if config.pace == .realtime { clock.sleep(untilNs: loopBaseNs + offsetNs) }
                        captureNs = clock.nowNs()
                        if resumeGapPending {
                            resumeGapPending = false
                            sequence += traceResumeGap(firstFrameNs: captureNs, intervalNs: intervalNs)
                        }
                        buffer.sequence = sequence
                        buffer.captureTimestampNs = captureNs
                        sequence += 1
                    }
                    nextSequence.store(sequence, ordering: .releasing)
                    framesCaptured.add(1, ordering: .releasing)
                    lastCapture.store(captureNs, ordering: .relaxed)
                    if discard {
                        var span = TraceEvent.span(
                            .capture, frame: buffer.sequence, startNs: captureNs,
                            endNs: clock.nowNs())
                        span.captureTsNs = captureNs
                        trace.record(span)
                        core.withLock {
                            $0.noteDrop(
                                frame: buffer.sequence, reason: .late, atNs: captureNs, track: .capture,
                                trace: trace)
                        }
                        continue
                    }
                    if let processor {
                        let detectStartNs = clock.nowNs()
                        let photos = processor.analyse(buffer)
                        var detect = TraceEvent.span(
                            .detect, frame: buffer.sequence, startNs: detectStartNs,
                            endNs: clock.nowNs())
                        detect.count = photos
                        trace.record(detect)
                    }
                    let submitted = offerInference(buffer, nowNs: captureNs)
                    var span = TraceEvent.span(
                        .capture, frame: buffer.sequence, startNs: captureNs,
                        endNs: clock.nowNs())
                    span.captureTsNs = captureNs
                    trace.record(span)
                    pushOutput((buffer, submitted))
                }
                loopBaseNs += lastOffsetNs + intervalNs
            }
        } catch {
            fail(error)
        }
    }

    /// On the run's first frame after a device loss (`config.resumeAfterCaptureNs`): traces the frame slots between
    /// the last capture before the loss and `firstFrameNs` as `driver_gap` drops, numbered from `firstSequence`
    /// and stamped one interval apart, and returns how many (the first frame is numbered after them). Slots are
    /// counted to the nearest whole interval, so a frame a little early or late in its slot counts the same.
    private func traceResumeGap(firstFrameNs: Int64, intervalNs: Int64) -> Int {
        guard let afterNs = config.resumeAfterCaptureNs, intervalNs > 0, firstFrameNs > afterNs else { return 0 }
        let slots = (firstFrameNs - afterNs + intervalNs / 2) / intervalNs
        let missed = Int(min(100_000, max(0, slots - 1)))
        core.withLock { core in
            for i in 0..<missed {
                core.noteDrop(
                    frame: config.firstSequence + i, reason: .driverGap,
                    atNs: afterNs + Int64(i + 1) * intervalNs, track: .capture, trace: trace)
            }
        }
        return missed
    }

    /// Traces the frames a live source lost before `frame`: sequence gaps as `driver_gap` (one per missing
    /// number), undecodable frames as `decode_error` (frame -1: their numbers are unknown).
    private func traceSourceLosses(before frame: FrameBuffer, atNs: Int64) {
        let gap = source.gapBeforeLastFrame
        let errors = source.decodeErrorsBeforeLastFrame
        guard gap > 0 || errors > 0 else { return }
        core.withLock { core in
            for i in 0..<min(gap, 100_000) {
                core.noteDrop(
                    frame: frame.sequence - gap + i, reason: .driverGap, atNs: atNs, track: .capture,
                    trace: trace)
            }
            for _ in 0..<errors {
                core.noteDrop(frame: -1, reason: .decodeError, atNs: atNs, track: .capture, trace: trace)
            }
        }
    }

    /// Offers `frame`'s inference; returns whether it was started or queued.
    private func offerInference(_ frame: FrameBuffer, nowNs: Int64) -> Bool {
        guard runner != nil || processor != nil else { return false }
        if config.pace == .asap {
            // Batch conversion: wait for a free inference place so every frame gets its own inference.
            resultCondition.lock()
            while !core.withLock({ $0.limiter.canStart }) { resultCondition.wait() }
            resultCondition.unlock()
        }
        var job = InferenceJob(frame: frame.sequence, captureTsNs: frame.captureTimestampNs, arrivedNs: nowNs)
        if let processor {
            // Places = in flight + queue + 1, so a free slot always exists here.
            guard let slot = freeSlots.withLock({ $0.popLast() }) else {
                preconditionFailure("inference input slots exhausted")
            }
            guard let request = processor.prepareInference(frame, slot: slot) else {
                freeSlots.withLock { $0.append(slot) }
                return false
            }
            job.inputSlot = slot
            job.photo = request.photo
            job.reason = request.reason
        }
        let (start, released) = core.withLock { $0.offer(job, nowNs: clock.nowNs(), trace: trace) }
        if let released, released.inputSlot >= 0 {
            freeSlots.withLock { $0.append(released.inputSlot) }
        }
        if let start {
            startCondition.lock()
            startQueue.append(start)
            pendingStarts.add(1, ordering: .releasing)
            startCondition.signal()
            startCondition.unlock()
            // Let the woken inference thread have this core now: with every core busy, the scheduler would
            // otherwise start it only after its wakeup granularity (~1 ms), and that wait is request→start lag.
            sched_yield()
            return true
        }
        return released?.frame != job.frame
    }

    // MARK: inference

    private func inferenceLoop() {
        if let cpu = config.inferenceCPU { CPUPlacement.setThreadCPUs([cpu]) }
        let spinNs = inferenceSpinNs
        while true {
            if spinNs > 0 { pollForRequest(forNs: spinNs) }
            startCondition.lock()
            while startQueue.isEmpty && !stopping { startCondition.wait() }
            if startQueue.isEmpty {
                startCondition.unlock()
                return
            }
            var job = startQueue.removeFirst()
            pendingStarts.subtract(1, ordering: .relaxed)
            startCondition.unlock()
            while true {
                let startNs = clock.nowNs()
                var outcome = InferenceOutcome.local
                if let processor {
                    outcome = processor.infer(slot: job.inputSlot, frame: job.frame, captureTsNs: job.captureTsNs)
                } else {
                    runner?.run(frame: job.frame)
                }
                let endNs = clock.nowNs()
                var span = TraceEvent.span(.infer, frame: job.frame, startNs: startNs, endNs: endNs)
                span.requestedNs = job.requestedNs
                span.queuedNs = job.requestedNs - job.arrivedNs
                span.count = (runner?.isSimulated ?? processor?.isSimulated ?? false) ? 1 : 0
                span.photo = job.photo
                span.inferReason = job.reason
                span.backend = outcome.backend
                span.failure = outcome.failure
                trace.record(span)
                if outcome.backend != .local { recordRemoteParts(outcome, frame: job.frame, startNs: startNs) }
                if job.inputSlot >= 0 { freeSlots.withLock { $0.append(job.inputSlot) } }
                let next = core.withLock { $0.finish(job, nowNs: endNs, trace: trace) }
                resultCondition.lock()
                resultCondition.broadcast()
                resultCondition.unlock()
                guard let next else { break }
                job = next
            }
        }
    }

    /// A remote inference's send / wait / receive spans, laid end to end from the `infer` span's start (the
    /// durations are measured by the client on the real clock; a fallback run after a failed request has none).
    private func recordRemoteParts(_ outcome: InferenceOutcome, frame: Int, startNs: Int64) {
        var at = startNs
        func part(_ kind: TraceEvent.Kind, _ ns: Int64) {
            guard ns > 0 else { return }
            trace.record(TraceEvent.span(kind, frame: frame, startNs: at, endNs: at + ns))
            at += ns
        }
        part(.inferSend, outcome.sendNs)
        part(.inferWait, outcome.waitNs)
        part(.inferReceive, outcome.receiveNs)
    }

    /// Busy-waits (with the CPU's spin hint, reading the clock every 256 turns) until a request is pending, the
    /// capture loop has ended, or `ns` of real time has passed (`Int64.max`: no limit). Real time is
    /// `CLOCK_MONOTONIC`, not the pipeline's clock: the poll spends CPU time, which a manual clock does not advance.
    /// The caller then takes the request, or sleeps on `startCondition` as without polling. Runs on the inference
    /// thread only; allocates nothing.
    private func pollForRequest(forNs ns: Int64) {
        let (sum, overflow) = SystemClock.rawNs().addingReportingOverflow(ns)
        let deadlineNs = overflow ? Int64.max : sum
        var turns = 0
        while pendingStarts.load(ordering: .acquiring) == 0 && !captureEnded.load(ordering: .relaxed) {
            colorcam_cpu_relax()
            turns &+= 1
            if turns & 255 == 0 && SystemClock.rawNs() >= deadlineNs { return }
        }
    }

    // MARK: output

    private func pushOutput(_ item: (FrameBuffer, Bool)?) {
        outputCondition.lock()
        outputQueue.append(item)
        outputCondition.signal()
        outputCondition.unlock()
    }

    private func outputLoop() {
        let budgetNs = outputBudgetNs
        while true {
            outputCondition.lock()
            while outputQueue.isEmpty { outputCondition.wait() }
            let item = outputQueue.removeFirst()
            outputCondition.unlock()
            guard let (frame, submitted) = item else { return }
            defer { framePool.release(frame) }
            if failure.withLock({ $0 != nil }) { continue }
            let nowNs = clock.nowNs()
            let admitted = core.withLock {
                $0.admitOutput(
                    frame: frame.sequence, captureTsNs: frame.captureTimestampNs, nowNs: nowNs,
                    budgetNs: budgetNs, trace: trace)
            }
            guard admitted else { continue }
            let ownResult = config.pace == .asap && submitted
            if ownResult {
                // Wait for this frame's own inference. Not `latestResult >= frame`: a later frame's inference can
                // finish first (several in flight), and by the time this thread reads `latestResult` the next
                // frame's may have finished too (seen under the sanitizers' slowdown: frame N carried N+1).
                resultCondition.lock()
                while !core.withLock({ $0.hasFinished(frame: frame.sequence) }) { resultCondition.wait() }
                resultCondition.unlock()
            }
            let compositeStartNs = clock.nowNs()
            // With a processor, the frame carries what it composited (per-photo results); otherwise the latest
            // finished inference (in asap: its own), and the frame passes through.
            let result: (frame: Int, captureTsNs: Int64)?
            if let processor {
                result = processor.composite(frame).map { ($0.resultFrame, $0.resultCaptureTsNs) }
            } else if ownResult {
                result = (frame.sequence, frame.captureTimestampNs)
            } else {
                result = core.withLock { $0.latestResult }.map { ($0.frame, $0.captureTsNs) }
            }
            let resultFrame = result?.frame ?? -1
            let compositeEndNs = clock.nowNs()
            if config.pace == .realtime, let delayNs = config.presentationDelayNs,
                compositeEndNs < frame.captureTimestampNs + delayNs
            {
                clock.sleep(untilNs: frame.captureTimestampNs + delayNs)
            }
            let outputStartNs = clock.nowNs()
            var composite = TraceEvent.span(
                .composite, frame: frame.sequence, startNs: compositeStartNs,
                endNs: compositeEndNs)
            composite.resultFrame = resultFrame
            trace.record(composite)
            do {
                try sink?.write(frame)
            } catch {
                fail(error)
                continue
            }
            var span = TraceEvent.span(.output, frame: frame.sequence, startNs: outputStartNs, endNs: clock.nowNs())
            span.resultFrame = resultFrame
            span.resultAgeNs = result.map { frame.captureTimestampNs - $0.captureTsNs } ?? 0
            span.captureTsNs = frame.captureTimestampNs
            trace.record(span)
            framesOutput.add(1, ordering: .releasing)
        }
    }
}
