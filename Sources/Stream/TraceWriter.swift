import ColorcamCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A value in the trace's `config` event.
public enum TraceValue: Sendable {
    case int(Int)
    case double(Double)
    case bool(Bool)
    case string(String)

    var json: String {
        switch self {
        case .int(let v): return String(v)
        case .double(let v): return v.isFinite ? String(v) : "null"
        case .bool(let v): return v ? "true" : "false"
        case .string(let v): return jsonString(v)
        }
    }
}

/// Quotes and escapes a string for JSON.
func jsonString(_ text: String) -> String { JSONText.quoted(text) }

/// Streams trace events to a Chrome Trace Event Format file (JSON array form; see TRACE-FORMAT.md).
///
/// Stages call `record(_:)` from any thread: it copies the fixed-size event into a preallocated ring under a
/// mutex (no allocation, no I/O). A dedicated writer thread drains the ring every `flushIntervalMs`, formats whole
/// lines and writes them with one `write(2)` per batch, so a killed process leaves only complete lines (plus the
/// missing `]`, which the format allows). If the ring fills faster than the writer drains it, events are counted
/// as lost and the count is written in the `summary` event — never silently.
///
/// Crash safety: the header (metadata + `config`) is written to `.NAME.tmp-PID` in the same directory and renamed
/// to NAME before `init` returns, so a file under the trace's own name always starts with a whole header and
/// `trace-report` loads it whenever the process is killed (a SIGKILL can cut the last line short; the reader
/// ignores that partial event and reports the truncation). Only a kill inside `init` can leave the temporary.
///
/// Write errors (ENOSPC, EIO, …): the first one is kept, `onWriteError` is called once (from the writer thread),
/// and nothing more is written — the file is left clearly truncated (no `summary`, no closing `]`) and `close`
/// throws `StreamError(.ioError)` naming the file and the errno text.
///
/// Bounded size (`rotation`): once the file holds `maxBytes`, the writer thread ends it as a whole trace (a `summary`
/// with `segment_end: true`, then `]`), renames it to a numbered segment (`trace.json` → `trace.000001.json`,
/// `trace.000002.json`, …; oldest lowest), starts a fresh `trace.json` with the same header and `config` plus
/// `segment: n+1` (written to a temporary and renamed, as at `init`), and deletes segments beyond the newest
/// `keepSegments`. Every file is a loadable trace on its own; the one under the trace's name is always the newest.
/// Disk use stays below about (keepSegments + 1) × maxBytes.
///
/// Lifecycle: `init` (file created, header + metadata + config written) → `record`… → `close(summary:)` (drains,
/// writes `summary` and `]`). `close` is idempotent.
public final class TraceWriter: TraceSink, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `ring` storage is touched only under `state`'s lock; `path` is immutable;
    // `file`, `bytesInFile`, `segment` and `drained` are used only by the writer thread (by `init` before it starts and
    // by `close` after it exited).

    /// When to start a new file, and how many finished segments to keep.
    public struct Rotation: Sendable, Equatable {
        /// Bytes after which the current file is ended and a new one started (checked after each batch).
        public var maxBytes: Int
        /// Finished segments kept on disk besides the current file; older ones are deleted.
        public var keepSegments: Int
        public init(maxBytes: Int, keepSegments: Int) {
            self.maxBytes = maxBytes
            self.keepSegments = keepSegments
        }
    }

    public let path: String
    private var file: FileDescriptor
    private let rotation: Rotation?
    private let processName: String
    private let config: [(String, TraceValue)]
    /// Bytes in the current file; the number of the current segment (1 = the first file of the run).
    private var bytesInFile = 0
    private var segment = 1
    private let capacity: Int
    private let ring: UnsafeMutablePointer<TraceEvent>
    private let drained: UnsafeMutablePointer<TraceEvent>
    private struct RingState {
        var head = 0
        var count = 0
        var lost = 0
        var closing = false
        var writeError: Int32 = 0
        var onWriteError: (@Sendable (StreamError) -> Void)?
    }
    private let state = Locked(RingState())
    private let flushIntervalNs: Int64
    private var thread: Thread?
    private let finished = Atomic<Bool>(false)

    /// Creates (truncates) the trace file and writes its header, thread names and the `config` event.
    /// - Parameters:
    ///   - config: key/values for the `config` event (see TRACE-FORMAT.md), written in the order given.
    ///   - capacity: ring size in events; at 30 fps a run makes ~10 events per frame.
    /// - Throws: `StreamError(.ioError)` when the file cannot be created.
    ///   - rotation: bound the file's size by starting numbered segments (see the type's doc); nil = one file.
    public init(
        path: String, processName: String, config: [(String, TraceValue)], capacity: Int = 1 << 15,
        flushIntervalMs: Int = 50, rotation: Rotation? = nil
    ) throws {
        self.path = path
        self.rotation = rotation
        self.processName = processName
        self.config = config
        let temporary = Self.temporaryPath(path)
        do {
            file = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
        } catch {
            throw StreamError(.ioError, file: path, "cannot create trace file: \(error)")
        }
        self.capacity = capacity
        self.flushIntervalNs = Int64(flushIntervalMs) * 1_000_000
        ring = .allocate(capacity: capacity)
        ring.initialize(repeating: TraceEvent(kind: .capture), count: capacity)
        drained = .allocate(capacity: capacity)
        drained.initialize(repeating: TraceEvent(kind: .capture), count: capacity)

        let text = Self.header(processName: processName, config: config, segment: nil, tsUs: 0)
        do {
            try writeAll(text)
            if rename(temporary, path) != 0 {
                throw StreamError(.ioError, file: path, "cannot rename the trace into place: \(Errno.current)")
            }
        } catch {
            // (deinit frees the rings: every stored property is initialised by now.)
            try? file.close()
            unlink(temporary)
            if let failure = error as? Errno {
                throw StreamError(
                    .ioError, file: path,
                    "cannot write the trace header: \(failure) (errno \(failure.code)); no trace written")
            }
            throw error
        }

        let thread = Thread { [unowned self] in self.writerLoop() }
        thread.name = "colorcam-trace"
        self.thread = thread
        thread.start()
    }

    /// `.NAME.tmp-PID` beside `path`.
    private static func temporaryPath(_ path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return directory + "." + base + ".tmp-\(getpid())"
    }

    /// `trace.json` → `trace.000007.json` (the number before a `.json` extension, else appended).
    public static func segmentPath(_ path: String, segment: Int) -> String {
        let digits = String(segment)
        let number = String(repeating: "0", count: max(0, 6 - digits.count)) + digits
        if path.hasSuffix(".json") { return String(path.dropLast(5)) + "." + number + ".json" }
        return path + "." + number
    }

    /// `[`, the metadata events and `config` (plus `segment` and `segment_start_ts_us` after a rotation), one per line.
    private static func header(
        processName: String, config: [(String, TraceValue)], segment: Int?,
        tsUs: Int64
    ) -> String {
        var header: [String] = []
        header.append(#"{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":\#(jsonString(processName))}}"#)
        for track in TraceTrack.allCases {
            header.append(
                #"{"name":"thread_name","ph":"M","pid":1,"tid":\#(track.rawValue),"args":{"name":"\#(track.name)"}}"#)
            header.append(
                #"{"name":"thread_sort_index","ph":"M","pid":1,"tid":\#(track.rawValue),"args":{"sort_index":\#(track.rawValue)}}"#
            )
        }
        var fields = config
        if let segment { fields += [("segment", .int(segment)), ("segment_start_ts_us", .int(Int(tsUs)))] }
        let args = fields.map { "\(jsonString($0.0)):\($0.1.json)" }.joined(separator: ",")
        header.append(#"{"name":"config","ph":"i","s":"g","ts":\#(tsUs),"pid":1,"tid":6,"args":{\#(args)}}"#)
        return "[" + header.joined(separator: "\n,") + "\n"
    }

    /// Ends the current file as a whole trace, moves it to its segment name, starts the next one. Writer thread.
    /// - Throws: `Errno` when a write, create or rename fails (the run's trace then stops there).
    private func rotate(atUs tsUs: Int64) throws {
        let lost = state.withLock { $0.lost }
        let tail =
            ","
            + #"{"name":"summary","ph":"i","s":"g","ts":\#(tsUs),"pid":1,"tid":6,"args":{"segment":\#(segment),"segment_end":true,"trace_events_lost":\#(lost)}}"#
            + "\n]\n"
        try writeAll(tail)
        let temporary = Self.temporaryPath(path)
        let next = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
        let finishedPath = Self.segmentPath(path, segment: segment)
        guard rename(path, finishedPath) == 0 else {
            let failure = Errno.current
            try? next.close()
            unlink(temporary)
            throw failure
        }
        try? file.close()
        file = next
        bytesInFile = 0
        segment += 1
        try writeAll(Self.header(processName: processName, config: config, segment: segment, tsUs: tsUs))
        guard rename(temporary, path) == 0 else { throw Errno.current }
        if let keep = rotation?.keepSegments, segment - 1 - keep >= 1 {
            unlink(Self.segmentPath(path, segment: segment - 1 - keep))
        }
    }

    deinit {
        ring.deallocate()
        drained.deallocate()
    }

    /// Called once, from the writer thread (or `close`'s), when the first write fails; e.g. to stop the run.
    /// Set it before the run starts. Any thread.
    public func setWriteErrorHandler(_ handler: @escaping @Sendable (StreamError) -> Void) {
        state.withLock { $0.onWriteError = handler }
    }

    /// The first write error, if any (the trace is then truncated). Any thread.
    public var writeError: StreamError? {
        let code = state.withLock { $0.writeError }
        return code == 0 ? nil : Self.writeFailure(path, code)
    }

    private static func writeFailure(_ path: String, _ code: Int32) -> StreamError {
        StreamError(
            .ioError, file: path,
            "trace write failed: \(String(cString: strerror(code))) (errno \(code)); "
                + "the trace is truncated there")
    }

    public func record(_ event: TraceEvent) {
        state.withLock { s in
            if s.count == capacity {
                s.lost += 1
                return
            }
            ring[(s.head + s.count) % capacity] = event
            s.count += 1
        }
    }

    /// Drains the ring, writes the `summary` event and the closing `]`, closes the file.
    /// - Parameter summary: extra key/values for the `summary` event (`trace_events_lost` is added).
    /// - Throws: `StreamError(.ioError)` if any write failed during the run or now.
    public func close(atNs: Int64, summary: [(String, TraceValue)]) throws {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        state.withLock { $0.closing = true }
        wake.signal()
        while thread != nil, !writerExited.load(ordering: .acquiring) { usleep(200) }
        drainOnce()
        let lost = state.withLock { $0.lost }
        var fields = summary
        fields.append(("trace_events_lost", .int(lost)))
        let args = fields.map { "\(jsonString($0.0)):\($0.1.json)" }.joined(separator: ",")
        let ts = max(0, atNs / 1000)
        var tail = "," + #"{"name":"summary","ph":"i","s":"g","ts":\#(ts),"pid":1,"tid":6,"args":{\#(args)}}"#
        tail += "\n]\n"
        let writeError = state.withLock { $0.writeError }
        var thrown: Error?
        if writeError != 0 {
            thrown = Self.writeFailure(path, writeError)
        } else {
            do { try writeAll(tail) } catch {
                thrown = Self.writeFailure(path, (error as? Errno)?.code ?? EIO)
            }
        }
        try? file.close()
        if let thrown { throw thrown }
    }

    private let writerExited = Atomic<Bool>(false)
    /// Signalled by `close` to cut the writer's sleep short.
    private let wake = DispatchSemaphore(value: 0)

    private func writerLoop() {
        while true {
            let closing = state.withLock { $0.closing }
            if closing { break }
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(flushIntervalNs)))
            drainOnce()
        }
        writerExited.store(true, ordering: .releasing)
    }

    /// Moves every queued event out of the ring and writes them as one batch.
    private func drainOnce() {
        let n: Int = state.withLock { s in
            let n = s.count
            for i in 0..<n { drained[i] = ring[(s.head + i) % capacity] }
            s.head = (s.head + n) % capacity
            s.count = 0
            return n
        }
        guard n > 0 else { return }
        // After a write error nothing more is written: the file stays cut at a line (or inside the failed one).
        if state.withLock({ $0.writeError != 0 }) { return }
        var text = ""
        text.reserveCapacity(n * 160)
        for i in 0..<n { appendLines(for: drained[i], to: &text) }
        do {
            try writeAll(text)
            if let rotation, bytesInFile >= rotation.maxBytes, !state.withLock({ $0.closing }) {
                let last = drained[n - 1]
                try rotate(atUs: max(0, max(last.startNs, last.endNs) / 1000))
            }
        } catch {
            let code = (error as? Errno)?.code ?? EIO
            let handler: (@Sendable (StreamError) -> Void)? = state.withLock { s in
                guard s.writeError == 0 else { return nil }
                s.writeError = code
                return s.onWriteError
            }
            handler?(Self.writeFailure(path, code))
        }
    }

    private func appendLines(for e: TraceEvent, to text: inout String) {
        let ts = e.startNs / 1000
        let dur = max(0, e.endNs / 1000 - ts)
        func span(_ name: String, _ track: TraceTrack, _ args: String) {
            text +=
                #",{"name":"\#(name)","ph":"X","ts":\#(ts),"dur":\#(dur),"pid":1,"tid":\#(track.rawValue),"args":{\#(args)}}"#
            text += "\n"
        }
        switch e.kind {
        case .capture:
            span("capture", .capture, #""frame":\#(e.frame),"capture_ts_us":\#(e.captureTsNs / 1000)"#)
            text += #",{"name":"frame","cat":"frame","ph":"s","id":\#(e.frame),"ts":\#(ts),"pid":1,"tid":1}"# + "\n"
        case .detect:
            span("detect", .detect, #""frame":\#(e.frame),"photos":\#(e.count)"#)
        case .infer:
            let requestedUs = e.requestedNs / 1000
            span(
                "infer", .infer,
                #""frame":\#(e.frame),"requested_ts_us":\#(requestedUs),"lag_us":\#(ts - requestedUs),"queued_us":\#(e.queuedNs / 1000),"photo":\#(e.photo),"reason":"\#(e.inferReason.name)","simulated":\#(e.count != 0)"#
                    + (e.backend == .local ? "" : #","backend":"\#(e.backend.name)""#)
                    + (e.failure == .none ? "" : #","failed":"\#(e.failure.name)""#))
        case .inferSend, .inferWait, .inferReceive:
            let name = e.kind == .inferSend ? "infer_send" : e.kind == .inferWait ? "infer_wait" : "infer_receive"
            span(name, .infer, #""frame":\#(e.frame)"#)
        case .composite:
            span("composite", .composite, #""frame":\#(e.frame),"result_frame":\#(e.resultFrame)"#)
        case .output:
            let latencyUs = e.endNs / 1000 - e.captureTsNs / 1000
            var args = #""frame":\#(e.frame),"result_frame":\#(e.resultFrame)"#
            if e.resultFrame >= 0 { args += #","result_age_us":\#(e.resultAgeNs / 1000)"# }
            args += #","latency_us":\#(latencyUs)"#
            span("output", .output, args)
            let endTs = ts + dur
            text +=
                #",{"name":"frame","cat":"frame","ph":"f","bp":"e","id":\#(e.frame),"ts":\#(endTs),"pid":1,"tid":5}"#
                + "\n"
        case .drop:
            text +=
                #",{"name":"drop","ph":"i","s":"t","ts":\#(ts),"pid":1,"tid":\#(e.track.rawValue),"args":{"frame":\#(e.frame),"reason":"\#(e.reason.rawValue)"}}"#
            text += "\n"
        case .inFlight, .queueDepth:
            let name = e.kind == .inFlight ? "in_flight" : "queue_depth"
            text += #",{"name":"\#(name)","ph":"C","ts":\#(ts),"pid":1,"tid":6,"args":{"value":\#(e.count)}}"#
            text += "\n"
        }
    }

    /// Writes all of `text` to the current file.
    /// - Throws: `Errno` of the failed write.
    private func writeAll(_ text: String) throws {
        var text = text
        try text.withUTF8 { bytes in Result { () throws(Errno) in try file.writeAll(UnsafeRawBufferPointer(bytes)) } }
            .get()
        bytesInFile += text.utf8.count
    }
}
