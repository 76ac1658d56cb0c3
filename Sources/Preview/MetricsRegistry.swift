import ColorcamCore
import Synchronization

/// A monotonically increasing value (Prometheus `counter`). Threading: any thread; `add` takes an uncontended
/// mutex for a few instructions and never allocates.
public final class Counter: Sendable {
    private let value = Locked<Double>(0)
    init() {}

    /// Adds `amount` (must be ≥ 0; negative amounts are ignored, a counter never goes down).
    public func add(_ amount: Double = 1) {
        guard amount >= 0 else { return }
        value.withLock { $0 += amount }
    }
    public func increment() { add(1) }
    public var current: Double { value.withLock { $0 } }
}

/// A value that goes up and down (Prometheus `gauge`). Threading: any thread; never allocates.
public final class Gauge: Sendable {
    private let value = Locked<Double>(0)
    init() {}

    public func set(_ newValue: Double) { value.withLock { $0 = newValue } }
    public func add(_ amount: Double) { value.withLock { $0 += amount } }
    public var current: Double { value.withLock { $0 } }
}

/// Counts observations into fixed buckets (Prometheus `histogram`, cumulative `le` buckets plus `_sum`, `_count`).
/// Threading: any thread; `observe` never allocates.
public final class Histogram: Sendable {
    /// Upper bounds, ascending; `+Inf` is implicit.
    public let upperBounds: [Double]
    private struct State {
        var bucketCounts: [UInt64]
        var sum = 0.0
        var count: UInt64 = 0
    }
    private let state: Locked<State>

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds
        state = Locked(State(bucketCounts: Array(repeating: 0, count: upperBounds.count + 1)))
    }

    /// Records one observation (NaN is ignored).
    public func observe(_ value: Double) {
        guard !value.isNaN else { return }
        var index = upperBounds.count
        for (i, bound) in upperBounds.enumerated() where value <= bound {
            index = i
            break
        }
        state.withLock { state in
            state.bucketCounts[index] += 1
            state.sum += value
            state.count += 1
        }
    }

    /// Cumulative counts per bound (last is `+Inf`), sum and count, read atomically together.
    public func snapshot() -> (cumulative: [UInt64], sum: Double, count: UInt64) {
        state.withLock { state in
            var running: UInt64 = 0
            let cumulative = state.bucketCounts.map {
                running += $0; return running
            }
            return (cumulative, state.sum, state.count)
        }
    }
}

/// A set of named metrics rendered in the Prometheus text exposition format (version 0.0.4).
///
/// Register metrics once at start-up (registration allocates and locks); update them from any thread without
/// allocating; `render()` is called by the HTTP server. Names must match `[a-zA-Z_:][a-zA-Z0-9_:]*`, label names
/// `[a-zA-Z_][a-zA-Z0-9_]*` (checked by precondition: they are written in code, not taken from input).
public final class MetricsRegistry: Sendable {
    enum Metric: Sendable {
        case counter(Counter), gauge(Gauge), histogram(Histogram)
    }
    struct Family: Sendable {
        let name: String
        let help: String
        let type: String
        var members: [(labels: [(String, String)], metric: Metric)]
    }
    private let families = Locked<[Family]>([])

    public init() {}

    public func counter(_ name: String, help: String, labels: [(String, String)] = []) -> Counter {
        let counter = Counter()
        register(name, help: help, type: "counter", labels: labels, .counter(counter))
        return counter
    }

    public func gauge(_ name: String, help: String, labels: [(String, String)] = []) -> Gauge {
        let gauge = Gauge()
        register(name, help: help, type: "gauge", labels: labels, .gauge(gauge))
        return gauge
    }

    public func histogram(_ name: String, help: String, upperBounds: [Double], labels: [(String, String)] = [])
        -> Histogram
    {
        precondition(zip(upperBounds, upperBounds.dropFirst()).allSatisfy { $0 < $1 }, "bucket bounds must ascend")
        let histogram = Histogram(upperBounds: upperBounds.filter { $0.isFinite })
        register(name, help: help, type: "histogram", labels: labels, .histogram(histogram))
        return histogram
    }

    private func register(_ name: String, help: String, type: String, labels: [(String, String)], _ metric: Metric) {
        precondition(Self.isValidName(name, allowColon: true), "bad metric name \(name)")
        precondition(
            labels.allSatisfy { Self.isValidName($0.0, allowColon: false) && $0.0 != "le" },
            "bad label name in \(name)")
        families.withLock { families in
            if let index = families.firstIndex(where: { $0.name == name }) {
                precondition(families[index].type == type, "metric \(name) registered with two types")
                families[index].members.append((labels, metric))
            } else {
                families.append(Family(name: name, help: help, type: type, members: [(labels, metric)]))
            }
        }
    }

    static func isValidName(_ name: String, allowColon: Bool) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII
                && (("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || $0 == "_" || (allowColon && $0 == ":"))
        }
    }

    /// The whole registry in the Prometheus text format: `# HELP`, `# TYPE`, then one line per sample.
    public func render() -> String {
        let snapshot = families.withLock { $0 }
        var text = ""
        for family in snapshot {
            text += "# HELP \(family.name) \(Self.escapeHelp(family.help))\n"
            text += "# TYPE \(family.name) \(family.type)\n"
            for member in family.members {
                switch member.metric {
                case .counter(let counter):
                    text += "\(family.name)\(Self.labelText(member.labels)) \(Self.format(counter.current))\n"
                case .gauge(let gauge):
                    text += "\(family.name)\(Self.labelText(member.labels)) \(Self.format(gauge.current))\n"
                case .histogram(let histogram):
                    let (cumulative, sum, count) = histogram.snapshot()
                    for (i, bound) in (histogram.upperBounds + [.infinity]).enumerated() {
                        let labels = member.labels + [("le", Self.format(bound))]
                        text += "\(family.name)_bucket\(Self.labelText(labels)) \(cumulative[i])\n"
                    }
                    text += "\(family.name)_sum\(Self.labelText(member.labels)) \(Self.format(sum))\n"
                    text += "\(family.name)_count\(Self.labelText(member.labels)) \(count)\n"
                }
            }
        }
        return text
    }

    /// A sample value as Prometheus writes it: integers without a fraction, `+Inf`, `-Inf`, `NaN`.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func labelText(_ labels: [(String, String)]) -> String {
        if labels.isEmpty { return "" }
        return "{" + labels.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
    }

    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for ch in value {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(ch)
            }
        }
        return out
    }

    static func escapeHelp(_ value: String) -> String {
        value.replacingBackslashesAndNewlines()
    }
}

extension String {
    fileprivate func replacingBackslashesAndNewlines() -> String {
        var out = ""
        for ch in self {
            switch ch {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(ch)
            }
        }
        return out
    }
}
