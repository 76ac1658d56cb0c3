import ColorcamCore

/// A usage error (exit 64) with a one-line message.
struct UsageError: ColorcamError {
    let message: String
    var kind: FailureKind { .usage }
    var description: String { message }
    init(_ message: String) { self.message = message }
}

/// A small command-line parser: `--name value`, `--name=value`, boolean `--flag`, and positionals.
///
/// Each command declares its options up front; anything undeclared is a usage error naming it.
struct Arguments {
    private(set) var positionals: [String] = []
    /// Every value given for each valued option, in order (an option given twice: `string` is the last).
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    let command: String

    /// - Parameters:
    ///   - valued: option names (without `--`) that take a value.
    ///   - boolean: option names that take none.
    init(_ args: ArraySlice<String>, command: String, valued: Set<String>, boolean: Set<String> = []) throws {
        self.command = command
        var iterator = args.makeIterator()
        var onlyPositionals = false
        while let arg = iterator.next() {
            if onlyPositionals || !arg.hasPrefix("--") || arg == "-" {
                positionals.append(arg)
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            var name = String(arg.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if valued.contains(name) {
                guard let value = inlineValue ?? iterator.next() else {
                    throw UsageError("\(command): option --\(name) needs a value")
                }
                values[name, default: []].append(value)
            } else if boolean.contains(name) {
                if inlineValue != nil { throw UsageError("\(command): option --\(name) takes no value") }
                flags.insert(name)
            } else {
                throw UsageError("\(command): unknown option --\(name) (see 'colorcam \(command) --help')")
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func string(_ name: String) -> String? { values[name]?.last }
    /// Every value of a repeatable option, in order (empty when not given).
    func strings(_ name: String) -> [String] { values[name] ?? [] }

    func int(_ name: String, default defaultValue: Int? = nil, range: ClosedRange<Int>? = nil) throws -> Int? {
        guard let text = string(name) else { return defaultValue }
        guard let value = Int(text) else { throw UsageError("\(command): --\(name) wants an integer, got '\(text)'") }
        if let range, !range.contains(value) {
            throw UsageError("\(command): --\(name) must be in \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
        return value
    }

    func double(_ name: String, default defaultValue: Double? = nil, min: Double? = nil) throws -> Double? {
        guard let text = string(name) else { return defaultValue }
        guard let value = Double(text), value.isFinite else {
            throw UsageError("\(command): --\(name) wants a number, got '\(text)'")
        }
        if let min, value < min { throw UsageError("\(command): --\(name) must be at least \(min), got \(text)") }
        return value
    }

    /// One of a fixed set of words.
    func choice(_ name: String, _ allowed: [String], default defaultValue: String) throws -> String {
        guard let text = string(name) else { return defaultValue }
        guard allowed.contains(text) else {
            throw UsageError("\(command): --\(name) must be one of \(allowed.joined(separator: ", ")), got '\(text)'")
        }
        return text
    }

    /// Exactly `count` positionals, else a usage error naming what is expected.
    func positionals(exactly count: Int, usage: String) throws -> [String] {
        guard positionals.count == count else {
            throw UsageError("usage: colorcam \(usage)")
        }
        return positionals
    }
}
