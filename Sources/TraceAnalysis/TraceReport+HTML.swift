import ColorcamCore
import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// The self-contained HTML report (`trace-report --html`): a zoomable timeline with one lane per stage, drops and
/// counter graphs, above the summary table and the verdict.
///
/// The page has no external references: its CSS and JS are `TraceReportPage.style` / `.script`, and the trace's
/// spans are embedded as one JSON object of integer columns (times delta-encoded), so a 30-minute trace stays a few
/// MB. See `TraceReportPage` for what the page draws.
extension TraceReport {
    /// Loads the trace at `path` once, building the report and the timeline in the same pass.
    /// - Throws: as `init(contentsOf:)`.
    public static func loadWithTimeline(contentsOf path: String) throws -> (TraceReport, TraceTimeline) {
        let bytes = try TraceReader.readFile(path)
        var timeline = TraceTimeline()
        let report = try TraceReport(bytes: bytes, file: path) { timeline.add($0) }
        timeline.finish()
        return (report, timeline)
    }

    /// The whole page as UTF-8 bytes.
    /// - Parameters:
    ///   - verdict: shown at the top, PASS/FAIL.
    ///   - timeline: the trace's spans (from `loadWithTimeline`).
    public func html(verdict: TraceVerdict, timeline: TraceTimeline) -> [UInt8] {
        var out = HTMLBytes()
        out.reserve(64 * 1024 + timeline.lanes.reduce(0) { $0 + $1.count * 24 })
        out.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>colorcam trace report — ")
        out.text(load.file)
        out.raw("</title>\n<style>\n")
        out.raw(TraceReportPage.style)
        out.raw("</style></head>\n<body>\n<header>\n<h1>colorcam trace report</h1>\n<div class=\"file\">")
        out.text(load.file)
        out.raw("</div>\n")
        if simulated {
            out.raw(
                "<div id=\"simulated\" class=\"simulated\">SIMULATED inference: timings are the simulator's, "
                    + "not a model's</div>\n")
        }
        out.raw("<div id=\"verdict\" class=\"verdict \(verdict.passed ? "pass" : "fail")\">")
        out.text(verdict.line)
        out.raw("</div>\n</header>\n")
        out.raw(TraceReportPage.timelineMarkup(stages: TraceTimeline.stages))
        summaryTable(verdict: verdict, into: &out)
        out.raw("<script type=\"application/json\" id=\"trace-data\">")
        TraceReport.writeData(timeline, into: &out)
        out.raw("</script>\n<script>\n")
        out.raw(TraceReportPage.script)
        out.raw("</script>\n</body></html>\n")
        return out.bytes
    }

    /// The text report's facts as rows (`label: value` lines split at the first `": "`), then the checks.
    private func summaryTable(verdict: TraceVerdict, into out: inout HTMLBytes) {
        out.raw("<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"summary\">\n")
        for line in text(verdict: verdict).split(separator: "\n") where !line.hasPrefix("verdict:") {
            let highlight = line.hasPrefix("***") || line.hasPrefix("warning:")
            let (label, value) = line.hasPrefix("***") ? ("note", String(line)) : TraceReport.splitLabel(String(line))
            out.raw(highlight ? "<tr class=\"note\">" : "<tr>")
            out.raw("<th>")
            out.text(label)
            out.raw("</th><td>")
            out.text(value)
            out.raw("</td></tr>\n")
        }
        out.raw("</table>\n<h2>Checks</h2>\n<table class=\"checks\">\n")
        for check in verdict.checks {
            out.raw("<tr class=\"\(check.passed ? "pass" : "fail")\"><th>")
            out.text(check.name)
            out.raw("</th><td>\(check.passed ? "PASS" : "FAIL")</td><td>")
            out.text(check.detail)
            out.raw("</td></tr>\n")
        }
        out.raw("</table>\n</section>\n")
    }

    /// `"run: 10.2 s"` → (`run`, `10.2 s`); a line without `": "` is all label.
    static func splitLabel(_ line: String) -> (String, String) {
        guard let range = line.range(of: ": ") else { return (line, "") }
        return (String(line[..<range.lowerBound]), String(line[range.upperBound...]))
    }

