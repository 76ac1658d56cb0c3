import ColorcamCore
import Foundation
import Stream
import Testing

@testable import TraceAnalysis

/// Builds colorcam-style traces in memory: `[` + first event, then one `,{…}` line per event, `]` last.
struct TraceBuilder {
    var events: [String] = []

    mutating func raw(_ json: String) { events.append(json) }

    mutating func config(maxInFlight: Int = 1, simulated: Bool = false) {
        raw(
            #"{"name":"config","ph":"i","s":"g","pid":1,"tid":6,"ts":0,"args":{"command":"replay","source":"clip.y4m","pace":"realtime","source_fps":30,"max_in_flight":\#(maxInFlight),"queue":1,"model":"m.onnx","simulated":\#(simulated),"simulate_inference_ms":40,"simulate_jitter_ms":0,"simulate_mode":"fixed","output_deadline_us":100000}}"#
        )
    }

    mutating func capture(frame: Int, tsUs: Int64) {
        raw(
            #"{"name":"capture","ph":"X","pid":1,"tid":1,"ts":\#(tsUs),"dur":200,"args":{"frame":\#(frame),"capture_ts_us":\#(tsUs)}}"#
        )
    }

    mutating func infer(frame: Int, tsUs: Int64, durUs: Int64, requestedUs: Int64, tid: Int = 3) {
        raw(
            #"{"name":"infer","ph":"X","pid":1,"tid":\#(tid),"ts":\#(tsUs),"dur":\#(durUs),"args":{"frame":\#(frame),"requested_ts_us":\#(requestedUs),"lag_us":\#(tsUs - requestedUs),"queued_us":0,"simulated":false}}"#
        )
    }

