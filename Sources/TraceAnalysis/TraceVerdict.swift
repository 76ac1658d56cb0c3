import ColorcamCore
import Stream

/// Limits a trace must meet (the `trace-report` options).
public struct TraceThresholds: Sendable, Equatable {
    /// Request→start lag p99 must be at most this (`--max-lag-ms`, default 5 ms).
    public var maxLagMs: Double
    /// In-flight maximum must be at most this (`--max-in-flight`); nil: the trace config's `max_in_flight`, else 1.
    public var maxInFlight: Int?
    /// The worst 1-second output window must hold at least this many frames (`--min-fps`); nil: not checked.
    public var minFps: Double?
    /// Capture→output latency p99 must be at most this (`--max-latency-ms`); nil: not checked.
    public var maxLatencyMs: Double?

    public init(maxLagMs: Double = 5, maxInFlight: Int? = nil, minFps: Double? = nil, maxLatencyMs: Double? = nil) {
        self.maxLagMs = maxLagMs
        self.maxInFlight = maxInFlight
        self.minFps = minFps
        self.maxLatencyMs = maxLatencyMs
    }
}

/// PASS or FAIL for a report against thresholds, with one line saying why.
///
/// Checks, in order: lag p99 ≤ `maxLagMs` (no inferences: nothing to check); max in flight (the larger of counter
/// and spans) ≤ the in-flight limit; worst 1-s window ≥ `minFps` when set (a run with under 1 s of output fails it,
/// as it cannot be checked); lag does not grow (`TraceReport.LagTrend.grows`), always checked.
public struct TraceVerdict: Sendable {
    public struct Check: Sendable, Equatable {
        /// Stable identifier: `lag_p99`, `in_flight`, `min_fps`, `lag_growth`.
        public var name: String
        public var passed: Bool
        /// e.g. `lag p99 14.2 ms > 2 ms`.
        public var detail: String
    }

    public var checks: [Check]
    /// The in-flight limit actually applied.
    public var maxInFlightLimit: Int

    public var passed: Bool { checks.allSatisfy(\.passed) }

    /// Process exit status for this verdict: 0 when every threshold holds, 1 when one fails.
    /// (Errors before a verdict exit with their `FailureKind.exitCode`: 64, 65, 66.)
    public var exitCode: Int32 { passed ? 0 : 1 }

    /// `verdict: PASS — …` listing every check, or `verdict: FAIL — …` listing the failed ones.
    public var line: String {
        let shown = passed ? checks : checks.filter { !$0.passed }
        return "verdict: \(passed ? "PASS" : "FAIL") — " + shown.map(\.detail).joined(separator: "; ")
    }

    public init(report: TraceReport, thresholds: TraceThresholds) {
        var checks: [Check] = []
        if let lag = report.lag {
            let p99Ms = Double(lag.p99Us) / 1000
            let ok = p99Ms <= thresholds.maxLagMs
            let detail = "lag p99 \(formatMs(p99Ms)) ms \(ok ? "≤" : ">") \(formatMs(thresholds.maxLagMs)) ms"
            checks.append(Check(name: "lag_p99", passed: ok, detail: detail))
        } else {
            checks.append(Check(name: "lag_p99", passed: true, detail: "lag n/a (no inferences)"))
        }
        let limit = thresholds.maxInFlight ?? report.configMaxInFlight ?? 1
        maxInFlightLimit = limit
        let inFlightOk = report.maxInFlight <= Int64(limit)
        checks.append(
            Check(
                name: "in_flight", passed: inFlightOk,
                detail: "max in flight \(report.maxInFlight) \(inFlightOk ? "≤" : ">") \(limit)"))
        if let minFps = thresholds.minFps {
            if let worst = report.output.worstWindowFrames {
                let ok = Double(worst) >= minFps
                let relation = ok ? "≥" : "<"
                checks.append(
                    Check(
                        name: "min_fps", passed: ok,
                        detail: "worst 1-s window \(worst) frames \(relation) \(formatMs(minFps)) fps"))
            } else {
                checks.append(
                    Check(
                        name: "min_fps", passed: false,
                        detail: "worst 1-s window n/a (under 1 s of output) < \(formatMs(minFps)) fps"))
            }
        }
        if let maxLatencyMs = thresholds.maxLatencyMs {
            if let p99 = report.latency?.p99Us {
                let ms = Double(p99) / 1000, ok = ms <= maxLatencyMs
                checks.append(
                    Check(
                        name: "latency_p99", passed: ok,
                        detail: "latency p99 \(formatMs(ms)) ms "
                            + "\(ok ? "≤" : ">") \(formatMs(maxLatencyMs)) ms"))
            } else {
                checks.append(Check(name: "latency_p99", passed: false, detail: "latency n/a (no outputs)"))
            }
        }
        if let trend = report.lagTrend, trend.grows {
            checks.append(
                Check(
                    name: "lag_growth", passed: false,
                    detail: "lag grows \(signedMs(trend.slopeUsPerS / 1000)) ms/s"))
        } else {
            checks.append(Check(name: "lag_growth", passed: true, detail: "lag steady"))
        }
        self.checks = checks
    }
}

/// `12.3`-style: 0 decimals from 100, 1 from 10, else 3, trailing zeros trimmed (used for ms and fps in messages).
func formatMs(_ value: Double) -> String {
    guard value.isFinite else { return String(value) }
    let decimals = abs(value) >= 100 ? 0 : abs(value) >= 10 ? 1 : 3
    return formatFixed(value, decimals: decimals)
}

/// `+3.1` / `-0.25`: like `formatMs` with an explicit sign.
func signedMs(_ value: Double) -> String {
    (value >= 0 ? "+" : "") + formatMs(value)
}

/// `value` with exactly `decimals` digits after the point, then trailing zeros (and a bare point) removed.
func formatFixed(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e15 else { return String(value) }
    let whole = Int64(scaled)
    let factor = Int64(scale)
    var text = String(whole / factor)
    if decimals > 0 {
        var fraction = String(whole % factor)
        fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if !fraction.isEmpty { text += "." + fraction }
    }
    return (value < 0 && whole != 0 ? "-" : "") + text
}
