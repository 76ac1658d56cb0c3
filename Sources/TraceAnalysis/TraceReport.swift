import ColorcamCore
import Stream

/// The statistics `colorcam trace-report` prints for one trace: frame counts and drops, output rate, inference
/// duration and request→start lag, latency, result age, in-flight count and whether lag grows over the run.
///
/// Built once from a whole trace (`init(contentsOf:)` / `init(bytes:file:)`), then immutable and `Sendable`.
/// All times are microseconds on the trace's clock (`…Us`); rates are per second of that clock. Percentiles are
/// nearest-rank (`NearestRank`). Events of other producers mixed into the file are counted and ignored.
public struct TraceReport: Sendable {
    /// Output rate over the run.
    public struct OutputRate: Sendable, Equatable {
        /// (outputs − 1) / (last output ts − first output ts); nil with fewer than 2 outputs or no time between them.
        public var meanFps: Double?
        /// Fewest outputs in any window [tᵢ, tᵢ + 1 s) that starts at an output tᵢ with tᵢ + 1 s ≤ last output ts;
        /// nil when the outputs span less than 1 s.
        public var worstWindowFrames: Int?
        /// Start (the output ts) of the first window with `worstWindowFrames` outputs.
        public var worstWindowStartUs: Int64?
    }

    /// Does request→start lag grow over the run? Both measures must exceed their threshold (see `grows`).
    public struct LagTrend: Sendable, Equatable {
        /// Least-squares slope of lag against infer start time: µs of lag per second of run.
        public var slopeUsPerS: Double
        /// Mean lag of the first and last quarter of the inferences (by start time, ⌊n/4⌋ each).
        public var firstQuarterMeanUs: Double
        public var lastQuarterMeanUs: Double
        public var sampleCount: Int

        /// Fewest inferences judged; with fewer, lag is never said to grow.
        public static let minimumSamples = 8
        /// Slope above which lag may be growing: 100 µs of lag per second of run (6 ms per minute).
        public static let slopeThresholdUsPerS = 100.0
        /// Last-quarter mean must exceed first-quarter mean by more than this: 1 ms.
        public static let quarterRiseThresholdUs = 1_000.0

        /// True when the slope exceeds `slopeThresholdUsPerS` AND the last quarter's mean lag exceeds the first
        /// quarter's by more than `quarterRiseThresholdUs` (and there are at least `minimumSamples` inferences).
        public var grows: Bool {
            sampleCount >= LagTrend.minimumSamples && slopeUsPerS > LagTrend.slopeThresholdUsPerS
                && lastQuarterMeanUs - firstQuarterMeanUs > LagTrend.quarterRiseThresholdUs
        }
    }

    public var load: TraceLoadInfo
    /// `args` of the first `config` event, nil when the trace has none.
    public var config: [String: JSONValue]?
    /// True when the config says `simulated: true` or any `infer` span has `simulated: true`.
    public var simulated: Bool
    /// `args` of the last `summary` event, nil when the run did not end cleanly.
    public var summary: [String: JSONValue]?
    /// Things a reader should know (lost events, malformed events, counter disagreements), one line each.
    public var warnings: [String]
    /// Events recognised as colorcam's (malformed ones included) / other producers' events, ignored. Flow
    /// arrows (`frame` s/f) and track names (M) are in neither count.
    public var colorcamEventCount: Int
    public var ignoredEventCount: Int
    /// First event ts to last span end, over colorcam events.
    public var runDurationUs: Int64

    public var framesCaptured: Int
    public var framesOutput: Int
    /// Drop events per reason; every reason is present (0 when none).
    public var drops: [DropReason: Int]
    public var output: OutputRate

    public var inferenceCount: Int
    /// Inferences per second of run; nil for a run of zero length.
    public var inferencesPerSecond: Double?
    public var inferDuration: PercentileSummary?
    /// Request→start lag (`lag_us`, else `ts − requested_ts_us`).
    public var lag: PercentileSummary?
    /// nil when there are no inferences.
    public var lagTrend: LagTrend?
    /// Capture→output latency (`latency_us`, else output end − the frame's `capture_ts_us`).
    public var latency: PercentileSummary?
    public var resultAge: PercentileSummary?