    mutating func output(
        frame: Int, tsUs: Int64, durUs: Int64 = 500, latencyUs: Int64? = 1_500,
        resultAgeUs: Int64? = nil
    ) {
        var args = #""frame":\#(frame),"result_frame":-1"#
        if let latencyUs { args += #","latency_us":\#(latencyUs)"# }
        if let resultAgeUs { args += #","result_age_us":\#(resultAgeUs)"# }
        raw(#"{"name":"output","ph":"X","pid":1,"tid":5,"ts":\#(tsUs),"dur":\#(durUs),"args":{\#(args)}}"#)
    }

    mutating func drop(frame: Int, tsUs: Int64, reason: String) {
        raw(
            #"{"name":"drop","ph":"i","s":"t","pid":1,"tid":5,"ts":\#(tsUs),"args":{"frame":\#(frame),"reason":"\#(reason)"}}"#
        )
    }

    mutating func inFlight(tsUs: Int64, value: Int) {
        raw(#"{"name":"in_flight","ph":"C","pid":1,"tid":6,"ts":\#(tsUs),"args":{"value":\#(value)}}"#)
    }

    /// The file text; `closed: false` leaves out the final `]` like a killed writer.
    func text(closed: Bool = true) -> String {
        guard let first = events.first else { return closed ? "[\n]\n" : "[\n" }
        var text = "[" + first + "\n"
        for event in events.dropFirst() { text += "," + event + "\n" }
        return closed ? text + "]\n" : text
    }

    func report(closed: Bool = true) throws -> TraceReport {
        try TraceReport(bytes: Array(text(closed: closed).utf8), file: "test.json")
    }

    /// 30 fps frames, each captured and output; inference requested at arrival and started when the worker is
    /// free, so `inferUs` above one frame interval makes requests queue and lag grow by the difference per frame.
    static func pipeline(frames: Int, inferUs: Int64, maxInFlight: Int = 1) -> TraceBuilder {
        var builder = TraceBuilder()
        builder.config(maxInFlight: maxInFlight)
        var workerFreeUs: Int64 = 0
        for frame in 0..<frames {
            let ts = Int64(frame) * 1_000_000 / 30
            builder.capture(frame: frame, tsUs: ts)
            let start = max(ts, workerFreeUs)
            workerFreeUs = start + inferUs
            builder.infer(frame: frame, tsUs: start, durUs: inferUs, requestedUs: ts)
            builder.inFlight(tsUs: ts, value: 1)
            builder.output(frame: frame, tsUs: ts + 1_000, resultAgeUs: 33_333)
        }
        return builder
    }
}

@Test(arguments: [(5, 15), (30, 20), (40, 20), (50, 35), (100, 50), (0, 15)] as [(Int, Int64)])
func nearestRankMatchesTheDefinition(percent: Int, expected: Int64) {
    #expect(NearestRank.percentile(percent, ofSorted: [15, 20, 35, 40, 50]) == expected)
}

@Test func nearestRankEdgeSizes() {
    #expect(NearestRank.percentile(50, ofSorted: []) == nil)
    for percent in [0, 1, 50, 99, 100] { #expect(NearestRank.percentile(percent, ofSorted: [7]) == 7) }
    let hundred = (1...100).map { Int64($0) }
    #expect(NearestRank.percentile(50, ofSorted: hundred) == 50)
    #expect(NearestRank.percentile(95, ofSorted: hundred) == 95)
    #expect(NearestRank.percentile(99, ofSorted: hundred) == 99)
    // 20 samples: p95 is rank 19 exactly (no floating-point rounding up to 20).
    #expect(NearestRank.rank(percent: 95, count: 20) == 19)
    #expect(NearestRank.rank(percent: 99, count: 20) == 20)
    let summary = PercentileSummary([9, 1, 5, 3, 7])
    #expect(summary?.count == 5)
    #expect(summary?.p50Us == 5)
    #expect(summary?.p95Us == 9)
    #expect(summary?.p99Us == 9)
    #expect(summary?.maxUs == 9)
}

@Test func outputFpsMeanAndWorstWindow() throws {
    // 10 outputs at 0.0…0.9 s, a gap, 11 outputs at 1.5…2.5 s. Windows from 0.5 s to 0.9 s hold 5 (e.g. [0.5, 1.5):
    // 0.5…0.9; [0.9, 1.9): 0.9, 1.5…1.8); the first of them is reported.
    var times: [Int64] = (0..<10).map { Int64($0) * 100_000 }
    times += (15...25).map { Int64($0) * 100_000 }
    var builder = TraceBuilder()
    for (frame, ts) in times.enumerated().reversed() { builder.output(frame: frame, tsUs: ts) }  // any order
    let report = try builder.report()
    #expect(report.framesOutput == 21)
    #expect(report.output.worstWindowFrames == 5)
    #expect(report.output.worstWindowStartUs == 500_000)
    let mean = try #require(report.output.meanFps)
    #expect(abs(mean - 8.0) < 1e-9)
}

@Test func outputFpsUnderOneSecondHasNoWindow() {
    let rate = TraceReport.outputRate(sortedTimesUs: [0, 100_000, 999_999])
    #expect(rate.worstWindowFrames == nil)
    #expect(TraceReport.outputRate(sortedTimesUs: []).meanFps == nil)
    #expect(TraceReport.outputRate(sortedTimesUs: [5]).meanFps == nil)
    // Exactly 1 s: one window [0, 1 s) holding the first two outputs; the one at 1 s is outside it.
    #expect(TraceReport.outputRate(sortedTimesUs: [0, 500_000, 1_000_000]).worstWindowFrames == 2)
}

@Test func dropsAreCountedPerReasonWithZeros() throws {
    var builder = TraceBuilder()
    builder.capture(frame: 0, tsUs: 0)
    builder.drop(frame: 1, tsUs: 10, reason: "late")
    builder.drop(frame: 2, tsUs: 20, reason: "late")
    builder.drop(frame: 3, tsUs: 30, reason: "superseded")
    builder.drop(frame: 4, tsUs: 40, reason: "superseded")
    builder.drop(frame: 5, tsUs: 50, reason: "superseded")
    builder.drop(frame: 6, tsUs: 60, reason: "driver_gap")
    builder.drop(frame: 7, tsUs: 70, reason: "warp_drive")
    builder.drop(frame: 0, tsUs: 80, reason: "sink_busy")
    let report = try builder.report()
    #expect(
        report.drops == [
            .late: 2, .superseded: 3, .driverGap: 1, .busy: 0, .decodeError: 0, .sinkBusy: 1,
            .sinkError: 0
        ])
    #expect(report.framesDropped == 3, "a sink's skip is not a dropped frame")
    #expect(report.warnings.contains { $0.contains("warp_drive") })
    let text = report.text(verdict: TraceVerdict(report: report, thresholds: TraceThresholds()))
    #expect(text.contains("dropped 3 (late 2, driver_gap 1, decode_error 0)"))
    #expect(text.contains("inference skipped: superseded 3, busy 0"))
}

@Test func latencyFromArgsOrFromCaptureTime() throws {
    var builder = TraceBuilder()
    builder.capture(frame: 3, tsUs: 10_000)
    builder.output(frame: 0, tsUs: 0, latencyUs: 1_000, resultAgeUs: 40_000)
    builder.output(frame: 1, tsUs: 1, latencyUs: 3_000, resultAgeUs: 10_000)
    builder.output(frame: 2, tsUs: 2, latencyUs: 2_000, resultAgeUs: 20_000)
    // No latency_us: end of output span (12_000 + 500) minus capture_ts_us of frame 3 (10_000).
    builder.output(frame: 3, tsUs: 12_000, durUs: 500, latencyUs: nil, resultAgeUs: nil)
    let report = try builder.report()
    #expect(report.latency == PercentileSummary([1_000, 2_000, 2_500, 3_000]))
    #expect(report.latency?.p50Us == 2_000)
    #expect(report.latency?.maxUs == 3_000)
    #expect(report.resultAge?.p50Us == 20_000)
    #expect(report.resultAge?.maxUs == 40_000)
    #expect(report.resultAge?.count == 3)
}

@Test func inferenceDurationLagAndRate() throws {
    var builder = TraceBuilder()
    builder.infer(frame: 0, tsUs: 0, durUs: 10_000, requestedUs: 0)
    builder.infer(frame: 1, tsUs: 500_000, durUs: 30_000, requestedUs: 499_000)
    builder.infer(frame: 2, tsUs: 980_000, durUs: 20_000, requestedUs: 977_000)
    let report = try builder.report()
    #expect(report.inferenceCount == 3)
    #expect(report.runDurationUs == 1_000_000)
    #expect(report.inferencesPerSecond == 3.0)
    #expect(report.inferDuration == PercentileSummary([10_000, 20_000, 30_000]))
    #expect(report.lag == PercentileSummary([0, 1_000, 3_000]))
}

@Test func lagTrendSlopeAndQuarters() throws {
    // lag = 1 ms per second of run: slope exactly 1000 µs/s.
    let growing = (0..<8).map { (tsUs: Int64($0) * 1_000_000, lagUs: Int64($0) * 1_000) }
    let trend = try #require(TraceReport.lagTrend(sortedSamples: growing))
    #expect(abs(trend.slopeUsPerS - 1_000) < 1e-6)
    #expect(trend.firstQuarterMeanUs == 500)
    #expect(trend.lastQuarterMeanUs == 6_500)
    #expect(trend.grows)
    // Same slope but fewer than 8 samples: not judged.
    #expect(TraceReport.lagTrend(sortedSamples: Array(growing.prefix(7)))?.grows == false)
    // A steep slope from a single late outlier over a short run, but quarter means rise < 1 ms: not growing.
    var spike = (0..<40).map { (tsUs: Int64($0) * 33_333, lagUs: Int64(50)) }
    spike[39].lagUs = 3_000
    let spikeTrend = try #require(TraceReport.lagTrend(sortedSamples: spike))
    #expect(spikeTrend.slopeUsPerS > LagTrend.slopeThresholdUsPerS)
    #expect(!spikeTrend.grows)
    #expect(TraceReport.lagTrend(sortedSamples: []) == nil)
}

typealias LagTrend = TraceReport.LagTrend

@Test func overlapCountsHalfOpenIntervals() {
    #expect(TraceReport.maxOverlap([]) == 0)
    #expect(TraceReport.maxOverlap([(0, 10), (10, 20), (20, 30)]) == 1)
    #expect(TraceReport.maxOverlap([(0, 10), (9, 20)]) == 2)
    #expect(TraceReport.maxOverlap([(0, 100), (10, 20), (15, 30), (40, 50)]) == 3)
}

@Test func configAndSimulatedAreReported() throws {
    var builder = TraceBuilder.pipeline(frames: 3, inferUs: 10_000)
    builder.events[0] = builder.events[0].replacingOccurrences(of: #""simulated":false"#, with: #""simulated":true"#)
    let report = try builder.report()
    #expect(report.simulated)
    #expect(report.config?["source"] == .string("clip.y4m"))
    #expect(report.configMaxInFlight == 1)
    let text = report.text(verdict: TraceVerdict(report: report, thresholds: TraceThresholds()))
    #expect(text.contains("SIMULATED inference"))
    #expect(text.contains("source clip.y4m"))
    #expect(try TraceBuilder.pipeline(frames: 3, inferUs: 10_000).report().simulated == false)
}

@Test func foreignEventsAreCountedAsIgnored() throws {
    var builder = TraceBuilder()
    builder.raw(#"{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"capture"}}"#)
    builder.capture(frame: 0, tsUs: 0)
    builder.raw(#"{"name":"frame","ph":"s","pid":1,"tid":1,"ts":200,"id":0}"#)
    builder.raw(#"{"name":"frame","ph":"f","bp":"e","pid":1,"tid":5,"ts":900,"id":0}"#)
    builder.raw(#"{"name":"GC","ph":"X","pid":9,"tid":1,"ts":5,"dur":3}"#)
    builder.raw(#"{"name":"output","ph":"B","pid":1,"tid":5,"ts":6}"#)  // wrong phase: not colorcam's
    builder.output(frame: 0, tsUs: 900)
    let report = try builder.report()
    #expect(report.colorcamEventCount == 2)
    #expect(report.ignoredEventCount == 2)
    #expect(report.framesOutput == 1)
    #expect(report.load.eventCount == 7)
}
