import CSanitizer
import Synchronization

/// A `Synchronization.Mutex` whose hand-overs ThreadSanitizer can see; use it wherever a `Mutex` would do.
///
/// Why it exists: on Linux a contended `Mutex` is handed from the releasing thread to a waiting one inside the
/// kernel (`FUTEX_UNLOCK_PI` / `FUTEX_LOCK_PI`, called from the uninstrumented Synchronization library), so TSan sees
/// no happens-before edge between the two critical sections and reports the value's accesses as a race — a false
/// report that `make test-sanitize` would fail on whenever two threads happen to contend. `Locked` announces the
/// lock's acquisition and release to TSan (named by the object's address, so announcing is not itself an access to
/// the value); in a build without `-sanitize=thread` the annotations are null weak symbols and cost one untaken
/// branch each.
///
/// A class (one allocation when made, none per use): its address names the lock. The methods are inlinable so
/// callers get code specialised to their value type, as with `Mutex`.
/// Threading: as `Mutex` — any thread, not reentrant, never held across a blocking call by this project.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: the value is reached only through `mutex`, which makes it Sendable whatever the value.
    @usableFromInline let mutex: Mutex<Value>

    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with the value, holding the lock (blocks until it is free).
    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let tag = Unmanaged.passUnretained(self).toOpaque()
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            colorcam_tsan_acquire(tag)
            defer { colorcam_tsan_release(tag) }
            return try body(&value)
        }
    }

    /// Runs `body` with the value if the lock is free now; nil (and `body` not run) if another thread holds it.
    @inlinable
    public func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        let tag = Unmanaged.passUnretained(self).toOpaque()
        return try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            colorcam_tsan_acquire(tag)
            defer { colorcam_tsan_release(tag) }
            return try body(&value)
        }
    }
}
