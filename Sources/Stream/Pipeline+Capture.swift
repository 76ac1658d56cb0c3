import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// The capture stage's place in its loop over the source, kept between steps. Owned by the capture stage.
struct CaptureState {
    enum Phase {
        /// Start (or rewind for) play number `loop`.
        case startLoop
        /// Take a buffer and read the next frame.
        case read
        /// A frame has been read (into `scratch` when `discard`: no buffer was free); stamp it when due.
        case stamp(FrameBuffer, discard: Bool)
        /// Detected; offer its inference (asap: once a place is free) and hand it to output.
        case offer(FrameBuffer, captureNs: Int64)
        case ended
    }

    var phase = Phase.startLoop
    var loop = 0
    var sequence: Int
    /// Live sources: added to the device's numbering (set at the first frame).
    var liveSequenceOffset: Int?
    /// Whether the run's first frame still has to account for a device loss (`config.resumeAfterCaptureNs`).
    var resumeGapPending: Bool
    /// When this play of the source started (pipeline clock): frame offsets count from here.
    var loopBaseNs: Int64?
    /// The same start in the file's own time (0 for the first play): frames' `sceneTimestampNs` count from here.
    var sceneLoopBaseNs: Int64 = 0
    var firstSourceTsNs: Int64?
    var lastOffsetNs: Int64 = 0
    var indexInLoop: Int64 = 0
    /// The sequence of the last frame handed to output (asap: its composite must be done before the next inference
    /// starts; `StageWait.inferencePlace`).
    var lastPushed = Int.min

    init(pipeline: Pipeline) {
        sequence = pipeline.config.firstSequence
        resumeGapPending = pipeline.config.resumeAfterCaptureNs != nil
    }
}

extension Pipeline {
    /// One step of the capture stage: paces the source, stamps each frame, runs the processor's analysis, offers
    /// the frame's inference to the scheduler and hands the frame to output. Never blocks; see `StageWait`.
    func captureStep(_ state: inout CaptureState) -> StageWait {
        do {
            return try captureStepThrowing(&state)
        } catch {
            fail(error)
            endCapture(&state)
            return .ended
        }
    }

    private func captureStepThrowing(_ state: inout CaptureState) throws -> StageWait {
        let intervalNs = frameIntervalNs
        switch state.phase {
        case .ended:
            return .ended
        case .startLoop:
            if state.loopBaseNs == nil { state.loopBaseNs = clock.nowNs() + config.startLeadNs }
            if state.loop >= config.loops || stopRequested.load(ordering: .acquiring) {
                endCapture(&state)
                return .ended
            }
            if state.loop > 0 { try source.rewind() }
            state.firstSourceTsNs = nil
            state.lastOffsetNs = -intervalNs
            state.indexInLoop = 0
            state.phase = .read
            return .none
        case .read:
            if stopRequested.load(ordering: .acquiring) {
                endCapture(&state)
                return .ended
            }
            let buffer: FrameBuffer
            var discard = false
            if let free = framePool.tryAcquire() {
                buffer = free
            } else if config.pace == .asap {
                return .frameBuffer
            } else {
                buffer = scratch  // the output is backed up: read the frame and drop it, never buffer
                discard = true
            }
            guard try source.readFrame(into: buffer) else {
                if !discard { framePool.release(buffer) }
                state.loopBaseNs! += state.lastOffsetNs + intervalNs
                state.sceneLoopBaseNs += state.lastOffsetNs + intervalNs
                state.loop += 1
                state.phase = .startLoop
                return .none
            }
            var offsetNs = state.indexInLoop * intervalNs
            if config.frameIntervalOverrideNs == nil, let ts = buffer.sourceTimestampNs {
                if state.firstSourceTsNs == nil { state.firstSourceTsNs = ts }
                offsetNs = max(state.lastOffsetNs, ts - state.firstSourceTsNs!)
            }
            state.lastOffsetNs = offsetNs
            state.indexInLoop += 1
            state.phase = .stamp(buffer, discard: discard)
            // A live device paced the frame itself; a file is paced here.
            return !source.isLive && config.pace == .realtime ? .until(state.loopBaseNs! + offsetNs) : .none
        case .stamp(let buffer, let discard):
            let captureNs = stamp(buffer, &state, intervalNs: intervalNs)
            if discard {
                var span = TraceEvent.span(.capture, frame: buffer.sequence, startNs: captureNs, endNs: clock.nowNs())
                span.captureTsNs = captureNs
                trace.record(span)
                core.withLock {
                    $0.noteDrop(frame: buffer.sequence, reason: .late, atNs: captureNs, track: .capture, trace: trace)
                }
                state.phase = .read
                return .none
            }
            if let processor {
                let detectStartNs = clock.nowNs()
                if let photos = processor.analyse(buffer) {
                    var detect = TraceEvent.span(
                        .detect, frame: buffer.sequence, startNs: detectStartNs, endNs: clock.nowNs())
                    detect.count = photos
                    trace.record(detect)
                }
            }
            state.phase = .offer(buffer, captureNs: captureNs)
            return .none
        case .offer(let buffer, let captureNs):
            // Batch conversion: every frame gets its own inference. With one in flight (the default) it starts once
            // every earlier frame is composited, so a later frame's colours never reach an earlier frame's output and
            // the output does not depend on timing; several in flight overlap instead (throughput over that).
            if processor != nil && config.pace == .asap {
                let wait = StageWait.inferencePlace(
                    afterComposite: config.maxInFlight == 1 ? state.lastPushed : Int.min)
                if !isSatisfied(wait) { return wait }
            }
            let submitted = offerInference(buffer, nowNs: captureNs)
            var span = TraceEvent.span(.capture, frame: buffer.sequence, startNs: captureNs, endNs: clock.nowNs())
            span.captureTsNs = captureNs
            trace.record(span)
            pushOutput((buffer, submitted))
            state.lastPushed = buffer.sequence
            state.phase = .read
            return .none
        }
    }

