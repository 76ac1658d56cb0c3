import CSanitizer
import Synchronization

/// A `Synchronization.Mutex` whose hand-overs ThreadSanitizer can see; use it wherever a `Mutex` would do.
///
/// Why it exists: on Linux a contended `Mutex` is handed from the releasing thread to a waiting one inside the
/// kernel (`FUTEX_UNLOCK_PI` / `FUTEX_LOCK_PI`, called from the uninstrumented Synchronization library), so TSan sees
/// no happens-before edge between the two critical sections and reports the value's accesses as a race — a false
/// report that `make test-sanitize` would fail on whenever two threads happen to contend. `Locked` marks the lock's
/// acquisition and release on the value's address with TSan's annotations; in a build without `-sanitize=thread` the
/// annotations are null weak symbols and cost one untaken branch each.
///
/// Threading: as `Mutex` — any thread, not reentrant, never held across a blocking call by this project.
public struct Locked<Value: ~Copyable>: ~Copyable {
    private let mutex: Mutex<Value>

    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with the value, holding the lock (blocks until it is free).
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            let address = Locked.address(of: &value)
            colorcam_tsan_acquire(address)
            defer { colorcam_tsan_release(address) }
            return try body(&value)
        }
    }

    /// Runs `body` with the value if the lock is free now; nil (and `body` not run) if another thread holds it.
    public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            let address = Locked.address(of: &value)
            colorcam_tsan_acquire(address)
            defer { colorcam_tsan_release(address) }
            return try body(&value)
        }
    }

    /// The protected value's address: stable for the lock's lifetime (a `Mutex` keeps its value in place), so it
    /// names this lock to TSan.
    @inline(__always) private static func address(of value: inout Value) -> UnsafeMutableRawPointer {
        withUnsafeMutablePointer(to: &value) { UnsafeMutableRawPointer($0) }
    }
}

extension Locked: Sendable where Value: ~Copyable {}
