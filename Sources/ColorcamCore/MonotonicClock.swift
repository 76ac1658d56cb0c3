import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The pipeline's single time base. Every timestamp colorcam records (trace, frame capture times, deadlines)
/// comes from one clock, in nanoseconds since that clock's origin.
///
/// Threading: implementations are safe to call from any thread.
public protocol MonotonicClock: Sendable {
    /// Nanoseconds since the clock's origin; never decreases.
    func nowNs() -> Int64
    /// Blocks the calling thread until `nowNs() >= deadlineNs`. A manual clock returns at once after
    /// advancing itself, so replays under a manual clock run in virtual time.
    func sleep(untilNs deadlineNs: Int64)
}

/// `CLOCK_MONOTONIC`, with its origin at the moment the clock value was made.
public struct SystemClock: MonotonicClock {
    private let originNs: Int64

    public init() { originNs = SystemClock.rawNs() }

    /// The raw `CLOCK_MONOTONIC` reading in nanoseconds.
    public static func rawNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    public func nowNs() -> Int64 { SystemClock.rawNs() - originNs }

    /// CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`), nanoseconds: a benchmark's cost on one core
    /// even when other processes share the machine.
    public static func threadCPUNs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    public func sleep(untilNs deadlineNs: Int64) {
        let absoluteNs = deadlineNs + originNs
        var ts = timespec(tv_sec: Int(absoluteNs / 1_000_000_000), tv_nsec: Int(absoluteNs % 1_000_000_000))
        _ = Errno.codeRetryingInterrupts { clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) }
    }
}

/// A clock that moves only when told to: `advance(byNs:)`, `set(ns:)`, or `sleep(untilNs:)` (which jumps
/// forward). Makes every timing decision in a replay reproducible in tests.
public final class ManualClock: MonotonicClock {
    private let now: Atomic<Int64>

    public init(startNs: Int64 = 0) { now = Atomic(startNs) }

    public func nowNs() -> Int64 { now.load(ordering: .acquiring) }

    public func advance(byNs deltaNs: Int64) {
        precondition(deltaNs >= 0, "a monotonic clock cannot go back")
        now.add(deltaNs, ordering: .acquiringAndReleasing)
    }

    public func set(ns: Int64) {
        precondition(ns >= nowNs(), "a monotonic clock cannot go back")
        now.store(ns, ordering: .releasing)
    }

    public func sleep(untilNs deadlineNs: Int64) {
        if deadlineNs > nowNs() { set(ns: deadlineNs) }
    }
}
