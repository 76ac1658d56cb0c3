import ColorcamCore
import Foundation
import Stream
import Testing

@testable import TraceAnalysis

/// The HTML report: timeline collection, the embedded data, escaping, self-containment and writing the file.
/// (The rendered page is checked in headless Chromium by Tests/integration/test_report_html.py.)

private func load(_ builder: TraceBuilder, file: String = "test.json") throws -> (TraceReport, TraceTimeline) {
    var timeline = TraceTimeline()
    let report = try TraceReport(bytes: Array(builder.text().utf8), file: file) { timeline.add($0) }
    timeline.finish()
    return (report, timeline)
}

private func page(
    _ builder: TraceBuilder, file: String = "test.json",
    thresholds: TraceThresholds = TraceThresholds()
) throws -> String {
    let (report, timeline) = try load(builder, file: file)
    let bytes = report.html(verdict: TraceVerdict(report: report, thresholds: thresholds), timeline: timeline)
    return try #require(String(validating: bytes, as: UTF8.self))
}

/// The `#trace-data` object parsed back.
private func embeddedData(_ html: String) throws -> [String: Any] {
    let open = #"<script type="application/json" id="trace-data">"#
    let start = try #require(html.range(of: open))
    let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
    let json = Data(html[start.upperBound..<end.lowerBound].utf8)
    return try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
}

private func integers(_ value: Any?) -> [Int64?] {
    (value as? [Any] ?? []).map { ($0 as? NSNumber)?.int64Value }
}

/// Undoes the delta encoding: absolute µs.
private func absolute(_ deltas: [Int64?], origin: Int64) -> [Int64] {
    var sum = origin
    return deltas.map {
        sum += $0 ?? 0; return sum
    }
}

