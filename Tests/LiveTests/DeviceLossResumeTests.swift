import ColorcamCore
import Live
import Stream
import Testing

/// A device lost mid-stream and back: the frames missed meanwhile are `driver_gap` drops counted when the resumed
/// stream's first frame arrives, and the numbering stays one increasing sequence. Everything on a `ManualClock`
/// moved by the scripted camera: no sleeps, no timing.
@Suite("Device loss and resume")
struct DeviceLossResumeTests {
    static let msNs: Int64 = 1_000_000
    static let intervalNs = ScriptedCamera.intervalNs

    static func liveOptions() -> LiveOptions {
        var options = LiveOptions()
        options.initialBackoffMs = 0  // retries at once: the script moves the clock, not the wall
        options.maxBackoffMs = 0
        options.pipeline.outputBudgetNs = 1_000_000_000_000  // output admission is not what these tests are about
        return options
    }

    /// Checks that captures and `driver_gap` drops number every frame from 0 to `count - 1` exactly once, captures
    /// in increasing order, and that each drop lies after the capture before it and no later than the one after.
    static func expectOneNumbering(_ trace: RecordingTrace, count: Int) {
        let captures = trace.captures
        let gaps = trace.driverGaps
        let captureFrames = captures.map(\.frame)
        #expect(
            zip(captureFrames, captureFrames.dropFirst()).allSatisfy { $0 < $1 },
            "captures not increasing: \(captureFrames)")
        #expect((captureFrames + gaps.map(\.frame)).sorted() == Array(0..<count), "numbers not each used once")
        let captureNsByFrame = Dictionary(uniqueKeysWithValues: captures.map { ($0.frame, $0.captureTsNs) })
        for drop in gaps {
            let before = captureNsByFrame.filter { $0.key < drop.frame }.max { $0.key < $1.key }?.value ?? .min
            let after = captureNsByFrame.filter { $0.key > drop.frame }.min { $0.key < $1.key }?.value ?? .max
            #expect(before < drop.startNs && drop.startNs <= after, "drop of frame \(drop.frame) out of place in time")
        }
    }

    /// The flaky vivid case: the device reopens at once (half an interval after the loss) but its first frame comes
    /// 25 intervals after the last one before the loss; then a driver gap inside the run, a second loss with two
    /// failed opens, and a first frame 30.3 intervals after the last capture.
    @Test func missedFramesAreCountedAtTheFirstFrameOfTheResumedStream() throws {
        let clock = ManualClock(startNs: 1_000 * Self.msNs)
        let i = Self.intervalNs
        let sessionA = ScriptedCamera.steady(count: 10, startNs: 1_000 * Self.msNs)  // last capture at 1090 ms
        let bStart = 1_090 * Self.msNs + 25 * i
        let sessionB = [0, 1, 2, 5, 6].map {
            ScriptedCamera.Frame(driverSequence: $0, captureNs: bStart + Int64($0) * i)
        }
        let cStart = sessionB.last!.captureNs + 30 * i + 3 * Self.msNs
        let camera = ScriptedCamera(
            clock: clock,
            sessions: [
                .init(frames: sessionA, endsWithLoss: true),
                .init(frames: sessionB, endsWithLoss: true),
                .init(
                    failedOpensBefore: 2, failedOpenNs: 100 * Self.msNs,
                    frames: ScriptedCamera.steady(count: 6, startNs: cStart), endsWithLoss: false)
            ])
        let trace = RecordingTrace()
        let daemon = LiveDaemon(
            options: Self.liveOptions(), openSource: camera.open, processor: nil,
            sink: nil, trace: trace, server: nil, clock: clock)
        let totals = try daemon.run()

        #expect(camera.successfulOpens == 3)
        // A: 0…9; the loss: 24 slots (10…33); B: 34 35 36, driver gap 37 38, 39 40; the second loss: 30 slots to the
        // nearest, so 29 missed (41…69); C: 70…75.
        #expect(trace.captures.map(\.frame) == Array(0...9) + [34, 35, 36, 39, 40] + Array(70...75))
        #expect(trace.driverGaps.map(\.frame).sorted() == Array(10...33) + [37, 38] + Array(41...69))
        Self.expectOneNumbering(trace, count: 76)
        #expect(totals.framesCaptured == 21)
        #expect(totals.drops[.driverGap] == 55)
        #expect(totals.drops[.driverGap] == trace.driverGaps.count)
        #expect(totals.framesCaptured == trace.captures.count)
        #expect(totals.nextSequence == 76)
    }

    /// Stopped while the device is still away: the daemon traces the gap up to the moment it stops.
    @Test func aGapStillOpenAtStopIsTracedUpToTheStop() throws {
        let clock = ManualClock(startNs: 1_000 * Self.msNs)
        let camera = ScriptedCamera(
            clock: clock,
            sessions: [
                .init(frames: ScriptedCamera.steady(count: 10, startNs: 1_000 * Self.msNs), endsWithLoss: true),
                .init(failedOpensBefore: 1_000, failedOpenNs: 200 * Self.msNs, frames: [], endsWithLoss: false)
            ])
        let trace = RecordingTrace()
        let daemon = LiveDaemon(
            options: Self.liveOptions(), openSource: camera.open, processor: nil,
            sink: nil, trace: trace, server: nil, clock: clock)
        // weak: the daemon holds the camera
        camera.onFailedOpen = { [weak daemon] in if $0 == 3 { daemon?.requestStop() } }
        let totals = try daemon.run()

        // Last capture 1090 ms, stopped at 1095 + 3 × 200 = 1695 ms: 60.5 intervals, 61 to the nearest (the
        // pipeline's rule, `DriverGap`), less one: the 60 frames due at 1100 … 1690 ms.
        #expect(clock.nowNs() == 1_695 * Self.msNs)
        #expect(trace.driverGaps.map(\.frame) == Array(10...69))
        Self.expectOneNumbering(trace, count: 70)
        #expect(totals.framesCaptured == 10)
        #expect(totals.drops[.driverGap] == 60)
        #expect(totals.nextSequence == 70)
    }

    /// The pipeline alone, resuming after a capture at 1000 ms: the first frame's distance from it, to the nearest
    /// whole interval, less one, is the number of frames missed (10 ms intervals).
    @Test(
        arguments: [
            (5, 0), (10, 0), (14, 0), (16, 1), (20, 1), (250, 24), (254, 24), (256, 25)
        ] as [(Int64, Int)])
    func resumedRunNumbersItsFirstFrameAfterTheMissedSlots(offsetMs: Int64, missed: Int) throws {
        let clock = ManualClock(startNs: 1_000 * Self.msNs)
        let frames = ScriptedCamera.steady(count: 3, startNs: (1_000 + offsetMs) * Self.msNs, from: 7)
        var config = Self.liveOptions().pipeline
        config.firstSequence = 100
        config.resumeAfterCaptureNs = 1_000 * Self.msNs
        let trace = RecordingTrace()
        let source = ScriptedLiveSource(session: .init(frames: frames, endsWithLoss: true), clock: clock)
        let pipeline = Pipeline(source: source, sink: nil, processor: nil, trace: trace, clock: clock, config: config)
        do {
            _ = try pipeline.run()
            Issue.record("the scripted device loss did not end the run")
        } catch let failure as PipelineFailure {
            #expect(failure.kind == .unavailable)
            #expect(trace.driverGaps.map(\.frame) == Array(100..<(100 + missed)))
            #expect(
                trace.driverGaps.map(\.startNs)
                    == (0..<missed).map { 1_000 * Self.msNs + Int64($0 + 1) * Self.intervalNs })
            #expect(trace.captures.map(\.frame) == [100, 101, 102].map { $0 + missed })
            #expect(failure.stats.drops[.driverGap, default: 0] == missed)
            #expect(failure.framesCaptured == 3)
            #expect(failure.nextSequence == 103 + missed)
            #expect(failure.lastCaptureTsNs == frames.last!.captureNs)
        }
    }

    /// Driver gaps inside a run advance the numbering: the next sequence is one past the last number used, not
    /// `firstSequence + framesCaptured` (which would hand the gap's numbers out again after a restart).
    @Test func nextSequenceCountsTheDriverGapsOfTheRun() throws {
        let clock = ManualClock(startNs: 0)
        let frames = [3, 4, 8, 9, 12].map {
            ScriptedCamera.Frame(driverSequence: $0, captureNs: Int64($0) * Self.intervalNs)
        }
        var config = Self.liveOptions().pipeline
        config.firstSequence = 50
        let trace = RecordingTrace()
        let source = ScriptedLiveSource(session: .init(frames: frames, endsWithLoss: false), clock: clock)
        let stats = try Pipeline(source: source, sink: nil, processor: nil, trace: trace, clock: clock, config: config)
            .run()
        #expect(trace.captures.map(\.frame) == [50, 51, 55, 56, 59])
        #expect(trace.driverGaps.map(\.frame) == [52, 53, 54, 57, 58])
        #expect(stats.drops[.driverGap] == 5)
        #expect(stats.framesCaptured == 5)
        #expect(stats.nextSequence == 60)
    }
}
