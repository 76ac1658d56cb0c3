import ColorcamCore
import Stream
import Synchronization

/// Collects trace events in memory (tests only).
final class RecordingTraceSink: TraceSink {
    private let storage = Locked<[TraceEvent]>([])
    func record(_ event: TraceEvent) { storage.withLock { $0.append(event) } }
    var events: [TraceEvent] { storage.withLock { $0 } }
    func events(_ kind: TraceEvent.Kind) -> [TraceEvent] { events.filter { $0.kind == kind } }
    func drops(_ reason: DropReason) -> [TraceEvent] { events(.drop).filter { $0.reason == reason } }
}

/// Frame arrival times of a steady source, in ns.
func steadyArrivals(count: Int, fps: Double) -> [Int64] {
    (0..<count).map { Int64((Double($0) * 1e9 / fps).rounded()) }
}

/// An in-memory source of `count` frames with a moving ramp, paced at `fps` (no timestamps).
final class SyntheticSource: FrameSource {
    let geometry: FrameGeometry
    let nominalFrameIntervalNs: Int64
    let frameRate: (numerator: Int, denominator: Int)
    let name = "synthetic"
    let canRewind = true
    private let count: Int
    private var next = 0

    init(count: Int, fps: Int, widthPx: Int = 64, heightPx: Int = 48) {
        geometry = FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: .yuv420(.jpeg))
        nominalFrameIntervalNs = 1_000_000_000 / Int64(fps)
        frameRate = (fps, 1)
        self.count = count
    }

    func readFrame(into buffer: FrameBuffer) throws -> Bool {
        guard next < count else { return false }
        let bytes = buffer.pixels.bindMemory(to: UInt8.self)
        for i in 0..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &+ next) }
        buffer.sequence = next
        buffer.sourceTimestampNs = nil
        next += 1
        return true
    }

    func rewind() throws { next = 0 }
}
