import ColorcamCore
import Stream
import Testing

@testable import TraceAnalysis

private func load(_ text: String) throws -> (TraceLoadInfo, [TraceFileEvent]) {
    var events: [TraceFileEvent] = []
    let info = try TraceReader.parse(Array(text.utf8), file: "t.json") { events.append($0) }
    return (info, events)
}

/// Expects `.badData` naming `t.json` and, when given, the byte offset.
private func expectBadData(
    _ text: String, at offset: Int64? = nil, mentioning words: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        _ = try TraceReport(bytes: Array(text.utf8), file: "t.json")
        Issue.record("expected badData for \(text.prefix(40))", sourceLocation: sourceLocation)
    } catch let error as StreamError {
        #expect(error.kind == .badData, sourceLocation: sourceLocation)
        #expect(error.kind.exitCode == 65, sourceLocation: sourceLocation)
        #expect(error.description.hasPrefix("t.json: "), sourceLocation: sourceLocation)
        #expect(!error.description.contains("\n"), sourceLocation: sourceLocation)
        if let offset { #expect(error.byteOffset == offset, "\(error)", sourceLocation: sourceLocation) }
        if let words { #expect(error.description.contains(words), "\(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

@Test func completeTraceHasNoTruncation() throws {
    let (info, events) = try load(TraceBuilder.pipeline(frames: 3, inferUs: 1_000).text())
    #expect(info.eventCount == 13)
    #expect(events.count == 13)
    #expect(!info.closingBracketMissing)
    #expect(info.truncationNote == nil)
    #expect(events[1].name == "capture" && events[1].phase == "X" && events[1].durUs == 200)
}

@Test func missingClosingBracketIsTolerated() throws {
    let builder = TraceBuilder.pipeline(frames: 3, inferUs: 1_000)
    let (info, events) = try load(builder.text(closed: false))
    #expect(events.count == 13)
    #expect(info.closingBracketMissing)
    #expect(info.partialEvent == nil)
    #expect(info.truncationNote == "trace truncated: closing ] missing")
    // Cut right after a comma too.
    let (commaInfo, commaEvents) = try load(builder.text(closed: false) + ",")
    #expect(commaEvents.count == 13 && commaInfo.closingBracketMissing)
}

@Test func partialFinalLineIsIgnoredAndLocated() throws {
    let complete = TraceBuilder.pipeline(frames: 3, inferUs: 1_000).text(closed: false)
    let partial = #"{"name":"output","ph":"X","ts":99"#
    for cut in [partial, #"{"name":"out"#, #"{"name":"output","ph":"X","args":{"simulated":tr"#, "{"] {
        let (info, events) = try load(complete + "," + cut)
        #expect(events.count == 13)
        #expect(info.partialEvent == .init(byteOffset: complete.utf8.count + 1, byteCount: cut.utf8.count))
        #expect(
            info.truncationNote == "trace truncated: closing ] missing; partial final event "
                + "(\(cut.utf8.count) bytes at byte \(complete.utf8.count + 1)) ignored")
    }
    let report = try TraceReport(bytes: Array((complete + "," + partial).utf8), file: "t.json")
    #expect(report.framesOutput == 3)
    #expect(report.warnings.first?.hasPrefix("trace truncated: closing ] missing; partial final event") == true)
}

@Test func cutInsideTheFirstEventIsBadData() {
    expectBadData(#"[{"name":"config","ph":"i","ar"#, at: 1, mentioning: "truncated inside its first event")
}

@Test func garbageIsBadData() {
    expectBadData("", mentioning: "empty file")
    expectBadData("   \n", mentioning: "empty file")
    expectBadData("GIF89a\u{1}\u{2}", at: 0, mentioning: "not a JSON trace")
    expectBadData("[1, 2, 3]", at: 1, mentioning: "not an event object")
    expectBadData(#"{"foo": [1]}"#, mentioning: "no traceEvents")
    expectBadData(#"[{"name":"foo","ph":"X","ts":1}]"#, mentioning: "no colorcam events")
    expectBadData("[]", mentioning: "no colorcam events")
    // A bad byte in the middle is an error at that byte, not a truncation.
    let good = #"[{"name":"capture","ph":"X","ts":0,"dur":1}"#
    expectBadData(good + "\n,{\"name\" 5}\n]\n", at: Int64(good.utf8.count + 10), mentioning: "expected ':'")
    expectBadData(good + "\n{\"name\":\"capture\"}\n]", at: Int64(good.utf8.count + 1), mentioning: "expected ','")
    expectBadData(good + "]\n]", at: Int64(good.utf8.count + 2), mentioning: "after the end of the trace")
    expectBadData(#"[{"name":"capture","ph":"X","ts":01x}]"#, mentioning: "expected ',' or '}'")
    expectBadData("[{\"name\":\"cap\u{1}ture\"}]", at: 13, mentioning: "control character")
    // Deep nesting is refused, not a stack overflow.
    expectBadData(#"[{"name":"capture","args":"# + String(repeating: "[", count: 100_000), mentioning: "nested deeper")
}

@Test func missingTraceFileIsMissingInput() {
    #expect {
        _ = try TraceReport(contentsOf: "/nonexistent/trace.json")
    } throws: { error in
        guard let error = error as? StreamError else { return false }
        return error.kind == .missingInput && error.kind.exitCode == 66
            && error.description.hasPrefix("/nonexistent/trace.json: ")
    }
}

@Test func objectFormAndPrettyArraysAreAccepted() throws {
    let events =
        #"[{"name":"capture","ph":"X","ts":1,"dur":2,"args":{"frame":0}},{"name":"output","ph":"X","ts":5,"dur":1}]"#
    let object = #"{"displayTimeUnit":"ms","otherData":{"v":[1,{"a":null}]},"traceEvents":"# + events + #","x":true}"#
    let (info, parsed) = try load(object)
    #expect(info.form == .object)
    #expect(parsed.count == 2)
    #expect(!info.closingBracketMissing)
    // Truncated inside traceEvents: tolerated like the array form.
    let cut = #"{"traceEvents":[{"name":"capture","ph":"X","ts":1,"dur":2},{"name":"outp"#
    let (cutInfo, cutEvents) = try load(cut)
    #expect(cutEvents.count == 1)
    #expect(cutInfo.partialEvent == .init(byteOffset: cut.utf8.count - 13, byteCount: 13))  // {"name":"outp
    // Cut after the events array: every event is there, and the missing } is reported.
    let (tailInfo, tailEvents) = try load(#"{"traceEvents":"# + events + #","meta":{"a":[1,"#)
    #expect(tailEvents.count == 2)
    #expect(tailInfo.truncationNote == "trace truncated after its events array: closing } missing (all events read)")
    #expect(!tailInfo.closingBracketMissing)
    let (_, ignoredTail) = try load(#"{"traceEvents":"# + events + "}\n")
    #expect(ignoredTail.count == 2)
    // Pretty-printed, several events per line or one field per line, as other tools write.
    let pretty =
        "[\n  {\n    \"name\": \"capture\",\n    \"ph\": \"X\",\n    \"ts\": 1.75,\n    \"dur\": 2\n  },\n"
        + "  {\"name\": \"output\", \"ph\": \"X\", \"ts\": 3e1, \"dur\": 1}, {\"name\": \"output\", \"ph\": \"X\", \"ts\": -0}\n]\n"
    let (_, prettyEvents) = try load("\u{FEFF}" + pretty)
    #expect(prettyEvents.map(\.tsUs) == [1, 30, 0])
    let report = try TraceReport(bytes: Array(pretty.utf8), file: "p.json")
    #expect(report.framesCaptured == 1 && report.framesOutput == 2)
}

@Test func stringsAndNumbersDecode() throws {
    let text =
        #"[{"name":"cap\u0074ure","ph":"X","ts":9007199254740992,"args":{"s":"a\"b\\c\/\n\ud83d\ude00é","big":1e300,"neg":-42,"huge":99999999999999999999,"exact":9007199254740993}}]"#
    let (_, events) = try load(text)
    let event = try #require(events.first)
    #expect(event.name == "capture")
    #expect(event.tsUs == 9_007_199_254_740_992)
    #expect(event.args["exact"] == .int(9_007_199_254_740_993))  // exact, not through Double
    #expect(event.args["s"] == .string("a\"b\\c/\n😀é"))
    #expect(event.args["big"] == .double(1e300))
    #expect(event.args["neg"] == .int(-42))
    #expect(event.args["huge"]?.double == 1e20)
    #expect(
        JSONValue.object(["b": .array([.null, .bool(true)]), "a": .string("x\ty")]).jsonText
            == #"{"a":"x\ty","b":[null,true]}"#)
}

@Test func extremeNumbersDoNotTrap() throws {
    // Times near Int64.max would overflow ts + dur and friends: they read as absent (malformed), not a crash.
    let max = Int64.max, min = Int64.min
    var builder = TraceBuilder()
    builder.capture(frame: 0, tsUs: 0)
    builder.raw(#"{"name":"infer","ph":"X","ts":\#(max),"dur":\#(max),"args":{"requested_ts_us":\#(min)}}"#)
    builder.raw(#"{"name":"infer","ph":"X","ts":10,"dur":\#(max),"args":{"requested_ts_us":\#(min),"lag_us":\#(max)}}"#)
    builder.raw(#"{"name":"output","ph":"X","ts":\#(max - 1),"dur":5,"args":{"frame":0}}"#)
    builder.raw(#"{"name":"output","ph":"X","ts":20,"dur":1e300,"args":{"frame":0,"latency_us":\#(min)}}"#)
    let report = try builder.report()
    #expect(report.framesOutput == 1)
    #expect(report.inferenceCount == 1)
    #expect(report.lag == nil)
    #expect(report.warnings.contains { $0.contains("malformed") })
}

@Test func everyPrefixAndCorruptionLoadsOrIsBadData() throws {
    var builder = TraceBuilder.pipeline(frames: 3, inferUs: 40_000)
    builder.drop(frame: 9, tsUs: 99, reason: "late")
    let bytes = Array(builder.text().utf8)
    let firstEventEnd = bytes.firstIndex(of: UInt8(ascii: "\n"))!
    func outcome(_ input: [UInt8]) -> String {
        do {
            let report = try TraceReport(bytes: input, file: "t.json")
            return report.load.closingBracketMissing ? "truncated" : "complete"
        } catch let error as StreamError {
            return error.kind == .badData ? "badData" : "other \(error)"
        } catch {
            return "other \(error)"
        }
    }
    for length in 0...bytes.count {
        let result = outcome(Array(bytes[..<length]))
        if length < firstEventEnd {
            #expect(result == "badData", "prefix \(length)")  // nothing complete yet
        } else if length < bytes.count - 1 {
            #expect(result == "truncated", "prefix \(length)")
        } else {
            #expect(result == "complete", "prefix \(length)")  // `]` present, maybe without its newline
        }
    }
    for position in bytes.indices {
        for replacement in [UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "]"), 0xFF, 0x00] {
            var corrupted = bytes
            corrupted[position] = replacement
            #expect(!outcome(corrupted).hasPrefix("other"), "byte \(position) → \(replacement)")
        }
    }
}