    /// Highest `in_flight` counter value, nil when the trace has no such counter.
    public var inFlightCounterMax: Int64?
    /// Most inferences in flight at once judged from the spans: each from `requested_ts_us` (else its start)
    /// to the end of its `infer` span. Catches a writer whose counter is wrong.
    public var inFlightSpansMax: Int64

    /// Inferences run on a remote server (`--infer-url`): how many, which failed and why, how their time split.
    /// Nil when the trace has no remote inference.
    public struct RemoteStats: Sendable, Equatable {
        /// `infer` spans with `backend` `remote` or `fallback`.
        public var requests: Int
        /// By `failed` reason (`timeout`, `connection`, `http_status`, `bad_response`, `unavailable`).
        public var failed: [String: Int]
        /// Of the failed requests, those the local engine stood in for (`backend` `fallback`).
        public var fallbackRuns: Int
        public var sendUs: PercentileSummary?
        public var waitUs: PercentileSummary?
        public var receiveUs: PercentileSummary?

        public var failedCount: Int { failed.values.reduce(0, +) }
    }

    public var remote: RemoteStats?

    /// Frames lost: drops whose reason drops the frame (`late`, `driver_gap`, `decode_error`).
    public var framesDropped: Int {
        DropReason.allCases.filter(\.dropsFrame).reduce(0) { $0 + (drops[$1] ?? 0) }
    }

    /// The larger of the counter and the span measure.
    public var maxInFlight: Int64 { max(inFlightCounterMax ?? 0, inFlightSpansMax) }

    /// The config's `max_in_flight`, when present.
    public var configMaxInFlight: Int? { config?["max_in_flight"]?.int64.map { Int($0) } }

    /// Loads and summarises the trace at `path`.
    /// - Throws: `StreamError` `.missingInput` (no such file), `.badData` (not a colorcam trace).
    public init(contentsOf path: String) throws {
        try self.init(bytes: try TraceReader.readFile(path), file: path)
    }

    /// Summarises trace bytes; `file` names them in messages. `onEvent` also sees every event, in file order
    /// (e.g. to build a `TraceTimeline` in the same pass).
    /// - Throws: `StreamError` `.badData` when the bytes are not a trace or hold no colorcam events.
    public init(bytes: [UInt8], file: String, onEvent: (TraceFileEvent) -> Void = { _ in }) throws {
        var collector = TraceReport.Collector()
        let load = try TraceReader.parse(bytes, file: file) {
            collector.add($0)
            onEvent($0)
        }
        guard collector.colorcamEventCount > 0 else {
            if load.eventCount == 0, let partial = load.partialEvent {
                throw StreamError(
                    .badData, file: file, byteOffset: Int64(partial.byteOffset),
                    "trace truncated inside its first event (\(partial.byteCount) bytes); "
                        + "no complete events")
            }
            throw StreamError(
                .badData, file: file,
                "no colorcam events among \(load.eventCount) events "
                    + "(expected capture, output, infer, drop, config)")
        }
        self = collector.finish(load: load)
    }

    init(
        load: TraceLoadInfo, config: [String: JSONValue]?, simulated: Bool, summary: [String: JSONValue]?,
        warnings: [String], colorcamEventCount: Int, ignoredEventCount: Int, runDurationUs: Int64,
        framesCaptured: Int, framesOutput: Int, drops: [DropReason: Int], output: OutputRate, inferenceCount: Int,
        inferencesPerSecond: Double?, inferDuration: PercentileSummary?, lag: PercentileSummary?,
        lagTrend: LagTrend?, latency: PercentileSummary?, resultAge: PercentileSummary?,
        inFlightCounterMax: Int64?, inFlightSpansMax: Int64
    ) {
        self.load = load
        self.config = config
        self.simulated = simulated
        self.summary = summary
        self.warnings = warnings
        self.colorcamEventCount = colorcamEventCount
        self.ignoredEventCount = ignoredEventCount
        self.runDurationUs = runDurationUs
        self.framesCaptured = framesCaptured
        self.framesOutput = framesOutput
        self.drops = drops
        self.output = output
        self.inferenceCount = inferenceCount
        self.inferencesPerSecond = inferencesPerSecond
        self.inferDuration = inferDuration
        self.lag = lag
        self.lagTrend = lagTrend
        self.latency = latency
        self.resultAge = resultAge
        self.inFlightCounterMax = inFlightCounterMax
        self.inFlightSpansMax = inFlightSpansMax
    }
}
