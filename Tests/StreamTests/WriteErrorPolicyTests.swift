import ColorcamCore
import Testing
import TraceAnalysis

@testable import Stream

/// A sink whose writes fail from the `failAt`-th (0-based) on with ENOSPC, recording what was called.
private final class ScriptedSink: FrameSink {
    let failAt: Int
    var writes = 0
    var finished = false
    var aborted = false

    init(failAt: Int) { self.failAt = failAt }

    func write(_ frame: FrameBuffer) throws {
        if writes >= failAt {
            throw StreamError(.ioError, file: "out.y4m", frame: writes, "write failed: No space left on device")
        }
        writes += 1
    }
    func finish() throws { finished = true }
    func abort() { aborted = true }
}

private let frame = FrameBuffer(geometry: FrameGeometry(widthPx: 4, heightPx: 2, chroma: .yuv420(.jpeg)))

@Test(arguments: [0, 1, 3])
func stopRethrowsTheFirstWriteError(failAt: Int) throws {
    let inner = ScriptedSink(failAt: failAt)
    let sink = WriteErrorPolicySink(inner, policy: .stop)
    for _ in 0..<failAt { try sink.write(frame) }
    #expect(throws: StreamError.self) { try sink.write(frame) }
    #expect(sink.abandonment == nil)
    #expect(inner.writes == failAt)
}

@Test(arguments: [0, 1, 3])
func continueAbandonsTheOutputAndSkipsLaterFrames(failAt: Int) throws {
    let inner = ScriptedSink(failAt: failAt)
    let sink = WriteErrorPolicySink(inner, policy: .continue)
    for _ in 0..<(failAt + 5) { try sink.write(frame) }
    try sink.finish()
    #expect(inner.aborted)
    #expect(!inner.finished)  // never published
    #expect(sink.abandonment?.framesWritten == failAt)
    #expect(sink.abandonment?.error.message.contains("No space left on device") == true)
}

@Test(arguments: [WriteErrorPolicy.stop, .continue])
func anotherWritersFailureStopsOnlyUnderStop(policy: WriteErrorPolicy) throws {
    let inner = ScriptedSink(failAt: .max)
    let sink = WriteErrorPolicySink(inner, policy: policy)
    try sink.write(frame)
    sink.fail(StreamError(.ioError, file: "t.json", "trace write failed"))
    if policy == .stop {
        #expect(throws: StreamError.self) { try sink.write(frame) }
        #expect(throws: StreamError.self) { try sink.finish() }
        #expect(inner.aborted && !inner.finished)
    } else {
        try sink.write(frame)
        try sink.finish()
        #expect(inner.writes == 2 && inner.finished && !inner.aborted)
    }
}

@Test func traceUnderItsNameHasItsHeaderAndNoTemporaryIsLeft() throws {
    let dir = try TemporaryDirectory()
    let path = dir.file("t.json")
    let trace = try TraceWriter(path: path, processName: "test", config: [("command", .string("test"))])
    #expect(try dir.listing() == ["t.json"])
    let bytes = try TraceReader.readFile(path)
    #expect(String(decoding: bytes, as: UTF8.self).contains(#""name":"config""#))
    try trace.close(atNs: 0, summary: [])
    #expect(trace.writeError == nil)
}
