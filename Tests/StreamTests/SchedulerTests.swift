import ColorcamCore
import Stream
import Testing

@Suite("FlowLimiter")
struct FlowLimiterTests {
    @Test func startsWhenIdleQueuesNewestAndSupersedes() {
        var limiter = FlowLimiter<Int>(maxInFlight: 1, queueCapacity: 1)
        guard case .start(1) = limiter.offer(1) else { Issue.record("first job should start"); return }
        guard case .queued(nil) = limiter.offer(2) else { Issue.record("second job should wait"); return }
        guard case .queued(superseded: 2?) = limiter.offer(3) else { Issue.record("3 should push 2 out"); return }
        #expect(limiter.inFlight == 1)
        #expect(limiter.queueDepth == 1)
        #expect(limiter.finish() == 3)
        #expect(limiter.inFlight == 1)
        #expect(limiter.finish() == nil)
        #expect(limiter.inFlight == 0)
    }

    @Test func queueZeroRefusesWhileBusy() {
        var limiter = FlowLimiter<Int>(maxInFlight: 1, queueCapacity: 0)
        guard case .start = limiter.offer(1) else { Issue.record("first job should start"); return }
        guard case .rejected(2) = limiter.offer(2) else { Issue.record("busy with no queue must refuse"); return }
        #expect(limiter.finish() == nil)
        guard case .start(3) = limiter.offer(3) else { Issue.record("idle again: start"); return }
    }

    /// Exhaustive small sweep: in flight never exceeds the limit, the queue never exceeds its capacity,
    /// and every offered job is started, refused or superseded exactly once.
    @Test(arguments: [1, 2, 3], [0, 1, 2])
    func invariantsHoldUnderAnyInterleaving(maxInFlight: Int, queue: Int) {
        var limiter = FlowLimiter<Int>(maxInFlight: maxInFlight, queueCapacity: queue)
        var started = 0, lost = 0, running = 0
        var rng: UInt64 = 0x9E37_79B9_7F4A_7C15
        for job in 0..<2_000 {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            if running > 0 && rng >> 62 == 0 {
                if limiter.finish() != nil { started += 1 } else { running -= 1 }
            }
            switch limiter.offer(job) {
            case .start: started += 1; running += 1
            case .queued(let pushed): if pushed != nil { lost += 1 }
            case .rejected: lost += 1
            }
            #expect(limiter.inFlight <= maxInFlight)
            #expect(limiter.queueDepth <= queue)
            #expect(limiter.inFlight == running)
        }
        #expect(started + lost + limiter.queueDepth == 2_000)
    }
}

@Suite("PipelineCore")
struct PipelineCoreTests {
    /// A later frame finishing first does not mark the earlier one finished (asap output waits on this).
    @Test func laterFrameFinishingFirstLeavesTheEarlierRunning() {
        var core = PipelineCore(maxInFlight: 2, queueCapacity: 1)
        let trace = RecordingTraceSink()
        let a = InferenceJob(frame: 0, captureTsNs: 0, arrivedNs: 0)
        let b = InferenceJob(frame: 1, captureTsNs: 33, arrivedNs: 33)
        let c = InferenceJob(frame: 2, captureTsNs: 66, arrivedNs: 66)
        #expect(core.offer(a, nowNs: 0, trace: trace).start?.frame == 0)
        #expect(core.offer(b, nowNs: 33, trace: trace).start?.frame == 1)
        #expect(core.offer(c, nowNs: 66, trace: trace).start == nil)  // queued behind the two running
        #expect(!core.hasFinished(frame: 0) && !core.hasFinished(frame: 1))
        #expect(core.finish(b, nowNs: 70, trace: trace)?.frame == 2)  // 1 done; the queued 2 starts
        #expect(core.latestResult?.frame == 1)
        #expect(!core.hasFinished(frame: 0), "frame 1's result must not count as frame 0's")
        #expect(core.hasFinished(frame: 1))
        #expect(!core.hasFinished(frame: 2))
        #expect(core.finish(a, nowNs: 80, trace: trace) == nil)
        #expect(core.hasFinished(frame: 0))
        #expect(core.latestResult?.frame == 1)
    }
}

