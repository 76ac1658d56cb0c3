import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Set by SIGINT / SIGTERM: the harness stops publishing, prints its summary and exits 0.
let harnessStopRequested = Atomic<Bool>(false)

func installStopHandlers() {
    signal(SIGPIPE, SIG_IGN)
    let handler: @convention(c) (Int32) -> Void = { _ in harnessStopRequested.store(true, ordering: .relaxed) }
    signal(SIGINT, handler)
    signal(SIGTERM, handler)
}
