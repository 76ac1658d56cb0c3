/// A strict reader of the Prometheus text exposition format (0.0.4), for checking `/metrics` output in tests.
struct PrometheusText {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    var types: [String: String] = [:]
    var helps: [String: String] = [:]
    var samples: [Sample] = []

    struct ParseError: Error, CustomStringConvertible {
        let line: Int
        let message: String
        var description: String { "metrics line \(line): \(message)" }
    }

    static func isName(_ text: Substring) -> Bool {
        guard let first = text.first, !first.isNumber else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    init(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw ParseError(line: 0, message: "does not end in a newline") }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let number = index + 1
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3)
                guard parts.count >= 3, parts[0] == "#", Self.isName(parts[2]) else {
                    throw ParseError(line: number, message: "bad comment '\(line)'")
                }
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3])
                    else { throw ParseError(line: number, message: "bad TYPE") }
                    guard types[String(parts[2])] == nil else { throw ParseError(line: number, message: "TYPE twice") }
                    types[String(parts[2])] = String(parts[3])
                } else if parts[1] == "HELP" {
                    helps[String(parts[2])] = parts.count == 4 ? String(parts[3]) : ""
                }
                continue
            }
            samples.append(try Self.sample(line, number: number))
        }
    }

    private static func sample(_ line: Substring, number: Int) throws -> Sample {
        var rest = line[...]
        let nameEnd = rest.firstIndex(where: { $0 == "{" || $0 == " " }) ?? rest.endIndex
        let name = rest[..<nameEnd]
        guard isName(name) else { throw ParseError(line: number, message: "bad metric name in '\(line)'") }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let eq = rest.firstIndex(of: "=") else {
                    throw ParseError(line: number, message: "label without =")
                }
                let labelName = rest[..<eq]
                guard isName(labelName), !labelName.contains(":") else {
                    throw ParseError(line: number, message: "bad label name")
                }
                rest = rest[rest.index(after: eq)...]
                guard rest.first == "\"" else { throw ParseError(line: number, message: "label value not quoted") }
                rest = rest.dropFirst()
                var value = ""
                while true {
                    guard let ch = rest.first else { throw ParseError(line: number, message: "unterminated label") }
                    rest = rest.dropFirst()
                    if ch == "\"" { break }
                    if ch == "\\" {
                        guard let escaped = rest.first else { throw ParseError(line: number, message: "bad escape") }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw ParseError(line: number, message: "bad escape \\\(escaped)")
                        }
                    } else {
                        value.append(ch)
                    }
                }
                labels[String(labelName)] = value
                if rest.first == "," { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw ParseError(line: number, message: "no space before the value") }
        let fields = rest.dropFirst().split(separator: " ")
        guard fields.count == 1 || fields.count == 2 else { throw ParseError(line: number, message: "bad value part") }
        let valueText = fields[0]
        let value: Double
        switch valueText {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let parsed = Double(valueText) else {
                throw ParseError(line: number, message: "bad value \(valueText)")
            }
            value = parsed
        }
        return Sample(name: String(name), labels: labels, value: value)
    }

    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first(where: { $0.name == name && $0.labels == labels })?.value
    }
}