@Test func timelineSortsEachLaneAndKeepsColumnsAligned() throws {
    var builder = TraceBuilder()
    builder.config()
    // Written out of order, as a multi-threaded writer may.
    builder.output(frame: 2, tsUs: 70_000, latencyUs: 3_000, resultAgeUs: 33_000)
    builder.output(frame: 1, tsUs: 40_000, latencyUs: 2_000, resultAgeUs: nil)
    builder.infer(frame: 1, tsUs: 36_000, durUs: 50_000, requestedUs: 34_000)
    builder.capture(frame: 2, tsUs: 66_666)
    builder.capture(frame: 1, tsUs: 33_333)
    builder.drop(frame: 3, tsUs: 100_100, reason: "late")
    builder.drop(frame: 0, tsUs: 10, reason: "superseded")
    builder.inFlight(tsUs: 86_000, value: 0)
    builder.inFlight(tsUs: 34_000, value: 1)
    builder.raw(#"{"name":"other_tool","ph":"X","pid":9,"tid":1,"ts":1,"dur":999999999}"#)
    let (_, timeline) = try load(builder)

    let capture = try #require(timeline.lane("capture"))
    #expect(capture.startUs == [33_333, 66_666])
    #expect(capture.frame == [1, 2])
    let output = try #require(timeline.lane("output"))
    #expect(output.startUs == [40_000, 70_000])
    #expect(output.frame == [1, 2])
    #expect(output.extras["latency_us"]! == [2_000, 3_000])
    #expect(output.extras["result_age_us"]! == [nil, 33_000])
    #expect(output.extras["result_frame"]! == [-1, -1])
    let infer = try #require(timeline.lane("infer"))
    #expect(infer.durUs == [50_000])
    #expect(infer.extras["lag_us"]! == [2_000])
    #expect(timeline.lane("detect")?.count == 0)
    #expect(timeline.drops.tsUs == [10, 100_100])
    #expect(timeline.drops.reason == ["superseded", "late"])
    #expect(timeline.drops.frame == [0, 3])
    #expect(timeline.counterSeries[0].name == "in_flight")
    #expect(timeline.counterSeries[0].tsUs == [34_000, 86_000])
    #expect(timeline.counterSeries[0].value == [1, 0])
    // The config instant at ts 0 is not drawn and the foreign span is skipped: the range is the drawn events'.
    #expect(timeline.firstUs == 10)
    #expect(timeline.lastUs == 100_100)
}

@Test func pageHasOneLanePerStageAndEmbedsEverySpan() throws {
    let builder = TraceBuilder.pipeline(frames: 45, inferUs: 20_000)
    let html = try page(builder)
    for stage in TraceTimeline.stages {
        let lane = #"class="row lane" data-stage="\#(stage)""#
        #expect(html.components(separatedBy: lane).count == 2, "one lane element for \(stage)")
    }
    let data = try embeddedData(html)
    let origin = try #require((data["origin_us"] as? NSNumber)?.int64Value)
    let lanes = try #require(data["lanes"] as? [[String: Any]])
    #expect(lanes.map { $0["stage"] as? String } == TraceTimeline.stages)
    let output = lanes[4]
    let outputStarts = absolute(integers(output["start"]), origin: origin)
    let expectedStarts: [Int64] = (0..<45).map { (frame: Int) -> Int64 in Int64(frame) * 1_000_000 / 30 + 1_000 }
    #expect(outputStarts == expectedStarts)
    let expectedFrames: [Int64?] = (0..<45).map { (frame: Int) -> Int64? in Int64(frame) }
    #expect(integers(output["frame"]) == expectedFrames)
    #expect(integers(output["dur"]).allSatisfy { $0 == 500 })
    let extra = try #require(output["extra"] as? [String: Any])
    #expect(integers(extra["result_age_us"]).allSatisfy { $0 == 33_333 })
    let infer = lanes[2]
    #expect(integers(infer["frame"]).count == 45)
    let inferExtra = try #require(infer["extra"] as? [String: Any])
    #expect(integers(inferExtra["lag_us"]).allSatisfy { $0 == 0 })
    let counters = try #require(data["counters"] as? [[String: Any]])
    #expect(counters.first?["name"] as? String == "in_flight")
    #expect(integers(counters.first?["value"]).count == 45)
}

@Test func pageIsSelfContained() throws {
    var builder = TraceBuilder.pipeline(frames: 10, inferUs: 20_000)
    builder.drop(frame: 11, tsUs: 400_000, reason: "late")
    let html = try page(builder)
    #expect(!html.contains("http://"))
    #expect(!html.contains("https://"))
    #expect(!html.contains("src="))
    #expect(!html.contains("<link"))
    #expect(!html.contains("@import"))
    #expect(html.contains("<script>"))
    #expect(html.contains("<style>"))
}

@Test func hostileTextIsEscapedInMarkupAndData() throws {
    var builder = TraceBuilder()
    let hostileSource = "</script><img src=x onerror=alert(1)>"
    builder.raw(#"{"name":"config","ph":"i","s":"g","pid":1,"tid":6,"ts":0,"args":{"source":"\#(hostileSource)"}}"#)
    builder.capture(frame: 0, tsUs: 0)
    builder.drop(frame: 1, tsUs: 33_333, reason: #"</script><b>\"x\"&"#)  // JSON text: the quotes escaped
    let html = try page(builder, file: "<evil>&\"quote\".json")
    #expect(!html.contains("<img"))
    #expect(!html.contains("<b>"))
    #expect(!html.contains("<evil>"))
    #expect(html.contains("&lt;evil&gt;&amp;&quot;quote&quot;.json"))
    #expect(html.contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"))
    let data = try embeddedData(html)
    let drops = try #require(data["drops"] as? [String: Any])
    let reasons = try #require(drops["reasons"] as? [String])
    let index = try #require(integers(drops["reason"]).first ?? nil)
    #expect(reasons[Int(index)] == "</script><b>\"x\"&")
    #expect(Array(reasons.prefix(7)) == DropReason.allCases.map(\.rawValue))
}

@Test(arguments: [true, false])
func simulatedBannerAndVerdictClass(simulated: Bool) throws {
    var builder = TraceBuilder.pipeline(frames: 30, inferUs: 20_000)
    builder.events[0] = builder.events[0].replacingOccurrences(
        of: #""simulated":false"#,
        with: #""simulated":\#(simulated)"#)
    let passing = try page(builder)
    #expect(passing.contains(#"id="simulated""#) == simulated)
    #expect(passing.contains("SIMULATED inference") == simulated)
    #expect(passing.contains(#"class="verdict pass""#))
    #expect(passing.contains("verdict: PASS"))
    let failing = try page(TraceBuilder.pipeline(frames: 60, inferUs: 53_333))
    #expect(failing.contains(#"class="verdict fail""#))
    #expect(failing.contains("verdict: FAIL"))
    #expect(failing.contains(#"<tr class="fail"><th>lag_p99</th>"#))
}

@Test func summaryTableCarriesEveryTextReportLine() throws {
    let builder = TraceBuilder.pipeline(frames: 40, inferUs: 20_000)
    let (report, timeline) = try load(builder)
    let verdict = TraceVerdict(report: report, thresholds: TraceThresholds())
    let html = try #require(String(validating: report.html(verdict: verdict, timeline: timeline), as: UTF8.self))
    var expectedRows = 0
    for line in report.text(verdict: verdict).split(separator: "\n") where !line.hasPrefix("verdict:") {
        let (label, value) = TraceReport.splitLabel(String(line))
        var escaped = HTMLBytes()
        escaped.text(value)
        #expect(
            html.contains("<th>\(label)</th><td>\(String(decoding: escaped.bytes, as: UTF8.self))</td>"),
            "row for '\(line)'")
        expectedRows += 1
    }
    #expect(expectedRows >= 10)
}

@Test(arguments: [0, 1, 9, 10, 99, 1_234_567, -1, -42, Int64.max, Int64.min])
func integerWriterMatchesDescription(value: Int64) {
    var out = HTMLBytes()
    out.int(value)
    #expect(String(decoding: out.bytes, as: UTF8.self) == String(value))
}

@Test func writeHTMLReplacesTheFileWholeAndFailsCleanly() throws {
    let unique = "html-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(unique)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let (report, timeline) = try load(TraceBuilder.pipeline(frames: 12, inferUs: 20_000))
    let verdict = TraceVerdict(report: report, thresholds: TraceThresholds())
    let path = directory.appendingPathComponent("r.html").path
    try "old contents".write(toFile: path, atomically: false, encoding: .utf8)
    try report.writeHTML(to: path, verdict: verdict, timeline: timeline)
    let written = try #require(FileManager.default.contents(atPath: path))
    #expect(Array(written) == report.html(verdict: verdict, timeline: timeline))
    #expect(!FileManager.default.fileExists(atPath: path + ".partial"))

    let missing = directory.appendingPathComponent("no-such-dir/r.html").path
    do {
        try report.writeHTML(to: missing, verdict: verdict, timeline: timeline)
        Issue.record("writing into a missing directory succeeded")
    } catch let error as StreamError {
        #expect(error.description.contains("no-such-dir/r.html"))
        #expect(!error.description.contains("\n"))
    }
}
