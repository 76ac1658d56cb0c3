import ColorcamCore
import Dispatch
import Preview
import Stream
import Synchronization

/// How the daemon behaves around its pipeline.
public struct LiveOptions: Sendable {
    public var pipeline = PipelineConfig()
    /// Exit (69) when the device is lost instead of retrying (`--exit-on-device-loss`).
    public var exitOnDeviceLoss = false
    /// First retry delay after a device loss; doubles up to `maxBackoffMs`.
    public var initialBackoffMs = 250
    public var maxBackoffMs = 2_000

    public init() {}
}

/// The daemon behind `colorcam live`: runs the pipeline until told to stop, and when the source fails with a
/// device error (kind `.unavailable`) marks the preview unhealthy, retries opening it with exponential backoff,
/// and resumes with the frames missed meanwhile traced as `driver_gap` drops — one continuous trace, numbering
/// and output.
///
/// Lifecycle: `init` → `run()` (blocks) ← `requestStop()` from a signal handler. Threading: `run` on one thread;
/// `requestStop` from any thread.
public final class LiveDaemon: @unchecked Sendable {
    // Invariant for @unchecked Sendable: mutable state is `current` and `stopping` (Mutex/Atomic); the rest is
    // immutable after init and the objects it holds are used as their own contracts allow.
    private let options: LiveOptions
    private let openSource: () throws -> FrameSource
    private let processor: FrameProcessor?
    private let sink: FrameSink?
    private let trace: TraceSink
    private let server: PreviewServer?
    private let clock: MonotonicClock
    private let current = Locked<Pipeline?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - openSource: opens the camera or file; called again after each device loss.
    ///   - sink: output frames (e.g. a `TeeSink` of the preview and a `.y4m`); finished when `run` returns.
    public init(
        options: LiveOptions, openSource: @escaping () throws -> FrameSource, processor: FrameProcessor?,
        sink: FrameSink?, trace: TraceSink, server: PreviewServer?,
        clock: MonotonicClock
    ) {
        self.options = options
        self.openSource = openSource
        self.processor = processor
        self.sink = sink
        self.trace = trace
        self.server = server
        self.clock = clock
    }

    /// Stops after the current frame; the in-flight inference finishes, outputs are flushed. Any thread.
    public func requestStop() {
        stopping.store(true, ordering: .releasing)
        current.withLock { $0?.requestStop() }
        wake.signal()
    }

