import ColorcamCore
import Foundation
import Preview
import Synchronization

/// Publishes `count` synthetic frames to a server from its own thread, `intervalNs` apart (like the pipeline's
/// output thread would), with one moving overlay and changing stats.
final class SyntheticPublisher: Sendable {
    let server: PreviewServer
    let geometry: FrameGeometry
    let count: Int
    let intervalNs: Int64
    private let done = DispatchSemaphore(value: 0)
    let published = Atomic<Int>(0)

    init(
        server: PreviewServer,
        geometry: FrameGeometry = FrameGeometry(
            widthPx: 640, heightPx: 480,
            chroma: .yuv420(.jpeg)),
        count: Int, intervalNs: Int64
    ) {
        self.server = server
        self.geometry = geometry
        self.count = count
        self.intervalNs = intervalNs
    }

    /// Fills `frame` with a pattern that differs from frame to frame (so JPEGs differ).
    static func draw(_ frame: FrameBuffer, index: Int) {
        let g = frame.geometry
        let luma = frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for y in 0..<g.heightPx {
            for x in 0..<g.widthPx { luma[y * g.widthPx + x] = UInt8(truncatingIfNeeded: x + y + index * 8) }
        }
        if g.chroma.hasChroma {
            frame.cb.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: 100 + index))
            frame.cr.initializeMemory(as: UInt8.self, repeating: 150)
        }
        frame.sequence = index
    }

    func start() {
        let thread = Thread { [self] in
            let frame = FrameBuffer(geometry: geometry)
            let clock = SystemClock()
            let startNs = clock.nowNs()
            for index in 0..<count {
                clock.sleep(untilNs: startNs + Int64(index) * intervalNs)
                Self.draw(frame, index: index)
                let x = Float(10 + index)
                let quad = PreviewQuad(
                    .init(xPx: x, yPx: 10), .init(xPx: x + 50, yPx: 10), .init(xPx: x + 50, yPx: 40),
                    .init(xPx: x, yPx: 40), trackId: 7)
                server.publish(
                    frame: frame, overlays: [quad],
                    stats: PreviewStats(outputFps: 30, lagMs: Double(index), inFlight: 1, model: "synthetic"))
                server.metrics.framesOutput.increment()
                published.add(1, ordering: .relaxed)
            }
            done.signal()
        }
        thread.start()
    }

    func join() { done.wait() }
}
