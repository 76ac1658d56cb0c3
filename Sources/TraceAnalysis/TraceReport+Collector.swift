import ColorcamCore
import Stream

extension TraceReport {
    /// Gathers what the report needs from events one at a time (the reader streams them), then computes.
    ///
    /// Recognises colorcam events by name and phase (TRACE-FORMAT.md); anything else is counted as ignored, except
    /// flow arrows and track names, which are expected but carry nothing the report uses.
    /// Events may arrive in any order (other tools sort differently); everything time-based is sorted in `finish`.
    struct Collector {
        var colorcamEventCount = 0
        var ignoredEventCount = 0
        var firstTsUs: Int64?
        var lastEndUs: Int64?
        var config: [String: JSONValue]?
        var summary: [String: JSONValue]?
        var anyInferSimulated = false

        var framesCaptured = 0
        var captureTsUsByFrame: [Int64: Int64] = [:]
        var outputTimesUs: [Int64] = []
        var latenciesUs: [Int64] = []
        /// Outputs without `latency_us`: resolved against capture times once every event is in.
        var outputsNeedingCapture: [(frame: Int64, endUs: Int64)] = []
        var resultAgesUs: [Int64] = []
        var drops: [DropReason: Int] = [:]
        var unknownDropReasons: [String: Int] = [:]

        var inferDurationsUs: [Int64] = []
        var lagSamples: [(tsUs: Int64, lagUs: Int64)] = []
        var inferIntervals: [(startUs: Int64, endUs: Int64)] = []
        var inFlightCounterMax: Int64?
        var remoteRequests = 0
        var remoteFailed: [String: Int] = [:]
        var fallbackRuns = 0
        var remotePartsUs: [String: [Int64]] = ["infer_send": [], "infer_wait": [], "infer_receive": []]

        var malformedCount = 0
        var firstMalformed: String?

        mutating func add(_ event: TraceFileEvent) {
            switch (event.name, event.phase) {
            case ("capture", "X"): addCapture(event)
            case ("output", "X"): addOutput(event)
            case ("infer", "X"): addInfer(event)
            case ("drop", "i"), ("drop", "I"): addDrop(event)
            case ("in_flight", "C"):
                guard let value = event.intArg("value") else { return malformed(event, "without an integer value") }
                inFlightCounterMax = max(inFlightCounterMax ?? value, value)
            case ("config", "i"), ("config", "I"):
                if config == nil { config = event.args.dictionary }
            case ("summary", "i"), ("summary", "I"):
                summary = event.args.dictionary
            case ("infer_send", "X"), ("infer_wait", "X"), ("infer_receive", "X"):
                guard let ts = event.tsUs, let end = event.endUs else { return malformed(event, "without ts") }
                remotePartsUs[event.name, default: []].append(end - ts)
            case ("detect", "X"), ("composite", "X"), ("queue_depth", "C"):
                break
            case ("frame", "s"), ("frame", "f"), ("process_name", "M"), ("thread_name", "M"):
                return  // colorcam writes these too, but any Chrome trace may: they neither count nor are ignored
            default:
                ignoredEventCount += 1
                return
            }
            colorcamEventCount += 1
            if let ts = event.tsUs, let end = event.endUs {
                firstTsUs = min(firstTsUs ?? ts, ts)
                lastEndUs = max(lastEndUs ?? end, end)
            }
        }

        private mutating func malformed(_ event: TraceFileEvent, _ what: String) {
            malformedCount += 1
            if firstMalformed == nil { firstMalformed = "\(event.name) at byte \(event.byteOffset) \(what)" }
        }

        private mutating func addCapture(_ event: TraceFileEvent) {
            framesCaptured += 1
            if let frame = event.intArg("frame"), let captureTs = event.intArg("capture_ts_us") ?? event.tsUs {
                captureTsUsByFrame[frame] = captureTs
            }
        }

        private mutating func addOutput(_ event: TraceFileEvent) {
            guard let ts = event.tsUs, let end = event.endUs else { return malformed(event, "without ts") }
            outputTimesUs.append(ts)
            if let latency = event.intArg("latency_us") {
                latenciesUs.append(latency)
            } else if let frame = event.intArg("frame") {
                outputsNeedingCapture.append((frame, end))
            }
            if let age = event.intArg("result_age_us") { resultAgesUs.append(age) }
        }

        private mutating func addInfer(_ event: TraceFileEvent) {
            guard let ts = event.tsUs, let end = event.endUs else { return malformed(event, "without ts") }
            inferDurationsUs.append(end - ts)
            let requested = event.intArg("requested_ts_us")
            if let lag = event.intArg("lag_us") ?? requested.map({ ts - $0 }) {
                lagSamples.append((ts, lag))
            } else {
                malformed(event, "without lag_us or requested_ts_us")
            }
            inferIntervals.append((min(requested ?? ts, ts), end))
            if event.args["simulated"]?.bool == true { anyInferSimulated = true }
            if let backend = event.args["backend"]?.string, backend != "local" {
                remoteRequests += 1
                if backend == "fallback" { fallbackRuns += 1 }
                if let failed = event.args["failed"]?.string { remoteFailed[failed, default: 0] += 1 }
            }
        }

