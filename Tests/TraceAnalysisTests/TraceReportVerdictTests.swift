import ColorcamCore
import Foundation
import Stream
import Testing

@testable import TraceAnalysis

@Test func queueingPredictionsFailWithGrowingLag() throws {
    // Inference takes 53.3 ms at 30 fps: each starts when the previous ends, lag grows by 20 ms per frame.
    let report = try TraceBuilder.pipeline(frames: 30, inferUs: 53_333).report()
    let lags = try #require(report.lag)
    #expect(lags.p50Us > 200_000)
    let trend = try #require(report.lagTrend)
    #expect(trend.grows)
    // Lag rises 20 ms per inference and inferences start every 53.3 ms: slope 20 / 53.333 s ≈ 375 ms/s.
    #expect(abs(trend.slopeUsPerS - 375_000) < 3_750)
    let verdict = TraceVerdict(report: report, thresholds: TraceThresholds())
    #expect(!verdict.passed)
    #expect(verdict.exitCode == 1)
    #expect(verdict.line.hasPrefix("verdict: FAIL — "))
    #expect(verdict.line.contains("lag grows +"))
    #expect(verdict.checks.first { $0.name == "lag_growth" }?.passed == false)
    // Even with a huge lag allowance the growth alone fails it.
    #expect(TraceVerdict(report: report, thresholds: TraceThresholds(maxLagMs: 1e9, maxInFlight: 100)).exitCode == 1)
}

@Test func healthyPipelinePasses() throws {
    let report = try TraceBuilder.pipeline(frames: 90, inferUs: 20_000).report()
    #expect(report.framesCaptured == 90)
    #expect(report.framesOutput == 90)
    #expect(report.lag?.maxUs == 0)
    #expect(report.lagTrend?.grows == false)
    #expect(report.maxInFlight == 1)
    #expect(report.output.worstWindowFrames == 30)
    let verdict = TraceVerdict(report: report, thresholds: TraceThresholds(minFps: 30))
    #expect(verdict.passed)
    #expect(verdict.exitCode == 0)
    #expect(verdict.line.hasPrefix("verdict: PASS — lag p99 0 ms ≤ 5 ms"))
    #expect(TraceVerdict(report: report, thresholds: TraceThresholds(minFps: 31)).exitCode == 1)
}

@Test func lagP99ThresholdIsChecked() throws {
    var builder = TraceBuilder()
    for i in 0..<100 {
        let ts = Int64(i) * 33_333
        builder.infer(frame: i, tsUs: ts + (i == 50 ? 6_000 : 100), durUs: 10_000, requestedUs: ts)
    }
    let report = try builder.report()
    #expect(report.lag?.p99Us == 100)  // one outlier in 100 is above p99 (rank 99)
    #expect(report.lag?.maxUs == 6_000)
    #expect(TraceVerdict(report: report, thresholds: TraceThresholds(maxLagMs: 0.1)).passed)
    let failing = TraceVerdict(report: report, thresholds: TraceThresholds(maxLagMs: 0.05))
    #expect(failing.line == "verdict: FAIL — lag p99 0.1 ms > 0.05 ms")
}

@Test func overlappingSpansBeatALyingCounter() throws {
    var builder = TraceBuilder()
    builder.config(maxInFlight: 1)
    builder.inFlight(tsUs: 0, value: 1)
    builder.infer(frame: 0, tsUs: 0, durUs: 50_000, requestedUs: 0, tid: 3)
    builder.infer(frame: 1, tsUs: 30_000, durUs: 50_000, requestedUs: 30_000, tid: 7)
    builder.inFlight(tsUs: 30_000, value: 1)
    let report = try builder.report()
    #expect(report.inFlightCounterMax == 1)
    #expect(report.inFlightSpansMax == 2)
    #expect(report.maxInFlight == 2)
    #expect(report.warnings.contains { $0.contains("in_flight counter peaks at 1") })
    let verdict = TraceVerdict(report: report, thresholds: TraceThresholds())
    #expect(verdict.exitCode == 1)
    #expect(verdict.line.contains("max in flight 2 > 1"))
    #expect(TraceVerdict(report: report, thresholds: TraceThresholds(maxInFlight: 2)).passed)
}

@Test func inFlightLimitDefaultsToTheConfig() throws {
    var builder = TraceBuilder()
    builder.config(maxInFlight: 2)
    builder.infer(frame: 0, tsUs: 0, durUs: 50_000, requestedUs: 0)
    builder.infer(frame: 1, tsUs: 30_000, durUs: 50_000, requestedUs: 30_000, tid: 7)
    let report = try builder.report()
    let verdict = TraceVerdict(report: report, thresholds: TraceThresholds())
    #expect(verdict.maxInFlightLimit == 2)
    #expect(verdict.passed)
    // Without a config the limit is 1.
    var bare = TraceBuilder()
    bare.infer(frame: 0, tsUs: 0, durUs: 50_000, requestedUs: 0)
    #expect(TraceVerdict(report: try bare.report(), thresholds: TraceThresholds()).maxInFlightLimit == 1)
}

@Test func minFpsFailsWhenItCannotBeChecked() throws {
    let report = try TraceBuilder.pipeline(frames: 10, inferUs: 10_000).report()  // 0.3 s of output
    #expect(report.output.worstWindowFrames == nil)
    let verdict = TraceVerdict(report: report, thresholds: TraceThresholds(minFps: 1))
    #expect(!verdict.passed)
    #expect(verdict.line.contains("worst 1-s window n/a"))
}

@Test func jsonOutputParsesAndHasTheKeys() throws {
    let report = try TraceBuilder.pipeline(frames: 30, inferUs: 53_333).report(closed: false)
    let thresholds = TraceThresholds(minFps: 25)
    let verdict = TraceVerdict(report: report, thresholds: thresholds)
    let text = report.json(verdict: verdict, thresholds: thresholds)
    #expect(text.filter { $0 == "\n" }.count == 1)  // one object on one line
    let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    for key in [
        "file", "bytes", "form", "events", "colorcam_events", "ignored_events", "truncation", "config",
        "simulated", "run_us", "frames", "drops", "output_fps", "inference", "lag_trend", "latency_us",
        "result_age_us", "in_flight", "summary", "warnings", "verdict"
    ] {
        #expect(object[key] != nil, "missing key \(key)")
    }
    let drops = try #require(object["drops"] as? [String: Int])
    #expect(Set(drops.keys) == ["superseded", "busy", "late", "driver_gap", "decode_error", "sink_busy", "sink_error"])
    let verdictObject = try #require(object["verdict"] as? [String: Any])
    #expect(verdictObject["pass"] as? Bool == false)
    #expect(verdictObject["exit_code"] as? Int == 1)
    #expect((verdictObject["line"] as? String)?.contains("lag grows") == true)
    let truncation = try #require(object["truncation"] as? [String: Any])
    #expect(truncation["closing_bracket_missing"] as? Bool == true)
    let inference = try #require(object["inference"] as? [String: Any])
    let lag = try #require(inference["lag_us"] as? [String: Int])
    #expect(Set(lag.keys) == ["count", "p50", "p95", "p99", "max"])
    #expect((object["frames"] as? [String: Int])?["captured"] == 30)
    // Same input, same bytes.
    #expect(report.json(verdict: verdict, thresholds: thresholds) == text)
}

@Test(arguments: [(0.0, "0"), (0.0214, "0.021"), (14.23, "14.2"), (123.6, "124"), (-3.1, "-3.1"), (5, "5")])
func numbersInMessagesAreShort(value: Double, expected: String) {
    #expect(formatMs(value) == expected)
}
