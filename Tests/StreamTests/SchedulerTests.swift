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

/// The real `Pipeline`'s stages (the code its threads run) driven by `PipelineStepper` on a stepped clock: every
/// scheduling rule asserted with exact times. Frame k is captured at k × 33_333_333 ns (30 fps, no lead).
@Suite("Scheduler, stepped")
struct SteppedSchedulerTests {
    /// 90 ms inference on a 30 fps source: every inference starts the instant it is requested, every frame is
    /// output at its capture time (output never waits for inference), and each carries the newest finished result
    /// with its true age.
    @Test func slowInferenceNeverQueuesAndOutputKeepsEveryFrame() throws {
        let trace = RecordingTraceSink()
        var run = SteppedRun()
        run.config.outputBudgetNs = 66_666_666
        let (stats, sink) = try run.run(trace: trace, observe: { #expect($0.limiter.inFlight <= 1) })
        let i = run.intervalNs
        #expect(stats.framesCaptured == 300)
        #expect(stats.framesOutput == 300)
        #expect(sink.written == Array(0..<300))
        #expect(stats.maxInFlightSeen == 1)
        #expect(stats.drops[.late] == 0)

        let captures = trace.events(.capture)
        #expect(captures.map(\.captureTsNs) == (0..<300).map { Int64($0) * i })
        let infers = trace.events(.infer)
        for span in infers {
            #expect(span.startNs == span.requestedNs, "request→start lag must be 0 for frame \(span.frame)")
            #expect(span.endNs - span.startNs == 90_000_000)
        }
        // Spans on the infer track never overlap; a queued frame starts the instant the one before ends.
        for (a, b) in zip(infers, infers.dropFirst()) { #expect(b.startNs == a.endNs) }
        #expect(stats.durationNs == infers.last!.endNs, "the run ends with its last inference")

        // Hand-checked schedule: frame 0 runs 0–90 ms; frames 1 and 2 arrive while busy, 2 supersedes 1 and
        // starts at 90 ms; frame 3 waits, 4 and 5 supersede it and 4, frame 5 starts at 180 ms.
        #expect(infers.prefix(3).map(\.frame) == [0, 2, 5])
        #expect(infers.prefix(3).map(\.queuedNs) == [0, 90_000_000 - 2 * i, 180_000_000 - 5 * i])
        #expect(trace.drops(.superseded).prefix(3).map(\.frame) == [1, 3, 4])
        #expect(stats.inferences + stats.drops[.superseded]! == 300)

        // Output at capture time, 1 ms long, carrying the newest result finished by then, aged by capture times.
        let outputs = trace.events(.output)
        #expect(outputs.count == 300)
        for output in outputs {
            #expect(output.startNs == Int64(output.frame) * i && output.endNs == output.startNs + 1_000_000)
            let expected = infers.filter { $0.endNs <= output.startNs }.max(by: { $0.frame < $1.frame })
            #expect(output.resultFrame == (expected?.frame ?? -1))
            #expect(output.resultAgeNs == expected.map { Int64(output.frame - $0.frame) * i } ?? 0)
        }
        #expect(outputs[2].resultFrame == -1)
        #expect(outputs[3].resultFrame == 0 && outputs[3].resultAgeNs == 3 * i)
        #expect(outputs[6].resultFrame == 2 && outputs[6].resultAgeNs == 4 * i)
    }

    /// Inference faster than a frame: every frame gets its own, nothing is dropped.
    @Test func sixteenMillisecondInferenceGivesEveryFrameItsOwn() throws {
        let trace = RecordingTraceSink()
        var run = SteppedRun()
        run.inferenceNs = { _ in 16_000_000 }
        let (stats, _) = try run.run(trace: trace)
        #expect(stats.inferences == 300)
        #expect(trace.events(.infer).map(\.frame) == Array(0..<300))
        #expect(trace.events(.infer).map(\.startNs) == (0..<300).map { Int64($0) * run.intervalNs })
        #expect(trace.events(.drop).isEmpty)
        // Output at capture carries the previous frame's result (this frame's is 16 ms away).
        #expect(trace.events(.output).dropFirst().allSatisfy { $0.resultFrame == $0.frame - 1 })
    }

    /// Queue 0: a frame offered while busy is refused (`busy`); the next idle frame starts. 90 ms on 30 fps: every
    /// third frame runs (0, 3, 6, …), the two between are refused. Queue 1: the newest waits and supersedes.
    @Test func queueZeroDropsBusyQueueOneDropsSuperseded() throws {
        var run = SteppedRun()
        run.count = 90
        run.config.queueCapacity = 0
        let busyTrace = RecordingTraceSink()
        let (busy, _) = try run.run(trace: busyTrace)
        #expect(busy.drops[.superseded] == 0)
        #expect(busyTrace.events(.infer).map(\.frame) == Array(stride(from: 0, to: 90, by: 3)))
        #expect(busyTrace.drops(.busy).map(\.frame) == (0..<90).filter { $0 % 3 != 0 })
        #expect(busyTrace.drops(.busy).allSatisfy { $0.track == .capture })
        #expect(busy.framesOutput == 90, "a busy drop drops the inference, never the frame")

        run.config.queueCapacity = 1
        let slotTrace = RecordingTraceSink()
        let (slot, _) = try run.run(trace: slotTrace)
        #expect(slot.drops[.busy] == 0)
        let infers = slotTrace.events(.infer)
        #expect(infers.prefix(6).map(\.frame) == [0, 2, 5, 8, 10, 13])
        #expect(slot.inferences + slot.drops[.superseded]! == 90)
        // With a slot, the model is never idle while frames wait: 0, 90, 180, … ms.
        #expect(infers.map(\.startNs) == (0..<infers.count).map { Int64($0) * 90_000_000 })
        #expect(slot.inferences > busy.inferences)
    }

    /// Fed 10× faster than inference can go, the scheduler holds at most in-flight + queue jobs: memory is flat.
    @Test func overloadKeepsStateBounded() throws {
        var run = SteppedRun()
        run.count = 3_000
        run.fps = 300
        run.inferenceNs = { _ in 33_333_333 }
        run.outputCostNs = 100_000
        var peakHeld = 0
        let (stats, _) = try run.run(
            trace: NullTraceSink(),
            observe: { core in peakHeld = max(peakHeld, core.limiter.inFlight + core.limiter.queueDepth) })
        #expect(peakHeld == 2)
        #expect(stats.framesOutput == 3_000)
        // One inference per 33.3 ms over the 10 s run, each the newest frame.
        #expect(stats.inferences == 300 || stats.inferences == 301)
        #expect(stats.inferences + stats.drops[.superseded]! == 3_000)
    }

    /// Output slower than the frame interval: a frame whose output would start past the budget is dropped `late`
    /// on the output track; the rest go out in order, back to back. Checked against the rule computed here.
    @Test func lateOutputIsDroppedWithReasonLate() throws {
        var run = SteppedRun()
        run.count = 60
        run.inferenceNs = { _ in 10_000_000 }
        run.outputCostNs = 50_000_000
        run.config.outputBudgetNs = 66_666_666
        let trace = RecordingTraceSink()
        let (stats, _) = try run.run(trace: trace)
        var expectedOutputs: [(frame: Int, startNs: Int64)] = [], expectedLate: [Int] = []
        var freeNs: Int64 = 0
        for frame in 0..<60 {
            let captureNs = Int64(frame) * run.intervalNs, startNs = max(captureNs, freeNs)
            if startNs - captureNs > 66_666_666 {
                expectedLate.append(frame)
            } else {
                expectedOutputs.append((frame, startNs))
                freeNs = startNs + 50_000_000
            }
        }
        #expect(!expectedLate.isEmpty)
        #expect(trace.drops(.late).map(\.frame) == expectedLate)
        #expect(trace.drops(.late).allSatisfy { $0.track == .output })
        #expect(trace.events(.output).map(\.frame) == expectedOutputs.map(\.frame))
        #expect(trace.events(.output).map(\.startNs) == expectedOutputs.map(\.startNs))
        #expect(stats.framesOutput + stats.drops[.late]! == 60)
    }

    /// Output backed up so far that every pooled buffer is waiting: capture reads the next frame into scratch and
    /// drops it `late` on the capture track, never buffering more (8 buffers, output 100 ms per frame at 30 fps).
    @Test func aFullFramePoolDropsAtCapture() throws {
        var run = SteppedRun()
        run.count = 60
        run.inferenceNs = nil
        run.outputCostNs = 100_000_000
        run.config.outputBudgetNs = 60_000_000_000
        let trace = RecordingTraceSink()
        let (stats, sink) = try run.run(trace: trace)
        let atCapture = trace.drops(.late).filter { $0.track == .capture }
        #expect(!atCapture.isEmpty)
        #expect(atCapture.count == stats.drops[.late])
        #expect(stats.framesOutput + atCapture.count == 60)
        #expect(sink.written == trace.events(.output).map(\.frame))
        // Output runs back to back from frame 0: the k-th frame written starts at k × 100 ms.
        #expect(trace.events(.output).map(\.startNs) == (0..<stats.framesOutput).map { Int64($0) * 100_000_000 })
    }

    /// A presentation delay writes every frame exactly that long after its capture.
    @Test func presentationDelayPacesOutputExactly() throws {
        var run = SteppedRun()
        run.count = 60
        run.config.presentationDelayNs = 40_000_000
        let trace = RecordingTraceSink()
        let (stats, _) = try run.run(trace: trace)
        #expect(stats.framesOutput == 60)
        for output in trace.events(.output) {
            #expect(output.startNs == output.captureTsNs + 40_000_000)
        }
    }

    /// asap with two in flight where every odd frame's inference overtakes the even one before it: each frame is
    /// composited the instant its own inference ends, never on a later frame's result.
    @Test func asapWaitsForEachFramesOwnInference() throws {
        var run = SteppedRun()
        run.count = 12
        run.config.pace = .asap
        run.config.maxInFlight = 2
        run.inferenceNs = { $0 % 2 == 0 ? 40_000_000 : 1_000_000 }
        let trace = RecordingTraceSink()
        let (stats, _) = try run.run(trace: trace, observe: { #expect($0.limiter.inFlight <= 2) })
        #expect(stats.inferences == 12 && stats.framesOutput == 12 && stats.maxInFlightSeen == 2)
        let inferEndNs = Dictionary(uniqueKeysWithValues: trace.events(.infer).map { ($0.frame, $0.endNs) })
        let outputs = trace.events(.output)
        for (k, composite) in trace.events(.composite).enumerated() {
            #expect(composite.frame == k && composite.resultFrame == k)
            // The instant its own inference has ended and the frame before it is out (output is serial, 1 ms).
            #expect(composite.startNs == max(inferEndNs[k]!, k == 0 ? 0 : outputs[k - 1].endNs))
        }
        // Evens take 40 ms, odds 1 ms, two at a time: 0 runs 0–40 ms and 1 runs 0–1; 2 takes 1's place (1–41), 3
        // takes 0's (40–41). So 0 goes out at 40, 1 behind it at 41, 2 (done at 41) at 42, 3 at 43.
        #expect(trace.events(.composite).prefix(4).map(\.startNs) == [40_000_000, 41_000_000, 42_000_000, 43_000_000])
        #expect(
            trace.events(.infer).sorted { $0.frame < $1.frame }.prefix(4).map(\.startNs) == [
                0, 0, 1_000_000, 40_000_000
            ])
    }

    /// asap with one in flight (the default): the next frame's inference starts only once the frame before it is
    /// composited, so no later result can reach an earlier frame (batch conversion does not depend on timing).
    @Test func asapStartsTheNextInferenceOnlyAfterTheCompositeBeforeIt() throws {
        var run = SteppedRun()
        run.count = 8
        run.config.pace = .asap
        // Inference (1 ms) faster than writing a frame (5 ms): without the wait, frame k+1's inference would run
        // while frame k waits behind frame k-1's write, and finish before frame k is composited.
        run.inferenceNs = { _ in 1_000_000 }
        run.outputCostNs = 5_000_000
        let trace = RecordingTraceSink()
        let (stats, _) = try run.run(trace: trace)
        #expect(stats.inferences == 8 && stats.framesOutput == 8)
        let composites = trace.events(.composite)
        let inferStarts = Dictionary(uniqueKeysWithValues: trace.events(.infer).map { ($0.frame, $0.startNs) })
        #expect(composites.count == 8)
        for (k, composite) in composites.enumerated() {
            #expect(composite.frame == k && composite.resultFrame == k)
            if k > 0 { #expect(inferStarts[k]! >= composites[k - 1].endNs, "frame \(k)'s inference started early") }
        }
    }

    /// The scheduler's counters are traced at each change, at the instant of the change.
    @Test func inFlightAndQueueDepthCountersFollowEveryChange() throws {
        var run = SteppedRun()
        run.count = 4
        let trace = RecordingTraceSink()
        _ = try run.run(trace: trace)
        let i = run.intervalNs
        let counters = trace.events.filter { $0.kind == .inFlight || $0.kind == .queueDepth }
        #expect(
            counters.map { "\($0.kind == .inFlight ? "inFlight" : "queue")=\($0.count)@\($0.startNs)" } == [
                "inFlight=1@0", "queue=1@\(i)", "queue=1@\(2 * i)", "queue=0@90000000", "queue=1@\(3 * i)",
                "queue=0@180000000", "inFlight=0@270000000"
            ])
    }
}
