import ColorcamCore
import Stream

/// The human-readable summary: one fact per line, times in ms, the verdict last.
extension TraceReport {
    /// Multi-line summary ending with `verdict.line` and a newline.
    public func text(verdict: TraceVerdict) -> String {
        var lines: [String] = []
        let size =
            load.byteCount >= 1_048_576
            ? formatFixed(Double(load.byteCount) / 1_048_576, decimals: 1) + " MB"
            : formatFixed(Double(load.byteCount) / 1024, decimals: 1) + " KB"
        var head = "trace: \(load.file) (\(load.eventCount) events, \(size)"
        if ignoredEventCount > 0 { head += "; \(ignoredEventCount) not colorcam's, ignored" }
        lines.append(head + ")")
        if let note = load.truncationNote { lines.append(note) }
        if simulated {
            lines.append("*** SIMULATED inference: timings are the simulator's, not a model's ***")
        }
        lines.append(configLine)
        lines.append("run: \(formatFixed(Double(runDurationUs) / 1e6, decimals: 2)) s")
        let frameDrops = DropReason.allCases.filter(\.dropsFrame).map { "\($0.rawValue) \(drops[$0] ?? 0)" }
        lines.append(
            "frames: captured \(framesCaptured), output \(framesOutput), dropped \(framesDropped) "
                + "(\(frameDrops.joined(separator: ", ")))")
        let skipped = DropReason.allCases.filter(\.dropsInference).map { "\($0.rawValue) \(drops[$0] ?? 0)" }
        lines.append("inference skipped: \(skipped.joined(separator: ", "))")
        let sinkSkips = [DropReason.sinkBusy, .sinkError]
        if sinkSkips.contains(where: { (drops[$0] ?? 0) > 0 }) {
            let counts = sinkSkips.map { "\($0.rawValue) \(drops[$0] ?? 0)" }
            lines.append("output sink skipped (frame still output elsewhere): \(counts.joined(separator: ", "))")
        }
        lines.append("output fps: " + outputLine)
        var inference = "inference: \(inferenceCount) runs"
        if let inferencesPerSecond { inference += ", \(formatFixed(inferencesPerSecond, decimals: 2))/s" }
        inference += "; duration " + TraceReport.describe(inferDuration)
        lines.append(inference)
        if let remote {
            var line = "remote inference: \(remote.requests) requests, \(remote.failedCount) without a server result"
            if !remote.failed.isEmpty {
                line +=
                    " ("
                    + remote.failed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                    .joined(separator: ", ") + ")"
            }
            if remote.fallbackRuns > 0 { line += ", \(remote.fallbackRuns) colorized locally instead" }
            lines.append(line)
            lines.append(
                "remote send " + TraceReport.describe(remote.sendUs) + "; wait (server + network) "
                    + TraceReport.describe(remote.waitUs) + "; receive " + TraceReport.describe(remote.receiveUs))
        }
        lines.append("request→start lag: " + TraceReport.describe(lag))
        lines.append("lag trend: " + trendLine)
        lines.append("capture→output latency: " + TraceReport.describe(latency))
        if let resultAge {
            lines.append(
                "result age: p50 \(TraceReport.ms(resultAge.p50Us)) ms, "
                    + "max \(TraceReport.ms(resultAge.maxUs)) ms")
        } else {
            lines.append("result age: n/a (no output carried a result)")
        }
        let counter = inFlightCounterMax.map(String.init) ?? "n/a"
        lines.append(
            "in flight: max \(maxInFlight) (in_flight counter \(counter), infer spans \(inFlightSpansMax)); "
                + "limit \(verdict.maxInFlightLimit)")
        if let summary {
            let fields = ["frames_captured", "frames_output", "trace_events_lost"].map {
                "\($0) \(summary[$0]?.jsonText ?? "n/a")"
            }
            lines.append("writer summary: " + fields.joined(separator: ", "))
        } else {
            lines.append("writer summary: none (run did not end cleanly)")
        }
        for warning in warnings where warning != load.truncationNote { lines.append("warning: " + warning) }
        lines.append(verdict.line)
        return lines.joined(separator: "\n") + "\n"
    }

    private var configLine: String {
        guard let config else { return "config: none in trace" }
        var parts: [String] = []
        for key in ["command", "source", "pace", "source_fps", "max_in_flight", "queue", "model"] {
            if let value = config[key] { parts.append("\(key) \(value.string ?? value.jsonText)") }
        }
        if config["simulated"]?.bool == true {
            var simulation = "SIMULATED inference"
            if let ms = config["simulate_inference_ms"]?.double { simulation += " \(formatMs(ms)) ms" }
            if let jitter = config["simulate_jitter_ms"]?.double { simulation += " ± \(formatMs(jitter)) ms" }
            if let mode = config["simulate_mode"]?.string { simulation += " (\(mode))" }
            parts.append(simulation)
        } else if config["simulated"]?.bool == false {
            parts.append("real inference")
        }
        if let deadline = config["output_deadline_us"]?.int64 {
            parts.append("output deadline \(TraceReport.ms(deadline)) ms")
        }
        return "config: " + parts.joined(separator: ", ")
    }

    private var outputLine: String {
        var text = "mean " + (output.meanFps.map { formatFixed($0, decimals: 2) } ?? "n/a")
        if let worst = output.worstWindowFrames, let start = output.worstWindowStartUs {
            text += ", worst 1-s window \(worst) frames (from \(formatFixed(Double(start) / 1e6, decimals: 3)) s)"
        } else {
            text += ", worst 1-s window n/a (under 1 s of output)"
        }
        return text
    }

    private var trendLine: String {
        guard let trend = lagTrend else { return "n/a (no inferences)" }
        var text =
            "slope \(signedMs(trend.slopeUsPerS / 1000)) ms/s, mean first quarter "
            + "\(formatMs(trend.firstQuarterMeanUs / 1000)) ms → last quarter "
            + "\(formatMs(trend.lastQuarterMeanUs / 1000)) ms: "
        if trend.sampleCount < LagTrend.minimumSamples {
            text += "too few inferences to judge (\(trend.sampleCount) < \(LagTrend.minimumSamples))"
        } else {
            text += trend.grows ? "GROWS" : "steady"
        }
        return text
    }

    static func ms(_ us: Int64) -> String { formatMs(Double(us) / 1000) }

    static func describe(_ summary: PercentileSummary?) -> String {
        guard let summary else { return "n/a (no samples)" }
        return "p50 \(ms(summary.p50Us)) ms, p95 \(ms(summary.p95Us)) ms, p99 \(ms(summary.p99Us)) ms, "
            + "max \(ms(summary.maxUs)) ms (n \(summary.count))"
    }
}