@Suite("Scheduler on a manual clock")
struct ManualClockSchedulerTests {
    /// 90 ms inference on a 30 fps source: every inference starts the instant it is requested, every frame is
    /// output, and each output carries the newest finished result with its true age.
    @Test func slowInferenceNeverQueuesAndOutputKeepsEveryFrame() {
        let clock = ManualClock()
        let trace = RecordingTraceSink()
        var replay = VirtualReplay()
        replay.outputBudgetNs = 66_666_666
        let arrivals = steadyArrivals(count: 300, fps: 30)
        let stats = replay.run(
            arrivalsNs: arrivals, inferenceNs: { _ in 90_000_000 }, clock: clock, trace: trace,
            observe: { #expect($0.limiter.inFlight <= 1) })
        #expect(stats.framesCaptured == 300)
        #expect(stats.framesOutput == 300)
        #expect(stats.maxInFlightSeen == 1)
        #expect(stats.drops[.late] == 0)

        let infers = trace.events(.infer)
        #expect(!infers.isEmpty)
        for span in infers {
            #expect(span.startNs == span.requestedNs, "request→start lag must be 0 for frame \(span.frame)")
            #expect(span.endNs - span.startNs == 90_000_000)
        }
        // Spans on the infer track never overlap.
        for (a, b) in zip(infers, infers.dropFirst()) { #expect(a.endNs <= b.startNs) }

        // Hand-checked schedule: frame 0 runs 0–90 ms; frames 1 and 2 arrive while busy, 2 supersedes 1 and
        // starts at 90 ms; frame 3 waits, 4 and 5 supersede it and 4, frame 5 starts at 180 ms.
        #expect(infers.prefix(3).map(\.frame) == [0, 2, 5])
        #expect(trace.drops(.superseded).prefix(3).map(\.frame) == [1, 3, 4])

        // Each output carries the newest result finished by its output time, with age = capture difference.
        let outputs = trace.events(.output)
        #expect(outputs.count == 300)
        for output in outputs {
            let finished = infers.filter { $0.endNs <= output.startNs }
            let expected = finished.max(by: { $0.frame < $1.frame })
            #expect(output.resultFrame == (expected?.frame ?? -1))
            if let expected {
                #expect(output.resultAgeNs == arrivals[output.frame] - arrivals[expected.frame])
            }
        }
        #expect(outputs[3].resultFrame == 0 && outputs[3].resultAgeNs == 100_000_000)
        #expect(outputs[6].resultFrame == 2 && outputs[6].resultAgeNs == 133_333_333)
    }

    @Test func sixteenMillisecondInferenceGivesEveryFrameItsOwn() {
        let trace = RecordingTraceSink()
        let stats = VirtualReplay().run(
            arrivalsNs: steadyArrivals(count: 300, fps: 30),
            inferenceNs: { _ in 16_000_000 }, clock: ManualClock(), trace: trace)
        #expect(stats.inferences == 300)
        #expect(Set(trace.events(.infer).map(\.frame)) == Set(0..<300))
        #expect(trace.events(.drop).isEmpty)
    }

    @Test func queueZeroDropsBusyQueueOneDropsSuperseded() {
        let arrivals = steadyArrivals(count: 90, fps: 30)
        var replay = VirtualReplay()
        replay.queueCapacity = 0
        let busyTrace = RecordingTraceSink()
        let busy = replay.run(
            arrivalsNs: arrivals, inferenceNs: { _ in 90_000_000 }, clock: ManualClock(),
            trace: busyTrace)
        #expect(busy.drops[.superseded] == 0)
        #expect(busy.drops[.busy]! > 0)
        #expect(busy.inferences + busy.drops[.busy]! == 90)
        #expect(busy.framesOutput == 90, "a busy drop drops the inference, never the frame")

        replay.queueCapacity = 1
        let slotTrace = RecordingTraceSink()
        let slot = replay.run(
            arrivalsNs: arrivals, inferenceNs: { _ in 90_000_000 }, clock: ManualClock(),
            trace: slotTrace)
        #expect(slot.drops[.busy] == 0)
        #expect(slot.drops[.superseded]! > 0)
        #expect(slot.inferences + slot.drops[.superseded]! == 90)
        // With a slot, the next inference starts as soon as the previous ends: the model is never idle
        // while frames wait, so it runs more inferences than with no queue.
        #expect(slot.inferences > busy.inferences)
    }

    /// Fed 10× faster than inference can go, the scheduler holds at most in-flight + queue jobs: memory is flat.
    @Test func overloadKeepsStateBounded() {
        var replay = VirtualReplay()
        replay.outputCostNs = 100_000
        var peakHeld = 0
        let stats = replay.run(
            arrivalsNs: steadyArrivals(count: 3_000, fps: 300), inferenceNs: { _ in 33_333_333 },
            clock: ManualClock(), trace: NullTraceSink(),
            observe: { core in peakHeld = max(peakHeld, core.limiter.inFlight + core.limiter.queueDepth) })
        #expect(peakHeld <= 2)
        #expect(stats.framesOutput == 3_000)
        #expect(stats.inferences < 350)
        #expect(stats.inferences + stats.drops[.superseded]! == 3_000)
    }

    @Test func lateOutputIsDroppedWithReasonLate() {
        var replay = VirtualReplay()
        replay.outputCostNs = 50_000_000  // output slower than the 33 ms frame interval
        replay.outputBudgetNs = 66_666_666
        let trace = RecordingTraceSink()
        let stats = replay.run(
            arrivalsNs: steadyArrivals(count: 60, fps: 30), inferenceNs: { _ in 10_000_000 },
            clock: ManualClock(), trace: trace)
        #expect(stats.drops[.late]! > 0)
        #expect(stats.framesOutput + stats.drops[.late]! == 60)
        let outputs = trace.events(.output).map(\.frame)
        #expect(outputs == outputs.sorted(), "output keeps frames in order")
    }
}