    /// Numbers and time-stamps a frame just read (its capture time: the device's stamp for a live source, now for
    /// a file) and counts it. Returns the capture time.
    private func stamp(_ buffer: FrameBuffer, _ state: inout CaptureState, intervalNs: Int64) -> Int64 {
        let captureNs: Int64
        if source.isLive {
            // The device paced the frame and stamped it; its gaps become driver_gap drops. Its numbering is
            // shifted to start at `firstSequence`, so a daemon that reopens a device (whose driver counts from 0
            // again) keeps one increasing numbering in the trace. After a device loss the frames missed meanwhile
            // come first (see `resumeAfterCaptureNs`).
            captureNs = buffer.captureTimestampNs
            buffer.sceneTimestampNs = captureNs
            if state.liveSequenceOffset == nil {
                let missed = traceResumeGap(firstFrameNs: captureNs, intervalNs: intervalNs)
                state.liveSequenceOffset = config.firstSequence + missed - buffer.sequence
            }
            buffer.sequence += state.liveSequenceOffset!
            traceSourceLosses(before: buffer, atNs: captureNs)
            state.sequence = buffer.sequence + 1
        } else {
            captureNs = clock.nowNs()
            if state.resumeGapPending {
                state.resumeGapPending = false
                state.sequence += traceResumeGap(firstFrameNs: captureNs, intervalNs: intervalNs)
            }
            buffer.sequence = state.sequence
            buffer.captureTimestampNs = captureNs
            buffer.sceneTimestampNs = state.sceneLoopBaseNs + state.lastOffsetNs
            state.sequence += 1
        }
        nextSequence.store(state.sequence, ordering: .releasing)
        framesCaptured.add(1, ordering: .releasing)
        lastCapture.store(captureNs, ordering: .relaxed)
        return captureNs
    }

    /// The end of capture: tells output (end of stream) and the inference stages (no more requests).
    private func endCapture(_ state: inout CaptureState) {
        state.phase = .ended
        pushOutput(nil)
        captureEnded.store(true, ordering: .releasing)
        startCondition.lock()
        stopping = true
        startCondition.broadcast()
        startCondition.unlock()
    }

    /// On the run's first frame after a device loss (`config.resumeAfterCaptureNs`): traces the frames missed
    /// since the last capture before the loss (`DriverGap`) as `driver_gap` drops numbered from `firstSequence`, and
    /// returns how many (the first frame is numbered after them). Counting to the nearest whole interval, a frame a
    /// little early or late in its slot counts the same.
    private func traceResumeGap(firstFrameNs: Int64, intervalNs: Int64) -> Int {
        guard let afterNs = config.resumeAfterCaptureNs else { return 0 }
        let gap = DriverGap(afterNs: afterNs, untilNs: firstFrameNs, intervalNs: intervalNs)
        core.withLock { core in
            gap.forEachFrame(firstSequence: config.firstSequence) { frame, atNs in
                core.noteDrop(frame: frame, reason: .driverGap, atNs: atNs, track: .capture, trace: trace)
            }
        }
        return gap.count
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
        guard let processor else { return false }
        var job = InferenceJob(frame: frame.sequence, captureTsNs: frame.captureTimestampNs, arrivedNs: nowNs)
        // Places = in flight + queue + 1, so a free slot always exists here.
        guard let slot = freeSlots.withLock({ $0.popLast() }) else {
            preconditionFailure("inference input slots exhausted")
        }
        let idle = core.withLock { $0.limiter.isIdle }
        guard let request = processor.prepareInference(frame, slot: slot, inferenceIdle: idle) else {
            freeSlots.withLock { $0.append(slot) }
            return false
        }
        job.inputSlot = slot
        job.photo = request.photo
        job.reason = request.reason
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

    private func pushOutput(_ item: (FrameBuffer, Bool)?) {
        outputCondition.lock()
        outputQueue.append(item)
        outputCondition.signal()
        outputCondition.unlock()
    }
}
