import ColorcamCore
import Stream
import TraceAnalysis

/// `colorcam trace-report TRACE.json [--json] [--html OUT.html] [--max-lag-ms X] [--max-in-flight N] [--min-fps F]`.
enum TraceReportCommand {
    static let usage =
        "trace-report TRACE.json [--json] [--html OUT.html] [--max-lag-ms X] [--max-in-flight N] "
        + "[--min-fps F] [--max-latency-ms X]"

    static let help = """
        usage: colorcam \(usage)

        Summarises a colorcam trace (Chrome Trace JSON, see Sources/Stream/TRACE-FORMAT.md) like an Instruments run:
        frames captured/output/dropped per reason, output fps, inference duration and request→start lag, capture→output
        latency, result age, inferences in flight, whether lag grows, the run's config, and a one-line verdict.

        Reads the array form colorcam writes, any well-formed JSON array of events, and {"traceEvents": [...]}.
        A truncated trace (no closing ], a partial last event) is loaded up to its last complete event and says so.

        options:
          --json             print one JSON object instead of text (keys below)
          --html OUT.html    also write a self-contained page (no network): a zoomable timeline with one lane per
                             stage (hover a span for its frame and times), drops coloured by reason, in-flight and
                             lag graphs, then the summary and verdict. '-' writes the page to stdout instead of the
                             text report. Large traces open zoomed out, aggregated per pixel; zoom in for spans.
          --max-lag-ms X     fail when request→start lag p99 exceeds X ms (default 5)
          --max-in-flight N  fail when more than N inferences are in flight (default: the trace config's
                             max_in_flight, else 1)
          --min-fps F        fail when the worst 1-s output window holds fewer than F frames (default: not checked)
          --max-latency-ms X fail when capture→output latency p99 exceeds X ms (default: not checked)

        definitions:
          percentiles   nearest rank: the value at 1-based rank ceil(p*n/100) of the sorted samples
          run           first colorcam event's ts to the last span's end
          dropped       frames lost: late + driver_gap + decode_error (superseded and busy skip only the inference)
          output fps    t = each output span's ts; mean = (outputs - 1) / (last t - first t);
                        worst 1-s window: for each output i with t_i + 1 s <= last t, count outputs in
                        [t_i, t_i + 1 s); the worst is the smallest count (n/a with under 1 s of output)
          lag           infer lag_us, else ts - requested_ts_us; inferences per second = infers / run
          latency       output latency_us, else end of the output span - capture_ts_us of the same frame
          in flight     the larger of the in_flight counter's peak and the most infer spans open at once,
                        each counted from requested_ts_us to the end of its span (catches a wrong counter)
          lag grows     least-squares slope of lag vs infer start > 0.1 ms per second of run AND mean lag of the
                        last quarter of inferences (by start) > first quarter's + 1 ms (needs >= 8 inferences);
                        always fails. A trace without inferences passes the lag checks.

        --json keys (sorted; times in integer µs; a percentile object is {count, p50, p95, p99, max} or null):
          file bytes form events colorcam_events ignored_events truncation config simulated run_us
          frames{captured output dropped} drops{superseded busy late driver_gap decode_error}
          output_fps{mean worst_1s_window_frames worst_1s_window_start_us}
          inference{count per_second duration_us lag_us}
          lag_trend{slope_us_per_s first_quarter_mean_us last_quarter_mean_us samples grows}
          latency_us result_age_us in_flight{counter_max spans_max max limit} summary warnings
          verdict{pass exit_code line checks[{name pass detail}] thresholds{max_lag_ms max_in_flight min_fps}}

        exit codes: 0 every threshold holds, 1 one fails, 64 usage, 65 not a trace, 66 missing file,
                    74 the --html page could not be written
        """

    static let command = Command(
        name: "trace-report", summary: "summarise a trace: fps, drops, lag, verdict",
        help: help, run: run)

    @Sendable static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(
            args, command: "trace-report",
            valued: ["max-lag-ms", "max-in-flight", "min-fps", "max-latency-ms", "html"], boolean: ["json"])
        let path = try arguments.positionals(exactly: 1, usage: usage)[0]
        let thresholds = TraceThresholds(
            maxLagMs: try arguments.double("max-lag-ms", default: 5, min: 0)!,
            maxInFlight: try arguments.int("max-in-flight", range: 1...1_000_000),
            minFps: try arguments.double("min-fps", min: 0),
            maxLatencyMs: try arguments.double("max-latency-ms", min: 0))
        let htmlPath = arguments.string("html")
        if htmlPath?.isEmpty == true { throw UsageError("trace-report: --html needs a file name (or - for stdout)") }
        if htmlPath == "-" && arguments.flag("json") {
            throw UsageError("trace-report: --html - and --json both want stdout; write the page to a file")
        }
        let report: TraceReport
        var timeline: TraceTimeline?
        if htmlPath != nil {
            (report, timeline) = try TraceReport.loadWithTimeline(contentsOf: path)
        } else {
            report = try TraceReport(contentsOf: path)
        }
        let verdict = TraceVerdict(report: report, thresholds: thresholds)
        if let htmlPath, let timeline {
            try report.writeHTML(to: htmlPath, verdict: verdict, timeline: timeline)
            if htmlPath == "-" { return verdict.exitCode }
        }
        let output =
            arguments.flag("json")
            ? report.json(verdict: verdict, thresholds: thresholds)
            : report.text(verdict: verdict)
        print(output, terminator: "")
        return verdict.exitCode
    }
}
