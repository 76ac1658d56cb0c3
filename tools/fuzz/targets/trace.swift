// libFuzzer target: the trace reader as `colorcam trace-report` uses it — TraceReader.parse (TraceJSONParser,
// truncated-tail handling), the report collector and statistics, the verdict, and the text, JSON and HTML renderings.
//
// Each input is the whole trace file. Thrown errors are the expected outcome for bad bytes (their message is built,
// to cover it); a trap, an ASan report or a leak is a finding.
import ColorcamCore
import Stream

@testable import TraceAnalysis

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrace(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        var timeline = TraceTimeline()
        let report = try TraceReport(bytes: bytes, file: "fuzz.json") { timeline.add($0) }
        timeline.finish()
        let thresholds = TraceThresholds(maxLagMs: 1, maxInFlight: 1, minFps: 29.5, maxLatencyMs: 50)
        let verdict = TraceVerdict(report: report, thresholds: thresholds)
        _ = report.text(verdict: verdict)
        _ = report.json(verdict: verdict, thresholds: thresholds)
        _ = report.html(verdict: verdict, timeline: timeline)
    } catch {
        _ = String(describing: error)
    }
    return 0
}
