import ColorcamCore
import Foundation
import Stream
import Testing

@Suite("Threaded pipeline")
struct PipelineThreadTests {
    /// Realtime at 10× the rate inference can go: bounded state, at most one inference in flight,
    /// every captured frame accounted for (output or dropped with a reason), pools all returned.
    @Test func overloadedRealtimeRunStaysBoundedAndAccountsForEveryFrame() throws {
        let clock = SystemClock()
        let source = SyntheticSource(count: 150, fps: 300)
        let trace = RecordingTraceSink()
        var config = PipelineConfig()
        config.pace = .realtime
        config.outputBudgetNs = 1_000_000_000  // deadline out of the way: this test is about admission
        let runner = SimulatedInference(durationMs: 20, mode: .sleep, clock: clock)
        let pipeline = Pipeline(
            source: source, sink: nil, processor: runner, trace: trace, clock: clock, config: config)
        let stats = try pipeline.run()
        #expect(stats.framesCaptured == 150)
        #expect(stats.maxInFlightSeen == 1)
        #expect(stats.framesOutput + stats.drops[.late]! == 150)
        #expect(stats.drops[.superseded]! > 0)
        // Every frame offered for inference ran or was dropped with a reason; only frames dropped `late` at
        // capture (no free buffer: the output was backed up) are never offered.
        let offered = stats.inferences + stats.drops[.superseded]! + stats.drops[.busy]!
        #expect(offered <= 150 && offered >= 150 - stats.drops[.late]!)
        let infers = trace.events(.infer)
        for (a, b) in zip(infers, infers.dropFirst()) { #expect(a.endNs <= b.startNs, "inference spans overlap") }
        let outputs = trace.events(.output).map(\.frame)
        #expect(outputs == outputs.sorted())
    }

    /// asap: every frame is inferred and output with its own result.
    @Test func asapGivesEveryFrameItsOwnResult() throws {
        let clock = SystemClock()
        let trace = RecordingTraceSink()
        var config = PipelineConfig()
        config.pace = .asap
        let runner = SimulatedInference(durationMs: 1, mode: .sleep, clock: clock)
        let stats = try Pipeline(
            source: SyntheticSource(count: 40, fps: 30), sink: nil, processor: runner, trace: trace,
            clock: clock, config: config
        ).run()
        #expect(stats.framesOutput == 40)
        #expect(stats.inferences == 40)
        for output in trace.events(.output) { #expect(output.resultFrame == output.frame) }
    }

    /// asap with two in flight where every odd frame's inference overtakes the even one before it: each frame
    /// still waits for, and carries, its own result (regression: output waited for `latestResult >= frame`, so
    /// frame N went out with N+1's result, before N's own inference had finished).
    @Test func asapWithSeveralInFlightWaitsForEachFramesOwnInference() throws {
        let clock = SystemClock()
        let trace = RecordingTraceSink()
        var config = PipelineConfig()
        config.pace = .asap
        config.maxInFlight = 2
        let runner = OddOvertakesEvenRunner(clock: clock)
        let stats = try Pipeline(
            source: SyntheticSource(count: 12, fps: 30), sink: nil, processor: runner, trace: trace,
            clock: clock, config: config
        ).run()
        #expect(stats.framesOutput == 12)
        #expect(stats.inferences == 12)
        let inferEndNs = Dictionary(uniqueKeysWithValues: trace.events(.infer).map { ($0.frame, $0.endNs) })
        for composite in trace.events(.composite) {
            #expect(composite.resultFrame == composite.frame)
            let endNs = try #require(inferEndNs[composite.frame], "frame \(composite.frame) never inferred")
            #expect(endNs <= composite.startNs, "frame \(composite.frame) composited before its inference ended")
        }
    }

    @Test func loopsReplayTheSourceWithIncreasingSequence() throws {
        let clock = SystemClock()
        let trace = RecordingTraceSink()
        var config = PipelineConfig()
        config.pace = .asap
        config.loops = 3
        let stats = try Pipeline(
            source: SyntheticSource(count: 5, fps: 30), sink: nil, processor: nil, trace: trace,
            clock: clock, config: config
        ).run()
        #expect(stats.framesCaptured == 15)
        #expect(trace.events(.capture).map(\.frame) == Array(0..<15))
    }
}

@Suite("Trace writer")
struct TraceWriterTests {
    @Test func writesAChromeTraceThatParsesAndHasEveryStage() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("colorcam-trace-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("t.json").path
        let writer = try TraceWriter(
            path: path, processName: "test", config: [("simulated", .bool(true))],
            flushIntervalMs: 5)
        var run = SteppedRun()
        run.count = 30
        run.inferenceNs = { _ in 50_000_000 }
        let (stats, _) = try run.run(trace: writer)
        try writer.close(atNs: 2_000_000_000, summary: [("frames_output", .int(stats.framesOutput))])

        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let events = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        let names = Set(events.compactMap { $0["name"] as? String })
        for name in ["capture", "infer", "composite", "output", "drop", "in_flight", "config", "summary", "frame"] {
            #expect(names.contains(name), "missing \(name)")
        }
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.first!.hasPrefix("[{"))
        #expect(lines.dropFirst().dropLast().allSatisfy { $0.hasPrefix(",{") })
        #expect(lines.last == "]")
        // No two X spans on one track overlap.
        var lastEnd: [Int: Int] = [:]
        for event in events where event["ph"] as? String == "X" {
            let tid = event["tid"] as! Int, ts = event["ts"] as! Int, dur = event["dur"] as! Int
            #expect(ts >= lastEnd[tid, default: 0], "overlap on track \(tid)")
            lastEnd[tid] = ts + dur
        }
        let summary = try #require(events.first { $0["name"] as? String == "summary" }?["args"] as? [String: Any])
        #expect(summary["trace_events_lost"] as? Int == 0)
    }

    @Test func aFullRingCountsLostEventsInsteadOfBlocking() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("colorcam-lost-\(getpid()).json").path
        defer { unlink(path) }
        let writer = try TraceWriter(path: path, processName: "test", config: [], capacity: 4, flushIntervalMs: 10_000)
        for i in 0..<10 { writer.record(.drop(frame: i, reason: .late, atNs: Int64(i), track: .output)) }
        try writer.close(atNs: 10, summary: [])
        let events = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [[String: Any]])
        let summary = try #require(events.first { $0["name"] as? String == "summary" }?["args"] as? [String: Any])
        #expect(summary["trace_events_lost"] as? Int == 6)
        #expect(events.filter { $0["name"] as? String == "drop" }.count == 4)
    }
}

/// Even frames' inference takes 40 ms, odd frames' 1 ms: with two in flight, frame 2k+1 finishes before 2k.
private final class OddOvertakesEvenRunner: ScheduledInference, @unchecked Sendable {
    init(clock: SystemClock) { super.init(clock: clock) { $0 % 2 == 0 ? 40_000_000 : 1_000_000 } }
}
