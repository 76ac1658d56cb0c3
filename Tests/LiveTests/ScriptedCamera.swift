import ColorcamCore
import Stream
import Synchronization

/// Collects trace events in memory (tests only).
final class RecordingTrace: TraceSink {
    private let storage = Locked<[TraceEvent]>([])
    func record(_ event: TraceEvent) { storage.withLock { $0.append(event) } }
    var events: [TraceEvent] { storage.withLock { $0 } }
    var captures: [TraceEvent] { events.filter { $0.kind == .capture } }
    var driverGaps: [TraceEvent] { events.filter { $0.kind == .drop && $0.reason == .driverGap } }
}

/// A camera that plays a script on a `ManualClock`, for the daemon's device-loss path without timing.
///
/// Each `Session` is one open of the device: the opens before it fail (device unavailable), each moving the clock
/// on by `failedOpenNs`; then it delivers `frames` — the driver's own sequence number (counting from 0 at every
/// open, as V4L2 drivers do) and the capture time on the pipeline clock, which `readFrame` moves the clock to —
/// and ends with a device error (`endsWithLoss`) or the end of the stream.
///
/// Threading: `open()` on the daemon's thread, `readFrame` on the pipeline's capture thread; never at once (the
/// daemon opens the next session only after the previous pipeline's threads ended), state behind a Mutex anyway.
final class ScriptedCamera: @unchecked Sendable {
    // Invariant for @unchecked Sendable: all mutable state is in `state` (a Mutex); `clock` is Sendable.
    struct Frame {
        var driverSequence: Int
        var captureNs: Int64
    }

    struct Session {
        var failedOpensBefore = 0
        var failedOpenNs: Int64 = 0
        var frames: [Frame]
        var endsWithLoss: Bool
    }

    static let intervalNs: Int64 = 10_000_000
    let clock: ManualClock
    private let state: Locked<(sessions: [Session], failedOpens: Int, opens: Int)>
    /// Called on each failed open (with the count so far), e.g. to stop the daemon while the device is away.
    var onFailedOpen: (@Sendable (Int) -> Void)?

    init(clock: ManualClock, sessions: [Session]) {
        self.clock = clock
        state = Locked((sessions, 0, 0))
    }

    /// Frames `count` frames from driver sequence `from`, one interval apart from `startNs`.
    static func steady(count: Int, startNs: Int64, from driverSequence: Int = 0) -> [Frame] {
        (0..<count).map { Frame(driverSequence: driverSequence + $0, captureNs: startNs + Int64($0) * intervalNs) }
    }

    var successfulOpens: Int { state.withLock { $0.opens } }

    /// The daemon's `openSource`.
    func open() throws -> FrameSource {
        let (session, failed): (Session?, (count: Int, ns: Int64)?) = state.withLock { s in
            guard var next = s.sessions.first else { return (nil, nil) }
            if next.failedOpensBefore > 0 {
                next.failedOpensBefore -= 1
                s.sessions[0] = next
                s.failedOpens += 1
                return (nil, (s.failedOpens, next.failedOpenNs))
            }
            s.sessions.removeFirst()
            s.opens += 1
            return (next, nil)
        }
        if let failed {
            clock.advance(byNs: failed.ns)
            onFailedOpen?(failed.count)
            throw StreamError(.unavailable, file: "/dev/scripted", "open failed: No such device (errno 19)")
        }
        guard let session else {
            throw StreamError(.unavailable, file: "/dev/scripted", "script exhausted: no more sessions")
        }
        return ScriptedLiveSource(session: session, clock: clock)
    }
}

/// One open of a `ScriptedCamera`: a live source (driver numbering and capture times, gaps from the numbering).
final class ScriptedLiveSource: FrameSource {
    let geometry = FrameGeometry(widthPx: 16, heightPx: 8, chroma: .yuv420(.jpeg))
    let nominalFrameIntervalNs = ScriptedCamera.intervalNs
    let frameRate = (numerator: 100, denominator: 1)
    let name = "/dev/scripted"
    let canRewind = false
    let isLive = true
    private(set) var gapBeforeLastFrame = 0
    private let session: ScriptedCamera.Session
    private let clock: ManualClock
    private var next = 0
    private var lastDriverSequence: Int?

    init(session: ScriptedCamera.Session, clock: ManualClock) {
        self.session = session
        self.clock = clock
    }

    func readFrame(into buffer: FrameBuffer) throws -> Bool {
        guard next < session.frames.count else {
            if session.endsWithLoss {
                clock.advance(byNs: ScriptedCamera.intervalNs / 2)
                throw StreamError(.unavailable, file: name, frame: next, "VIDIOC_DQBUF failed: ENODEV (No such device)")
            }
            return false
        }
        let frame = session.frames[next]
        next += 1
        clock.set(ns: max(clock.nowNs(), frame.captureNs))
        gapBeforeLastFrame = lastDriverSequence.map { frame.driverSequence - $0 - 1 } ?? 0
        lastDriverSequence = frame.driverSequence
        buffer.sequence = frame.driverSequence
        buffer.captureTimestampNs = frame.captureNs
        buffer.sourceTimestampNs = frame.captureNs
        return true
    }

    func rewind() throws { throw StreamError(.usage, file: name, "a camera cannot rewind") }
}
