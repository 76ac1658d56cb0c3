import ColorcamCore
import Stream

/// Every span, drop and counter sample of a trace, per stage, for drawing a timeline (`trace-report --html`).
///
/// Built by feeding events one at a time (`add`, in any order), then `finish()` sorts each lane by start time.
/// Columns are parallel arrays (one entry per span) rather than an array of structs so a 30-minute trace
/// (~500k events) stays a few arrays of integers. All times are microseconds on the trace's clock.
/// Value type, not shared: build on one thread, then read anywhere.
public struct TraceTimeline: Sendable {
    /// The pipeline stages, in lane order (TRACE-FORMAT.md tids 1–5). Spans are assigned by event name.
    public static let stages = ["capture", "detect", "infer", "composite", "output"]

    /// Extra integer arguments kept per stage (absent values are nil), shown on hover.
    public static let extraArgs: [String: [String]] = [
        "detect": ["photos"],
        "infer": ["lag_us", "queued_us", "requested_ts_us"],
        "composite": ["result_frame"],
        "output": ["result_frame", "result_age_us", "latency_us"]
    ]

    /// The counters drawn as graphs, in order.
    public static let counters = ["in_flight", "queue_depth"]

    /// One stage's spans, parallel arrays sorted by `startUs`.
    public struct Lane: Sendable, Equatable {
        public var stage: String
        public var startUs: [Int64] = []
        public var durUs: [Int64] = []
        /// The span's `frame` argument, nil when absent.
        public var frame: [Int64?] = []
        /// Per name in `TraceTimeline.extraArgs[stage]`, one value per span.
        public var extras: [String: [Int64?]] = [:]

        public var count: Int { startUs.count }
    }

    /// `drop` instants, sorted by time. `reason` is the raw reason text (unknown reasons are kept as they are).
    public struct Drops: Sendable, Equatable {
        public var tsUs: [Int64] = []
        public var frame: [Int64?] = []
        public var reason: [String] = []
    }

    /// One counter's samples (`C` events), sorted by time.
    public struct Counter: Sendable, Equatable {
        public var name: String
        public var tsUs: [Int64] = []
        public var value: [Int64] = []
    }

    /// In `stages` order.
    public var lanes: [Lane]
    public var drops = Drops()
    /// In `counters` order.
    public var counterSeries: [Counter]
    /// Earliest and latest time of any kept event (0 when there are none).
    public var firstUs: Int64 = 0
    public var lastUs: Int64 = 0
    private var sawTime = false

    public init() {
        lanes = TraceTimeline.stages.map { stage in
            var lane = Lane(stage: stage)
            for name in TraceTimeline.extraArgs[stage] ?? [] { lane.extras[name] = [] }
            return lane
        }
        counterSeries = TraceTimeline.counters.map { Counter(name: $0) }
    }

    /// The lane for `stage`, nil for a name not in `stages`.
    public func lane(_ stage: String) -> Lane? { lanes.first { $0.stage == stage } }

    /// Keeps what the timeline draws from one event; events without a time, and other producers' events, are skipped.
    public mutating func add(_ event: TraceFileEvent) {
        guard let tsUs = event.tsUs else { return }
        switch event.phase {
        case "X":
            guard let index = TraceTimeline.stages.firstIndex(of: event.name) else { return }
            let durUs = max(0, event.durUs ?? 0)
            lanes[index].startUs.append(tsUs)
            lanes[index].durUs.append(durUs)
            lanes[index].frame.append(event.intArg("frame"))
            for name in TraceTimeline.extraArgs[event.name] ?? [] {
                lanes[index].extras[name]!.append(event.intArg(name))
            }
            see(tsUs, tsUs + durUs)
        case "i", "I":
            guard event.name == "drop" else { return }
            drops.tsUs.append(tsUs)
            drops.frame.append(event.intArg("frame"))
            drops.reason.append(event.args["reason"]?.string ?? "unknown")
            see(tsUs, tsUs)
        case "C":
            guard let index = TraceTimeline.counters.firstIndex(of: event.name),
                let value = event.intArg("value")
            else { return }
            counterSeries[index].tsUs.append(tsUs)
            counterSeries[index].value.append(value)
            see(tsUs, tsUs)
        default:
            return
        }
    }

    private mutating func see(_ startUs: Int64, _ endUs: Int64) {
        firstUs = sawTime ? min(firstUs, startUs) : startUs
        lastUs = sawTime ? max(lastUs, endUs) : endUs
        sawTime = true
    }

    /// Sorts every lane, the drops and the counters by time (stable: equal times keep file order).
    public mutating func finish() {
        for index in lanes.indices {
            let lane = lanes[index]
            let order = TraceTimeline.sortedOrder(lane.startUs)
            guard !TraceTimeline.isIdentity(order) else { continue }
            lanes[index].startUs = order.map { lane.startUs[$0] }
            lanes[index].durUs = order.map { lane.durUs[$0] }
            lanes[index].frame = order.map { lane.frame[$0] }
            for (name, values) in lane.extras { lanes[index].extras[name] = order.map { values[$0] } }
        }
        let dropOrder = TraceTimeline.sortedOrder(drops.tsUs)
        if !TraceTimeline.isIdentity(dropOrder) {
            let old = drops
            drops = Drops(
                tsUs: dropOrder.map { old.tsUs[$0] }, frame: dropOrder.map { old.frame[$0] },
                reason: dropOrder.map { old.reason[$0] })
        }
        for index in counterSeries.indices {
            let old = counterSeries[index]
            let order = TraceTimeline.sortedOrder(old.tsUs)
            guard !TraceTimeline.isIdentity(order) else { continue }
            counterSeries[index].tsUs = order.map { old.tsUs[$0] }
            counterSeries[index].value = order.map { old.value[$0] }
        }
    }

    /// Indices of `values` in ascending order, ties in index order.
    static func sortedOrder(_ values: [Int64]) -> [Int] {
        var sorted = true
        for i in values.indices.dropFirst() where values[i] < values[i - 1] {
            sorted = false
            break
        }
        if sorted { return Array(values.indices) }
        return values.indices.sorted { values[$0] != values[$1] ? values[$0] < values[$1] : $0 < $1 }
    }

    static func isIdentity(_ order: [Int]) -> Bool {
        order.enumerated().allSatisfy { $0.offset == $0.element }
    }
}
