import CSanitizer
import Synchronization

/// A `Synchronization.Mutex` whose hand-overs ThreadSanitizer can see; use it wherever a `Mutex` would do.
///
/// Why it exists: on Linux a contended `Mutex` is handed from the releasing thread to a waiting one inside the
/// kernel (`FUTEX_UNLOCK_PI` / `FUTEX_LOCK_PI`, called from the uninstrumented Synchronization library), so TSan sees
/// no happens-before edge between the two critical sections and reports the value's accesses as a race — a false
/// report that `make test-sanitize` would fail on whenever two threads happen to contend. `Locked` marks the lock's
/// acquisition and release with TSan's annotations, before the value is touched and after; in a build without
/// `-sanitize=thread` the annotations are null weak symbols and cost one untaken branch each.
///
/// Threading: as `Mutex` — any thread, not reentrant, never held across a blocking call by this project.
/// Ownership: allocates one byte at `init` (the name TSan knows the lock by), freed when the lock is destroyed.
public struct Locked<Value: ~Copyable>: ~Copyable {
    private let mutex: Mutex<Value>
    /// The lock's name for TSan: an address of its own, so naming the lock is not itself an access to the value
    /// (taking the value's address would be one, made before the acquisition is announced).
    private let tsanTag: UnsafeMutableRawPointer

    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
        tsanTag = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
    }

    deinit { tsanTag.deallocate() }

    /// Runs `body` with the value, holding the lock (blocks until it is free).
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let tag = tsanTag
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            colorcam_tsan_acquire(tag)
            defer { colorcam_tsan_release(tag) }
            return try body(&value)
        }
    }

    /// Runs `body` with the value if the lock is free now; nil (and `body` not run) if another thread holds it.
    public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        let tag = tsanTag
        return try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            colorcam_tsan_acquire(tag)
            defer { colorcam_tsan_release(tag) }
            return try body(&value)
        }
    }
}

// As `Mutex`: Sendable whatever the value (it is only reached under the lock). `tsanTag` is never written after init.
extension Locked: @unchecked Sendable where Value: ~Copyable {}
