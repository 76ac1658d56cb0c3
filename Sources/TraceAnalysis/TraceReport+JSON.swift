import ColorcamCore
import Stream

/// The machine-readable report: one JSON object, keys sorted, times in integer microseconds.
///
/// Keys (stable; absent measures are `null`):
/// `file`, `bytes`, `form`, `events`, `colorcam_events`, `ignored_events`,
/// `truncation` {`closing_bracket_missing`, `partial_event_offset`, `partial_event_bytes`, `note`} or null,
/// `config` (the trace's config args) or null, `simulated`, `run_us`,
/// `frames` {`captured`, `output`, `dropped`}, `drops` {one key per reason},
/// `output_fps` {`mean`, `worst_1s_window_frames`, `worst_1s_window_start_us`},
/// `inference` {`count`, `per_second`, `duration_us`, `lag_us`} (percentile objects),
/// `lag_trend` {`slope_us_per_s`, `first_quarter_mean_us`, `last_quarter_mean_us`, `samples`, `grows`} or null,
/// `latency_us`, `result_age_us` (percentile objects), `in_flight` {`counter_max`, `spans_max`, `max`, `limit`},
/// `remote` {`requests`, `failed` {reason: count}, `failed_total`, `fallback_runs`, `send_us`, `wait_us`,
/// `receive_us`} or null (no remote inference),
/// `summary` (the writer's summary args) or null, `warnings` [strings],
/// `verdict` {`pass`, `exit_code`, `line`, `checks` [{`name`, `pass`, `detail`}],
///            `thresholds` {`max_lag_ms`, `max_in_flight`, `min_fps`}}.
/// A percentile object is {`count`, `p50`, `p95`, `p99`, `max`} in µs, or null without samples.
extension TraceReport {
    public func json(verdict: TraceVerdict, thresholds: TraceThresholds) -> String {
        jsonValue(verdict: verdict, thresholds: thresholds).jsonText + "\n"
    }

    func jsonValue(verdict: TraceVerdict, thresholds: TraceThresholds) -> JSONValue {
        func number(_ value: Double?) -> JSONValue { value.map(JSONValue.double) ?? .null }
        func integer(_ value: Int64?) -> JSONValue { value.map(JSONValue.int) ?? .null }
        func percentiles(_ summary: PercentileSummary?) -> JSONValue {
            guard let summary else { return .null }
            return .object([
                "count": .int(Int64(summary.count)), "p50": .int(summary.p50Us), "p95": .int(summary.p95Us),
                "p99": .int(summary.p99Us), "max": .int(summary.maxUs)
            ])
        }
        var truncation = JSONValue.null
        if load.closingBracketMissing {
            truncation = .object([
                "closing_bracket_missing": .bool(true),
                "partial_event_offset": integer(load.partialEvent.map { Int64($0.byteOffset) }),
                "partial_event_bytes": integer(load.partialEvent.map { Int64($0.byteCount) }),
                "note": load.truncationNote.map(JSONValue.string) ?? .null
            ])
        }
        var dropValues: [String: JSONValue] = [:]
        for reason in DropReason.allCases { dropValues[reason.rawValue] = .int(Int64(drops[reason] ?? 0)) }
        var trend = JSONValue.null
        if let lagTrend {
            trend = .object([
                "slope_us_per_s": .double(lagTrend.slopeUsPerS),
                "first_quarter_mean_us": .double(lagTrend.firstQuarterMeanUs),
                "last_quarter_mean_us": .double(lagTrend.lastQuarterMeanUs),
                "samples": .int(Int64(lagTrend.sampleCount)),
                "grows": .bool(lagTrend.grows)
            ])
        }
        let checks = verdict.checks.map {
            JSONValue.object(["name": .string($0.name), "pass": .bool($0.passed), "detail": .string($0.detail)])
        }
        return .object([
            "file": .string(load.file),
            "bytes": .int(Int64(load.byteCount)),
            "form": .string(load.form.rawValue),
            "events": .int(Int64(load.eventCount)),
            "colorcam_events": .int(Int64(colorcamEventCount)),
            "ignored_events": .int(Int64(ignoredEventCount)),
            "truncation": truncation,
            "config": config.map(JSONValue.object) ?? .null,
            "simulated": .bool(simulated),
            "run_us": .int(runDurationUs),
            "frames": .object([
                "captured": .int(Int64(framesCaptured)), "output": .int(Int64(framesOutput)),
                "dropped": .int(Int64(framesDropped))
            ]),
            "drops": .object(dropValues),
            "output_fps": .object([
                "mean": number(output.meanFps),
                "worst_1s_window_frames": integer(output.worstWindowFrames.map { Int64($0) }),
                "worst_1s_window_start_us": integer(output.worstWindowStartUs)
            ]),
            "inference": .object([
                "count": .int(Int64(inferenceCount)), "per_second": number(inferencesPerSecond),
                "duration_us": percentiles(inferDuration), "lag_us": percentiles(lag)
            ]),
            "lag_trend": trend,
            "latency_us": percentiles(latency),
            "result_age_us": percentiles(resultAge),
            "in_flight": .object([
                "counter_max": integer(inFlightCounterMax), "spans_max": .int(inFlightSpansMax),
                "max": .int(maxInFlight), "limit": .int(Int64(verdict.maxInFlightLimit))
            ]),
            "remote": remote.map { r in
                .object([
                    "requests": .int(Int64(r.requests)),
                    "failed": .object(r.failed.mapValues { .int(Int64($0)) }),
                    "failed_total": .int(Int64(r.failedCount)), "fallback_runs": .int(Int64(r.fallbackRuns)),
                    "send_us": percentiles(r.sendUs), "wait_us": percentiles(r.waitUs),
                    "receive_us": percentiles(r.receiveUs)
                ])
            } ?? .null,
            "summary": summary.map(JSONValue.object) ?? .null,
            "warnings": .array(warnings.map(JSONValue.string)),
            "verdict": .object([
                "pass": .bool(verdict.passed),
                "exit_code": .int(Int64(verdict.exitCode)),
                "line": .string(verdict.line),
                "checks": .array(checks),
                "thresholds": .object([
                    "max_lag_ms": .double(thresholds.maxLagMs),
                    "max_in_flight": .int(Int64(verdict.maxInFlightLimit)),
                    "min_fps": number(thresholds.minFps)
                ])
            ])
        ])
    }
}