        private mutating func addDrop(_ event: TraceFileEvent) {
            guard let text = event.args["reason"]?.string else { return malformed(event, "without a reason") }
            if let reason = DropReason(rawValue: text) {
                drops[reason, default: 0] += 1
            } else {
                unknownDropReasons[text, default: 0] += 1
            }
        }

        func finish(load: TraceLoadInfo) -> TraceReport {
            var warnings: [String] = []
            if let note = load.truncationNote { warnings.append(note) }
            var latencies = latenciesUs
            var unresolved = 0
            for output in outputsNeedingCapture {
                if let captureTs = captureTsUsByFrame[output.frame] {
                    latencies.append(output.endUs - captureTs)
                } else {
                    unresolved += 1
                }
            }
            if unresolved > 0 {
                warnings.append("\(unresolved) outputs have no latency_us and no capture event for their frame")
            }
            if malformedCount > 0, let firstMalformed {
                warnings.append(
                    "\(malformedCount) colorcam events malformed, partly ignored "
                        + "(first: \(firstMalformed))")
            }
            for (reason, count) in unknownDropReasons.sorted(by: { $0.key < $1.key }) {
                warnings.append("\(count) drops with reason '\(reason)', not a reason in TRACE-FORMAT.md")
            }
            let configSimulated = config?["simulated"]?.bool
            if configSimulated == false && anyInferSimulated {
                warnings.append("config says simulated false but infer spans say simulated true")
            }
            let segment = config?["segment"]?.int64
            if let segment {
                warnings.append(
                    "segment \(segment) of a rotated trace: earlier frames are in the numbered files "
                        + "beside it; counts here cover this file only")
            }
            if let summary {
                if let lost = summary["trace_events_lost"]?.int64, lost > 0 {
                    warnings.append("writer lost \(lost) trace events: counts below are lower bounds")
                }
                if segment == nil, let captured = summary["frames_captured"]?.int64, captured != framesCaptured {
                    warnings.append(
                        "summary says frames_captured \(captured), "
                            + "trace has \(framesCaptured) capture events")
                }
                if segment == nil, let output = summary["frames_output"]?.int64, output != outputTimesUs.count {
                    warnings.append(
                        "summary says frames_output \(output), "
                            + "trace has \(outputTimesUs.count) output events")
                }
            }
            let spansMax = TraceReport.maxOverlap(inferIntervals)
            if let counterMax = inFlightCounterMax, spansMax > counterMax {
                warnings.append(
                    "in_flight counter peaks at \(counterMax) "
                        + "but infer spans (request→end) overlap \(spansMax) deep")
            }

            let runUs = max(0, (lastEndUs ?? 0) - (firstTsUs ?? 0))
            var allDrops: [DropReason: Int] = [:]
            for reason in DropReason.allCases { allDrops[reason] = drops[reason] ?? 0 }
            let lagSorted = lagSamples.sorted { $0.tsUs < $1.tsUs }
            var report = TraceReport(
                load: load, config: config, simulated: configSimulated == true || anyInferSimulated,
                summary: summary, warnings: warnings, colorcamEventCount: colorcamEventCount,
                ignoredEventCount: ignoredEventCount, runDurationUs: runUs, framesCaptured: framesCaptured,
                framesOutput: outputTimesUs.count, drops: allDrops,
                output: TraceReport.outputRate(sortedTimesUs: outputTimesUs.sorted()),
                inferenceCount: inferDurationsUs.count,
                inferencesPerSecond: runUs > 0 ? Double(inferDurationsUs.count) * 1e6 / Double(runUs) : nil,
                inferDuration: PercentileSummary(inferDurationsUs), lag: PercentileSummary(lagSorted.map(\.lagUs)),
                lagTrend: TraceReport.lagTrend(sortedSamples: lagSorted), latency: PercentileSummary(latencies),
                resultAge: PercentileSummary(resultAgesUs), inFlightCounterMax: inFlightCounterMax,
                inFlightSpansMax: spansMax)
            if remoteRequests > 0 {
                report.remote = RemoteStats(
                    requests: remoteRequests, failed: remoteFailed, fallbackRuns: fallbackRuns,
                    sendUs: PercentileSummary(remotePartsUs["infer_send"] ?? []),
                    waitUs: PercentileSummary(remotePartsUs["infer_wait"] ?? []),
                    receiveUs: PercentileSummary(remotePartsUs["infer_receive"] ?? []))
            }
            return report
        }
    }
}
