import CSched

/// Gives the inference thread a core of its own: "one inference thread; the other cores do the rest".
///
/// Why: on a machine whose every core is busy, a request wakes the inference thread onto a core where a capture,
/// output or preview thread is running, and the scheduler may let that thread finish its slice first — milliseconds
/// of request→start lag. With the split, the inference core runs nothing else of colorcam's, so the thread starts
/// as soon as it is signalled; capture, output and preview share the remaining cores.
///
/// Contract: `split()` is called on the main thread before the pipeline's threads start (threads inherit the
/// caller's CPU set when created), and its `inferenceCPU` goes into `PipelineConfig.inferenceCPU`, which the
/// inference thread applies to itself first thing. With fewer than two usable CPUs, or when the kernel refuses,
/// nothing changes and `split()` returns nil. No global state. (`sched_setaffinity(2)`)
public enum CPUPlacement {
    public struct Split: Sendable, Equatable {
        /// The core the inference thread runs on (the highest CPU the process may use).
        public var inferenceCPU: Int
        /// Every other CPU the process may use: capture, output, preview, trace writer.
        public var streamCPUs: [Int]
    }

    /// The CPUs the calling thread may run on, ascending. (`sched_getaffinity(2)`)
    public static func threadCPUs() -> [Int] {
        var cpus = [Int32](repeating: 0, count: 1024)
        let n = cpus.withUnsafeMutableBufferPointer { colorcam_thread_cpus($0.baseAddress, Int32($0.count)) }
        return n > 0 ? cpus[0..<Int(n)].map(Int.init) : []
    }

    /// Restricts the calling thread to `cpus`; false when the kernel refuses.
    @discardableResult
    public static func setThreadCPUs(_ cpus: [Int]) -> Bool {
        let values = cpus.map(Int32.init)
        return values.withUnsafeBufferPointer { colorcam_set_thread_cpus($0.baseAddress, Int32($0.count)) } == 0
    }

    /// Reserves the highest usable CPU for inference and restricts the calling thread (and so every thread it
    /// starts later) to the others. Returns the split, or nil (and changes nothing) with fewer than two CPUs.
    @discardableResult
    public static func split() -> Split? {
        let cpus = threadCPUs()
        guard cpus.count >= 2, let last = cpus.last else { return nil }
        let placement = Split(inferenceCPU: last, streamCPUs: Array(cpus.dropLast()))
        return setThreadCPUs(placement.streamCPUs) ? placement : nil
    }

}
