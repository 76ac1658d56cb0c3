import ColorcamCore
import Foundation
import Testing

/// `Locked` under real contention: two threads increment a shared non-atomic counter inside `withLock` many times.
/// A normal build checks mutual exclusion (no lost update); under `make test-sanitize` (thread) the same test fails if
/// TSan cannot see the contended hand-over (the false race `Locked` exists to prevent).
@Suite struct LockedTests {
    private final class Counter: Sendable {
        let value = Locked<(count: Int, lastWriter: Int)>((0, -1))
    }

    @Test func contendedIncrementsAreNeverLostAndHandOversAreVisible() {
        let counter = Counter()
        let perThread = 200_000
        let group = DispatchGroup()
        var handOvers = 0
        let handOverCount = Locked(0)
        for writer in 0..<2 {
            group.enter()
            let thread = Thread {
                var mine = 0
                for _ in 0..<perThread {
                    counter.value.withLock { state in
                        if state.lastWriter != writer { mine += 1 }
                        state.count += 1
                        state.lastWriter = writer
                    }
                }
                handOverCount.withLock { $0 += mine }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        handOvers = handOverCount.withLock { $0 }
        #expect(counter.value.withLock { $0.count } == 2 * perThread)
        // The lock really changed hands between the threads (otherwise the test shows nothing about hand-overs).
        #expect(handOvers >= 2)
    }

    @Test func withLockIfAvailableSkipsWhileAnotherThreadHoldsTheLock() {
        let lock = Locked(7)
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0),
            done = DispatchSemaphore(value: 0)
        Thread {
            lock.withLock { value in
                held.signal()
                release.wait()
                value = 8
            }
            done.signal()
        }.start()
        held.wait()
        let whileHeld: Int? = lock.withLockIfAvailable { $0 }
        release.signal()
        done.wait()
        #expect(whileHeld == nil)
        #expect(lock.withLockIfAvailable { $0 } == 8)
    }
}
