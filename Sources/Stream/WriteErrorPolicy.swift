import ColorcamCore
import Synchronization

/// What a run does when writing its output or its trace fails (ENOSPC, EIO, EPIPE, …): the CLI's
/// `--on-write-error stop|continue`.
///
/// Either way the process exits 74 and names the file and the error. Nothing left behind pretends to be whole:
/// a failed `.y4m` output's temporary file is removed (never renamed into place); a failed trace is left clearly
/// truncated (no closing `]`, no `summary` event; `trace-report` loads it up to its last whole event and says so).
public enum WriteErrorPolicy: String, Sendable, CaseIterable {
    /// The first write error stops the run (default): the output is abandoned and the pipeline stops.
    case stop
    /// The failing output is abandoned (its temporary file removed, later frames not written) and the pipeline
    /// runs on; the trace's `summary` and the run summary say the output was abandoned.
    case `continue`
}

/// Wraps the run's output sink and applies a `WriteErrorPolicy` to its write errors, and lets another failing
/// writer (the trace) stop the run without publishing the output.
///
/// - `stop`: a write error is rethrown (the pipeline fails and aborts the sink). `fail(_:)` from another writer
///   makes the next `write` or `finish` throw that error, after aborting the inner sink, so a run stopped by a
///   failed trace never renames a partial output into place.
/// - `continue`: the first write error aborts the inner sink (its temporary file is removed) and is remembered in
///   `abandonment`; later writes are skipped. `fail(_:)` does nothing (the other writer is abandoned alone).
///
/// Threading: `write`/`finish`/`abort` from the output thread (as any `FrameSink`); `fail(_:)` and `abandonment`
/// from any thread.
public final class WriteErrorPolicySink: FrameSink, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `inner` is used only by the output thread (write/finish/abort); the state
    // other threads touch lives in `state`, a Mutex.
    public let inner: FrameSink
    public let policy: WriteErrorPolicy

    /// Why and where the output was given up.
    public struct Abandonment: Sendable {
        /// The write error (its message names the file and the errno text).
        public var error: StreamError
        /// Frames written before the failure.
        public var framesWritten: Int
    }

    private struct State {
        var abandonment: Abandonment?
        var failedElsewhere: StreamError?
        var framesWritten = 0
    }
    private let state = Locked(State())

    public init(_ inner: FrameSink, policy: WriteErrorPolicy) {
        self.inner = inner
        self.policy = policy
    }

    /// Set once the output was abandoned under `.continue` (nil otherwise). Any thread.
    public var abandonment: Abandonment? { state.withLock { $0.abandonment } }

    /// Another writer (the trace) failed. Under `.stop` the next `write`/`finish` aborts the output and throws
    /// `error`; under `.continue` nothing changes. Any thread.
    public func fail(_ error: StreamError) {
        guard policy == .stop else { return }
        state.withLock { if $0.failedElsewhere == nil { $0.failedElsewhere = error } }
    }

    public func write(_ frame: FrameBuffer) throws {
        let (abandoned, elsewhere) = state.withLock { ($0.abandonment != nil, $0.failedElsewhere) }
        if let elsewhere {
            inner.abort()
            throw elsewhere
        }
        if abandoned { return }
        do {
            try inner.write(frame)
            state.withLock { $0.framesWritten += 1 }
        } catch let error as StreamError where error.kind == .ioError && policy == .continue {
            inner.abort()
            state.withLock { $0.abandonment = Abandonment(error: error, framesWritten: $0.framesWritten) }
        }
    }

    public func finish() throws {
        let (abandoned, elsewhere) = state.withLock { ($0.abandonment != nil, $0.failedElsewhere) }
        if let elsewhere {
            inner.abort()
            throw elsewhere
        }
        if abandoned { return }
        try inner.finish()
    }

    public func abort() { inner.abort() }
}
