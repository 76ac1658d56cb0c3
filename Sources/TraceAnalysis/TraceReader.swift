import ColorcamCore
import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// What loading a trace found besides the events: size, form and any truncation.
public struct TraceLoadInfo: Sendable, Equatable {
    /// A trailing event object the file ends inside of (a process killed mid-write).
    public struct PartialEvent: Sendable, Equatable {
        public var byteOffset: Int
        public var byteCount: Int
    }

    public enum Form: String, Sendable {
        /// `[ {…}, {…} ]`, what colorcam writes.
        case array
        /// `{"traceEvents": [ … ], …}`, what some other tools write.
        case object
    }

    public var file: String
    public var byteCount: Int
    public var form: Form
    /// Complete event objects read.
    public var eventCount: Int
    /// The events array never saw its closing `]` (the file ends first).
    public var closingBracketMissing: Bool
    /// Set when the file ends inside an event, which is then ignored.
    public var partialEvent: PartialEvent?
    /// Object form only: the events array is complete but the file ends before the object's closing `}`.
    public var closingBraceMissing = false

    /// One line describing truncation, or nil for a complete file, e.g.
    /// `trace truncated: closing ] missing; partial final event (37 bytes at byte 123456) ignored`.
    public var truncationNote: String? {
        if closingBraceMissing { return "trace truncated after its events array: closing } missing (all events read)" }
        guard closingBracketMissing else { return nil }
        var note = "trace truncated: closing ] missing"
        if let partialEvent {
            note += "; partial final event (\(partialEvent.byteCount) bytes at byte \(partialEvent.byteOffset)) ignored"
        }
        return note
    }
}

/// Reads Chrome-trace JSON tolerantly and streams its events.
///
/// Accepts the array form (colorcam's line-per-event file or any well-formed array) and the `{"traceEvents": [...]}`
/// object form. A file that ends early — no closing `]`, possibly a partial last event — is loaded up to its last
/// complete event and the damage is reported in `TraceLoadInfo`. Anything else that is not valid JSON, or not an
/// array of event objects, is a `.badData` `StreamError` naming the file and byte offset.
///
/// Threading: stateless; safe from any thread. Memory: the file bytes plus one event at a time.
public enum TraceReader {
    /// Reads the whole file.
    /// - Throws: `StreamError` `.missingInput` when the file does not exist or cannot be read.
    public static func readFile(_ path: String) throws -> [UInt8] {
        let file: FileDescriptor
        do { file = try FileDescriptor.open(path, O_RDONLY) } catch {
            throw StreamError(.missingInput, file: path, "cannot open trace: \(error)")
        }
        defer { try? file.close() }
        let status: stat
        do { status = try file.status() } catch {
            throw StreamError(.missingInput, file: path, "cannot stat trace: \(error)")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw StreamError(.missingInput, file: path, "not a regular file")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(status.st_size))
        do { try file.readAll(into: &bytes) } catch {
            throw StreamError(.missingInput, file: path, byteOffset: Int64(bytes.count), "read failed: \(error)")
        }
        return bytes
    }

    /// Parses `bytes` (the contents of `file`) and calls `onEvent` for each complete event object, in file order.
    /// - Throws: `StreamError` `.badData` for input that is not a trace.
    public static func parse(
        _ bytes: [UInt8], file: String,
        onEvent: (TraceFileEvent) -> Void
    ) throws -> TraceLoadInfo {
        try bytes.withUnsafeBufferPointer { buffer in
            var parser = TraceJSONParser(bytes: buffer)
            var info = TraceLoadInfo(
                file: file, byteCount: bytes.count, form: .array, eventCount: 0,
                closingBracketMissing: false, partialEvent: nil)
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { parser.offset = 3 }
            parser.skipWhitespace()
            guard !parser.atEnd else {
                throw StreamError(.badData, file: file, byteOffset: Int64(parser.offset), "empty file, not a trace")
            }
            switch buffer[parser.offset] {
            case UInt8(ascii: "["):
                try readEventArray(&parser, info: &info, onEvent: onEvent)
            case UInt8(ascii: "{"):
                info.form = .object
                try readTraceObject(&parser, info: &info, onEvent: onEvent)
            default:
                let found = parser.describeByte(at: parser.offset)
                throw StreamError(
                    .badData, file: file, byteOffset: Int64(parser.offset),
                    "not a JSON trace: expected '[' or '{', found \(found)")
            }
            if !info.closingBracketMissing && !info.closingBraceMissing {
                parser.skipWhitespace()
                if !parser.atEnd {
                    throw StreamError(
                        .badData, file: file, byteOffset: Int64(parser.offset),
                        "unexpected \(parser.describeByte(at: parser.offset)) after the end of the trace")
                }
            }
            return info
        }
    }

