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
    private let model: Locked<String>
    /// Fills the outlines of the photos tracked in a frame (up to the buffer's count) and returns how many; called
    /// on the output thread with the frame about to be published. Nil: no outlines.
    private let overlays: (@Sendable (FrameBuffer, UnsafeMutableBufferPointer<PreviewQuad>) -> Int)?
    private let overlayBuffer: UnsafeMutableBufferPointer<PreviewQuad>
    /// Output timestamps of the last second, for the fps figure (a ring, no allocation).
    private var window: [Int64]
    private var windowCount = 0
    private var windowHead = 0
    /// Latest request→start lag, µs (set by `MetricsTraceSink`).
    public let lastLagUs = Atomic<Int64>(0)
    /// Inferences running now.
    public let inFlight = Atomic<Int>(0)

    public init(
        server: PreviewServer, clock: MonotonicClock, model: String,
        overlays: (@Sendable (FrameBuffer, UnsafeMutableBufferPointer<PreviewQuad>) -> Int)? = nil
    ) {
        self.server = server
        self.clock = clock
        self.model = Locked(model)
        self.overlays = overlays
        overlayBuffer = .allocate(capacity: 16)
        overlayBuffer.initialize(
            repeating: PreviewQuad(
                PreviewPoint(xPx: 0, yPx: 0), PreviewPoint(xPx: 0, yPx: 0),
                PreviewPoint(xPx: 0, yPx: 0), PreviewPoint(xPx: 0, yPx: 0),
                trackId: -1))
        window = Array(repeating: 0, count: 256)
    }

    deinit { overlayBuffer.deallocate() }

    /// The model name the page shows (after a reload; any thread).
    public func setModel(_ name: String) { model.withLock { $0 = name } }

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
        let stats = PreviewStats(
            outputFps: Double(windowCount), lagMs: Double(lastLagUs.load(ordering: .relaxed)) / 1000,
            inFlight: inFlight.load(ordering: .relaxed), model: model.withLock { $0 })
        let count = overlays.map { min(overlayBuffer.count, $0(frame, overlayBuffer)) } ?? 0
        server.publish(frame: frame, overlays: UnsafeBufferPointer(rebasing: overlayBuffer[0..<count]), stats: stats)
    }

    public func finish() throws {}
    public func abort() {}
}