    private var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Runs until `requestStop`, the end of a file source, or a fatal error.
    ///
    /// After a device loss the frames the camera would have delivered meanwhile are traced as `driver_gap` drops
    /// by the resumed pipeline when its first frame arrives (`PipelineConfig.resumeAfterCaptureNs`), counted from
    /// the last capture before the loss; if the daemon is stopped before a frame came back, up to the moment it
    /// stops. The numbering continues after them.
    /// - Returns: totals over every pipeline run (failed runs included; the drops include the gaps).
    /// - Throws: a device error when `exitOnDeviceLoss` (exit 69), or any non-device error.
    public func run() throws -> PipelineStats {
        var totals = PipelineStats()
        var config = options.pipeline
        totals.nextSequence = config.firstSequence
        var backoffMs = options.initialBackoffMs
        var lostSinceNs: Int64?
        var lastCaptureNs: Int64 = 0
        /// The capture time the untraced gap counts from: set by a loss, cleared once a resumed run has a frame.
        var gapFromNs: Int64?
        var intervalNs: Int64 = 0
        defer { current.withLock { $0 = nil } }
        while !isStopping {
            let source: FrameSource
            do {
                source = try openSource()
            } catch let error as ColorcamError where error.kind == .unavailable || error.kind == .missingInput {
                if options.exitOnDeviceLoss
                    || lostSinceNs == nil && totals.framesCaptured == 0 && error.kind == .missingInput
                {
                    try finishSink(after: error)
                    throw error
                }
                Log.warning("device unavailable: \(error); retrying in \(backoffMs) ms")
                server?.setHealth(.deviceLost(reason: error.description))
                let nowNs = clock.nowNs()
                lostSinceNs = lostSinceNs ?? nowNs
                gapFromNs = gapFromNs ?? (lastCaptureNs > 0 ? lastCaptureNs : nowNs)
                _ = wake.wait(timeout: .now() + .milliseconds(backoffMs))
                backoffMs = min(options.maxBackoffMs, backoffMs * 2)
                continue
            }
            intervalNs = config.frameIntervalNs(sourceIntervalNs: source.nominalFrameIntervalNs)
            if let lost = lostSinceNs {
                Log.info("device back after \((clock.nowNs() - lost) / 1_000_000) ms; resuming")
            }
            config.resumeAfterCaptureNs = gapFromNs
            lostSinceNs = nil
            backoffMs = options.initialBackoffMs
            server?.setHealth(.ok)
            let pipeline = Pipeline(
                source: source, sink: sink.map { ContinuingSink($0) }, processor: processor, trace: trace, clock: clock,
                config: config)
            current.withLock { $0 = pipeline }
            if isStopping { pipeline.requestStop() }
            defer { current.withLock { $0 = nil } }  // releases the source (a device closes) before any retry
            do {
                let stats = try pipeline.run()
                add(stats, to: &totals)
                if stats.framesCaptured > 0 { gapFromNs = nil }
                break  // a clean end: stopped, or a file source ran out
            } catch let failure as PipelineFailure where failure.kind == .unavailable {
                add(failure.stats, to: &totals)
                config.firstSequence = failure.nextSequence
                if failure.framesCaptured > 0 {
                    lastCaptureNs = failure.lastCaptureTsNs
                    gapFromNs = nil
                }
                if options.exitOnDeviceLoss {
                    try finishSink(after: failure)
                    throw failure
                }
                Log.warning("device lost: \(failure); retrying")
                server?.setHealth(.deviceLost(reason: failure.description))
                lostSinceNs = clock.nowNs()
                gapFromNs = gapFromNs ?? (lastCaptureNs > 0 ? lastCaptureNs : lostSinceNs!)
            } catch {
                try finishSink(after: error)
                throw error
            }
        }
        if let fromNs = gapFromNs {
            // Stopped while the device was still lost (or before its first frame came back).
            let missed = traceGap(from: fromNs, nextSequence: totals.nextSequence, intervalNs: intervalNs)
            totals.drops[.driverGap, default: 0] += missed
            totals.nextSequence += missed
        }
        try sink?.finish()
        return totals
    }

    /// Finishes the output (keeping what was written as a valid file) before a fatal error propagates.
    private func finishSink(after error: Error) throws {
        do { try sink?.finish() } catch { Log.error("could not finish the output: \(error)") }
    }

    /// Traces the frames a camera would have delivered between `fromNs` and now (`DriverGap`, the pipeline's rule)
    /// as `driver_gap` drops numbered from `nextSequence`.
    /// - Returns: how many.
    private func traceGap(from fromNs: Int64, nextSequence: Int, intervalNs: Int64) -> Int {
        let gap = DriverGap(afterNs: fromNs, untilNs: clock.nowNs(), intervalNs: intervalNs)
        gap.forEachFrame(firstSequence: nextSequence) { frame, atNs in
            trace.record(.drop(frame: frame, reason: .driverGap, atNs: atNs, track: .capture))
        }
        return gap.count
    }

    private func add(_ stats: PipelineStats, to totals: inout PipelineStats) {
        totals.framesCaptured += stats.framesCaptured
        totals.framesOutput += stats.framesOutput
        totals.inferences += stats.inferences
        totals.maxInFlightSeen = max(totals.maxInFlightSeen, stats.maxInFlightSeen)
        for (reason, n) in stats.drops { totals.drops[reason, default: 0] += n }
        totals.durationNs += stats.durationNs
        totals.nextSequence = stats.nextSequence
        if stats.framesCaptured > 0 { totals.lastCaptureTsNs = stats.lastCaptureTsNs }
    }
}