    /// The embedded data object (see `TraceReportPage.script` for the reader):
    /// `{"origin_us", "end_us", "lanes": [{"stage", "start", "dur", "frame", "extra": {name: [...]}}],
    /// "drops": {"ts", "frame", "reason", "reasons"}, "counters": [{"name", "ts", "value"}]}`.
    /// `start` / `ts` are deltas: the first from `origin_us`, each next from the previous; `end_us` is relative to
    /// `origin_us`; absent values are `null`; `reason` indexes `reasons`.
    static func writeData(_ timeline: TraceTimeline, into out: inout HTMLBytes) {
        let origin = timeline.firstUs
        out.raw("{\"origin_us\":")
        out.int(origin)
        out.raw(",\"end_us\":")
        out.int(timeline.lastUs - origin)
        out.raw(",\"lanes\":[")
        for (index, lane) in timeline.lanes.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{\"stage\":")
            out.jsonString(lane.stage)
            out.raw(",\"start\":")
            out.deltaArray(lane.startUs, origin: origin)
            out.raw(",\"dur\":")
            out.intArray(lane.durUs)
            out.raw(",\"frame\":")
            out.optionalIntArray(lane.frame)
            out.raw(",\"extra\":{")
            for (position, name) in (TraceTimeline.extraArgs[lane.stage] ?? []).enumerated() {
                if position > 0 { out.raw(",") }
                out.jsonString(name)
                out.raw(":")
                out.optionalIntArray(lane.extras[name] ?? [])
            }
            out.raw("}}")
        }
        var reasons = DropReason.allCases.map(\.rawValue)
        for reason in timeline.drops.reason where !reasons.contains(reason) { reasons.append(reason) }
        let reasonIndex = Dictionary(uniqueKeysWithValues: reasons.enumerated().map { ($1, Int64($0)) })
        out.raw("],\"drops\":{\"ts\":")
        out.deltaArray(timeline.drops.tsUs, origin: origin)
        out.raw(",\"frame\":")
        out.optionalIntArray(timeline.drops.frame)
        out.raw(",\"reason\":")
        out.intArray(timeline.drops.reason.map { reasonIndex[$0]! })
        out.raw(",\"reasons\":[")
        for (index, reason) in reasons.enumerated() {
            if index > 0 { out.raw(",") }
            out.jsonString(reason)
        }
        out.raw("]},\"counters\":[")
        for (index, counter) in timeline.counterSeries.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{\"name\":")
            out.jsonString(counter.name)
            out.raw(",\"ts\":")
            out.deltaArray(counter.tsUs, origin: origin)
            out.raw(",\"value\":")
            out.intArray(counter.value)
            out.raw("}")
        }
        out.raw("]}")
    }
}

/// A growing UTF-8 buffer with HTML-text, JSON-string and integer writers (the page can be tens of MB; building it
/// as bytes avoids String concatenation costs). Not shared: one builder per page.
struct HTMLBytes {
    var bytes: [UInt8] = []

    mutating func reserve(_ count: Int) { bytes.reserveCapacity(count) }

    /// Appends markup as it is (the caller vouches it is well-formed).
    mutating func raw(_ markup: String) { bytes.append(contentsOf: markup.utf8) }

    /// Appends `value` as HTML text: `&`, `<`, `>`, `"`, `'` become entities.
    mutating func text(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "&"): raw("&amp;")
            case UInt8(ascii: "<"): raw("&lt;")
            case UInt8(ascii: ">"): raw("&gt;")
            case UInt8(ascii: "\""): raw("&quot;")
            case UInt8(ascii: "'"): raw("&#39;")
            default: bytes.append(byte)
            }
        }
    }

    /// Appends `value` as a JSON string safe inside `<script>`: `<`, `>` and `&` are `\u` escapes, so the text can
    /// never close the script element.
    mutating func jsonString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                raw("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a decimal integer.
    mutating func int(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    mutating func intArray(_ values: [Int64]) {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            int(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// nil values are written as `null`.
    mutating func optionalIntArray(_ values: [Int64?]) {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            if let value { int(value) } else { raw("null") }
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `values` (ascending) as deltas: the first from `origin`, then each from the previous.
    mutating func deltaArray(_ values: [Int64], origin: Int64) {
        bytes.append(UInt8(ascii: "["))
        var previous = origin
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            int(value - previous)
            previous = value
        }
        bytes.append(UInt8(ascii: "]"))
    }
}

extension TraceReport {
    /// Writes the page (`html(verdict:timeline:)`) to `path`, or to stdout for `-`. A file is written as
    /// `path.partial` and renamed into place, so a failed write never leaves a truncated report at `path`.
    /// - Throws: `StreamError` `.ioError` (or `.missingInput` for a missing directory) naming the file.
    public func writeHTML(to path: String, verdict: TraceVerdict, timeline: TraceTimeline) throws {
        let page = html(verdict: verdict, timeline: timeline)
        let target = path == "-" ? "-" : path + ".partial"
        let file = try FileDescriptorIO.createForWriting(target)
        do {
            try page.withUnsafeBytes { try file.writeAll($0, UnsafeRawBufferPointer(start: nil, count: 0)) }
            try file.close()
        } catch {
            try? file.close()
            if target != "-" { unlink(target) }
            throw error
        }
        guard target != "-" else { return }
        if rename(target, path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(target)
            throw StreamError(.ioError, file: path, "cannot move the finished report into place: \(reason)")
        }
    }
}
