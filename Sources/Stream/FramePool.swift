import ColorcamCore
import Foundation

/// A fixed set of preallocated `FrameBuffer`s handed out and taken back, so the pipeline allocates no frames
/// while it runs. `tryAcquire` never blocks; `waitForFree` blocks until a buffer is free.
///
/// Threading: any thread. Ownership: a buffer acquired belongs to the caller until `release`.
public final class FramePool: @unchecked Sendable {
    // Invariant for @unchecked Sendable: `free` is touched only with `condition` locked.

    public let buffers: [FrameBuffer]
    private var free: [Int]
    private let condition = NSCondition()

    public init(geometry: FrameGeometry, count: Int) {
        precondition(count >= 1, "a pool needs at least one buffer")
        buffers = (0..<count).map { FrameBuffer(geometry: geometry, poolIndex: $0) }
        free = Array((0..<count).reversed())
        free.reserveCapacity(count)
    }

    /// Buffers currently free (for tests and stats).
    public var freeCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return free.count
    }

    /// Blocks until a buffer is free (without taking it: with one consumer, a `tryAcquire` then succeeds).
    public func waitForFree() {
        condition.lock()
        while free.isEmpty { condition.wait() }
        condition.unlock()
    }

    public func tryAcquire() -> FrameBuffer? {
        condition.lock()
        defer { condition.unlock() }
        guard let index = free.popLast() else { return nil }
        return buffers[index]
    }

    public func release(_ buffer: FrameBuffer) {
        condition.lock()
        precondition(
            buffers[buffer.poolIndex] === buffer && !free.contains(buffer.poolIndex),
            "released a buffer this pool does not own or already freed")
        free.append(buffer.poolIndex)
        condition.signal()
        condition.unlock()
    }
}
