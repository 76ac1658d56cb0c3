import ColorcamCore

/// Sends every frame to several sinks in turn (e.g. a `.y4m` file and the live preview).
/// `finish`/`abort` reach every sink; the first error is rethrown after all were tried.
/// Threading: as `FrameSink` (the output thread).
public final class TeeSink: FrameSink {
    public let sinks: [FrameSink]

    public init(_ sinks: [FrameSink]) { self.sinks = sinks }

    public func write(_ frame: FrameBuffer) throws {
        for sink in sinks { try sink.write(frame) }
    }

    public func finish() throws {
        var first: Error?
        for sink in sinks {
            do { try sink.finish() } catch { if first == nil { first = error } }
        }
        if let first { throw first }
    }

    public func abort() { for sink in sinks { sink.abort() } }
}

/// Keeps a sink open across pipeline runs: `write` passes through, `finish`/`abort` do nothing, so a daemon that
/// restarts its pipeline (device lost and back) keeps appending to one output; the daemon finishes the inner
/// sink itself at the end.
public final class ContinuingSink: FrameSink {
    public let inner: FrameSink

    public init(_ inner: FrameSink) { self.inner = inner }

    public func write(_ frame: FrameBuffer) throws { try inner.write(frame) }
    public func finish() throws {}
    public func abort() {}
}
