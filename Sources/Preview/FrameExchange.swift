import ColorcamCore
import Synchronization

/// A triple buffer that hands the newest published frame (with its overlays and stats) from the pipeline's output
/// thread to the preview's event loop, newest wins.
///
/// The publisher copies into the slot it owns, then swaps it with the `pending` slot under a mutex held for a few
/// instructions; the event loop swaps `pending` with the slot it reads. Neither side ever waits for the other's
/// copy or encode, and a frame the reader has not taken yet is simply replaced.
///
/// Allocation: the three slots are allocated on the first publish and again only when the frame geometry changes;
/// a steady stream allocates nothing. Threading: `publish` from one thread (the pipeline's), `takeNewest` from one
/// other thread (the event loop).
final class FrameExchange: @unchecked Sendable {
    // Invariant for @unchecked Sendable: a `Slot` is touched only by the side that owns it — the publisher owns
    // `slots[writer]`, the reader owns the slot `takeNewest` last returned; ownership changes only inside
    // `indices` (a Mutex). On a geometry change the publisher replaces all three slots under the mutex; the reader
    // keeps its old slot object alive by reference until its next `takeNewest`, so nothing is shared meanwhile.

    /// The most overlays kept per frame; more are cut off.
    static let maxOverlays = 32

    /// One frame with its overlays and stats. Owned by one side at a time (see the invariant above).
    final class Slot {
        let frame: FrameBuffer
        var overlays: [PreviewQuad]
        var overlayCount = 0
        var stats = PreviewStats()

        init(geometry: FrameGeometry) {
            frame = FrameBuffer(geometry: geometry)
            let zero = PreviewPoint(xPx: 0, yPx: 0)
            overlays = Array(
                repeating: PreviewQuad(zero, zero, zero, zero, trackId: 0), count: FrameExchange.maxOverlays)
        }
    }

    private struct Indices {
        var writer = 0
        var pending = 1
        var reader = 2
        /// Whether `pending` holds a frame the reader has not taken.
        var fresh = false
        var slots: [Slot] = []
    }

    private let indices = Locked(Indices())
    /// Frames published so far.
    let publishedCount = Atomic<Int>(0)

    init() {}

    /// Copies `frame`, `overlays` (at most `maxOverlays`) and `stats` into the writer slot and makes it the newest.
    /// Never waits: when the reader holds the mutex at that instant (a few instructions), the frame is not published
    /// and false is returned (the next frame will be). Allocates only on the first frame and on a geometry change.
    @discardableResult
    func publish(frame: FrameBuffer, overlays: UnsafeBufferPointer<PreviewQuad>, stats: PreviewStats) -> Bool {
        let taken: Slot?? = indices.withLockIfAvailable { state in
            if state.slots.isEmpty || state.slots[0].frame.geometry != frame.geometry {
                state.slots = (0..<3).map { _ in Slot(geometry: frame.geometry) }
                state.fresh = false
            }
            return state.slots[state.writer]
        }
        guard let slotOrNil = taken, let slot = slotOrNil else { return false }
        slot.frame.copy(from: frame)
        let count = min(overlays.count, Self.maxOverlays)
        for i in 0..<count { slot.overlays[i] = overlays[i] }
        slot.overlayCount = count
        slot.stats = stats
        // The slots may have been replaced only by this (the publishing) thread, so `slot` is still the writer's.
        let swapped: Bool? = indices.withLockIfAvailable { state in
            swap(&state.writer, &state.pending)
            state.fresh = true
            return true
        }
        guard swapped != nil else { return false }
        publishedCount.add(1, ordering: .relaxed)
        return true
    }

    /// The newest frame if one arrived since the last call, else nil. The returned slot belongs to the caller
    /// until its next call to `takeNewest`.
    func takeNewest() -> Slot? {
        indices.withLock { state in
            guard state.fresh else { return nil }
            swap(&state.reader, &state.pending)
            state.fresh = false
            return state.slots[state.reader]
        }
    }
}
