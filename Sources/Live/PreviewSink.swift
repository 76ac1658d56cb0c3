import ColorcamCore
import Preview
import Stream
import Synchronization

/// A `FrameSink` that publishes each output frame to the preview server with the current stats.
///
/// Threading: `write` runs on the pipeline's output thread and never blocks (the server's hand-off is
/// newest-wins); nothing is allocated per frame. `stats` readers (`lagMs`, `inFlight`) are atomics the
/// metrics adapter updates from other threads.
public final class PreviewSink: FrameSink, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `window`, `windowCount` are touched only by the output thread (`write`).
    private let server: PreviewServer
    private let clock: MonotonicClock
    private let model: String
    /// Output timestamps of the last second, for the fps figure (a ring, no allocation).
    private var window: [Int64]
    private var windowCount = 0
    private var windowHead = 0
    /// Latest request→start lag, µs (set by `MetricsTraceSink`).
    public let lastLagUs = Atomic<Int64>(0)
    /// Inferences running now.
    public let inFlight = Atomic<Int>(0)

    public init(server: PreviewServer, clock: MonotonicClock, model: String) {
        self.server = server
        self.clock = clock
        self.model = model
        window = Array(repeating: 0, count: 256)
    }

    public func write(_ frame: FrameBuffer) throws {
        let nowNs = clock.nowNs()
        // Drop timestamps older than a second, then add this one.
        while windowCount > 0 && nowNs - window[windowHead] > 1_000_000_000 {
            windowHead = (windowHead + 1) % window.count
            windowCount -= 1
        }
        if windowCount == window.count {
            windowHead = (windowHead + 1) % window.count
            windowCount -= 1
        }
        window[(windowHead + windowCount) % window.count] = nowNs
        windowCount += 1
        let stats = PreviewStats(outputFps: Double(windowCount), lagMs: Double(lastLagUs.load(ordering: .relaxed)) / 1000,
                                 inFlight: inFlight.load(ordering: .relaxed), model: model)
        server.publish(frame: frame, overlays: UnsafeBufferPointer(start: nil, count: 0), stats: stats)
    }

    public func finish() throws {}
    public func abort() {}
}
