import ColorcamCore
import Stream

/// One Chrome-trace event as read from a file (any producer, not only colorcam).
///
/// Timestamps and durations are microseconds (fractional values from other tools are rounded down). Fields the
/// event does not carry are nil / empty. `byteOffset` is where the event's `{` starts in the file, for messages.
public struct TraceFileEvent: Sendable {
    public var name: String
    /// Chrome phase: `X` span, `i`/`I` instant, `C` counter, `M` metadata, `s`/`f` flow, …
    public var phase: String
    public var tsUs: Int64?
    public var durUs: Int64?
    public var pid: Int64?
    public var tid: Int64?
    public var args: TraceArgs
    public var byteOffset: Int

    public init(
        name: String, phase: String, tsUs: Int64? = nil, durUs: Int64? = nil, pid: Int64? = nil,
        tid: Int64? = nil, args: TraceArgs = TraceArgs(pairs: []), byteOffset: Int = 0
    ) {
        self.name = name
        self.phase = phase
        self.tsUs = tsUs
        self.durUs = durUs
        self.pid = pid
        self.tid = tid
        self.args = args
        self.byteOffset = byteOffset
    }

    /// Largest time magnitude accepted (2⁵³ µs ≈ 285 years). Bigger `ts`/`dur`/time args read as absent, so sums
    /// and differences of a few times can never overflow `Int64`, whatever the file holds.
    public static let maxTimeMagnitudeUs: Int64 = 1 << 53

    static func time(_ value: JSONValue?) -> Int64? {
        guard let value = value?.int64, value.magnitude <= UInt64(maxTimeMagnitudeUs) else { return nil }
        return value
    }

    /// Parses one event object at `parser.offset` (a `{`). Missing, mistyped or out-of-range fields become nil /
    /// empty. `args` members are kept as pairs, not hashed: events carry a handful, and this is the reader's
    /// hot path (half a million events for a 30-minute run).
    static func parse(_ parser: inout TraceJSONParser, byteOffset: Int) throws(TraceJSONFailure) -> TraceFileEvent {
        var event = TraceFileEvent(name: "", phase: "", byteOffset: byteOffset)
        try parser.parseMembers(depth: 1) { key, parser throws(TraceJSONFailure) in
            if key == "args", try parser.peek() == UInt8(ascii: "{") {
                var pairs: [(key: String, value: JSONValue)] = []
                pairs.reserveCapacity(8)
                try parser.parseMembers(depth: 2) { argKey, parser throws(TraceJSONFailure) in
                    pairs.append((argKey, try parser.parseValue(depth: 2)))
                }
                event.args = TraceArgs(pairs: pairs)
                return
            }
            let value = try parser.parseValue(depth: 1)
            switch key {
            case "name": event.name = value.string ?? ""
            case "ph": event.phase = value.string ?? ""
            case "ts": event.tsUs = time(value)
            case "dur": event.durUs = time(value)
            case "pid": event.pid = value.int64
            case "tid": event.tid = value.int64
            default: break
            }
        }
        return event
    }

    /// End of a span (`ts + dur`), or `ts` for events without a duration.
    public var endUs: Int64? {
        guard let tsUs else { return nil }
        return tsUs + max(0, durUs ?? 0)
    }

    /// An integer argument (`args[key]`), nil when absent, not a number or beyond `maxTimeMagnitudeUs`.
    public func intArg(_ key: String) -> Int64? { TraceFileEvent.time(args[key]) }
}

/// An event's `args`, in file order. Lookup is linear (events have a handful of args); a repeated key reads as its
/// last occurrence, as in a JSON object.
public struct TraceArgs: Sendable {
    public var pairs: [(key: String, value: JSONValue)]

    public init(pairs: [(key: String, value: JSONValue)]) {
        self.pairs = pairs
    }

    public subscript(key: String) -> JSONValue? {
        pairs.last { $0.key == key }?.value
    }

    /// The args as a dictionary (for the config and summary, which are kept whole).
    public var dictionary: [String: JSONValue] {
        Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }
}
