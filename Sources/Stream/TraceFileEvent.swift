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
    public var args: [String: JSONValue]
    public var byteOffset: Int

    public init(name: String, phase: String, tsUs: Int64? = nil, durUs: Int64? = nil, pid: Int64? = nil,
                tid: Int64? = nil, args: [String: JSONValue] = [:], byteOffset: Int = 0) {
        self.name = name
        self.phase = phase
        self.tsUs = tsUs
        self.durUs = durUs
        self.pid = pid
        self.tid = tid
        self.args = args
        self.byteOffset = byteOffset
    }

    /// Builds an event from a parsed JSON object; missing or mistyped fields become nil / empty.
    init(object: [String: JSONValue], byteOffset: Int) {
        var args: [String: JSONValue] = [:]
        if case .object(let members)? = object["args"] { args = members }
        self.init(name: object["name"]?.string ?? "", phase: object["ph"]?.string ?? "",
                  tsUs: object["ts"]?.int64, durUs: object["dur"]?.int64, pid: object["pid"]?.int64,
                  tid: object["tid"]?.int64, args: args, byteOffset: byteOffset)
    }

    /// End of a span (`ts + dur`), or `ts` for events without a duration.
    public var endUs: Int64? {
        guard let tsUs else { return nil }
        return tsUs + max(0, durUs ?? 0)
    }

    /// An integer argument (`args[key]`), nil when absent or not a number.
    public func intArg(_ key: String) -> Int64? { args[key]?.int64 }
}
