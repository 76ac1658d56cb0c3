#if canImport(Glibc)
    import Glibc
#endif

extension FileDescriptor {
    /// Creates (or truncates) `path` with `bytes`, flushed to the disk (`fsync`) before it is closed; the failure,
    /// or nil. The building block of atomic replacement: write a temporary file this way, then `rename` it.
    public static func writeFlushed(_ bytes: [UInt8], to path: String) -> Errno? {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, permissions: 0o644) } catch {
            return error
        }
        var failure: Errno?
        bytes.withUnsafeBytes { raw in
            do throws(Errno) { try fd.writeAll(raw) } catch { failure = error }
        }
        if failure == nil && fsync(fd.rawValue) != 0 { failure = Errno.current }
        do { try fd.close() } catch { if failure == nil { failure = error } }
        return failure
    }
}