    /// Reads the events array at `parser.offset` (a `[`). Sets `closingBracketMissing`/`partialEvent` when the
    /// input ends first.
    private static func readEventArray(
        _ parser: inout TraceJSONParser, info: inout TraceLoadInfo,
        onEvent: (TraceFileEvent) -> Void
    ) throws(StreamError) {
        let file = info.file
        parser.offset += 1  // [
        var expectingEvent = true
        while true {
            parser.skipWhitespace()
            guard !parser.atEnd else {
                info.closingBracketMissing = true
                return
            }
            let start = parser.offset
            let byte = parser.bytes[start]
            if byte == UInt8(ascii: "]") {
                parser.offset += 1
                return
            }
            if !expectingEvent {
                guard byte == UInt8(ascii: ",") else {
                    throw StreamError(
                        .badData, file: file, byteOffset: Int64(start),
                        "expected ',' or ']' after event \(info.eventCount), "
                            + "found \(parser.describeByte(at: start))")
                }
                parser.offset += 1
                expectingEvent = true
                continue
            }
            guard byte == UInt8(ascii: "{") else {
                throw StreamError(
                    .badData, file: file, byteOffset: Int64(start),
                    "element \(info.eventCount) of the events array is not an event object "
                        + "(found \(parser.describeByte(at: start)))")
            }
            let event: TraceFileEvent
            do {
                event = try TraceFileEvent.parse(&parser, byteOffset: start)
            } catch {
                switch error {
                case .endOfInput:
                    info.closingBracketMissing = true
                    info.partialEvent = .init(byteOffset: start, byteCount: parser.bytes.count - start)
                    return
                case .syntax(let offset, let message):
                    throw StreamError(
                        .badData, file: file, byteOffset: Int64(offset),
                        "event \(info.eventCount): \(message)")
                }
            }
            info.eventCount += 1
            onEvent(event)
            expectingEvent = false
        }
    }

    /// Reads `{"traceEvents": [...], ...}`; other keys are parsed and ignored. A file cut after the events array is
    /// complete sets `closingBraceMissing`.
    private static func readTraceObject(
        _ parser: inout TraceJSONParser, info: inout TraceLoadInfo,
        onEvent: (TraceFileEvent) -> Void
    ) throws(StreamError) {
        let file = info.file
        var sawEvents = false
        do throws(TraceJSONFailure) {
            try parser.parseMembers(depth: 1) { key, parser throws(TraceJSONFailure) in
                guard key == "traceEvents" else {
                    _ = try parser.parseValue(depth: 1)
                    return
                }
                guard try parser.peek() == UInt8(ascii: "[") else {
                    throw .syntax(offset: parser.offset, "traceEvents is not an array")
                }
                sawEvents = true
                do throws(StreamError) {
                    try readEventArray(&parser, info: &info, onEvent: onEvent)
                } catch {
                    throw .syntax(offset: Int(error.byteOffset ?? 0), error.message)
                }
            }
            guard sawEvents else { throw .syntax(offset: parser.offset - 1, "JSON object has no traceEvents array") }
        } catch {
            switch error {
            case .endOfInput:
                guard sawEvents else {
                    throw StreamError(
                        .badData, file: file, byteOffset: Int64(parser.bytes.count),
                        "trace object ends before its traceEvents array")
                }
                if !info.closingBracketMissing { info.closingBraceMissing = true }
            case .syntax(let offset, let message):
                throw StreamError(.badData, file: file, byteOffset: Int64(offset), message)
            }
        }
    }
}
