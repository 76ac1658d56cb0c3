import ColorcamCore
import Stream

/// A JSON value as the trace reader sees it: numbers without a fraction or exponent stay exact integers.
///
/// Values are immutable and `Sendable`. `jsonText` writes compact JSON with object keys sorted, so the same value
/// always renders the same bytes (the `trace-report --json` output relies on that).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value as an integer: integers as they are, finite doubles rounded down; nil for anything else.
    public var int64: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value):
            guard value.isFinite, value >= -9.2e18, value <= 9.2e18 else { return nil }
            return Int64(value.rounded(.down))
        default: return nil
        }
    }

    /// The value as a double: integers and doubles; nil for anything else.
    public var double: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// Compact JSON text, object keys in ascending order; non-finite doubles become `null`.
    public var jsonText: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value):
            if !value.isFinite {
                out += "null"
            } else if value == value.rounded(), abs(value) < 1e15 {
                out += String(Int64(value))
            } else {
                out += String(value)
            }
        case .string(let value): JSONValue.writeString(value, to: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                JSONValue.writeString(key, to: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ text: String, to out: inout String) { JSONText.appendQuoted(text, to: &out) }
}
