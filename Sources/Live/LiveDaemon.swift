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
/// traces the frames missed meanwhile as `driver_gap` drops and resumes — one continuous trace and output.
///
/// Lifecycle: `init` → `run()` (blocks) ← `requestStop()` from a signal handler. Threading: `run` on one thread;
/// `requestStop` from any thread.
public final class LiveDaemon: @unchecked Sendable {
    // Invariant for @unchecked Sendable: mutable state is `current` and `stopping` (Mutex/Atomic); the rest is
    // immutable after init and the objects it holds are used as their own contracts allow.
    private let options: LiveOptions
    private let openSource: () throws -> FrameSource
    private let runner: InferenceRunner?
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
    public init(options: LiveOptions, openSource: @escaping () throws -> FrameSource, runner: InferenceRunner?,
                processor: FrameProcessor?, sink: FrameSink?, trace: TraceSink, server: PreviewServer?,
                clock: MonotonicClock) {
        self.options = options
        self.openSource = openSource
        self.runner = runner
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
    /// - Returns: totals over every pipeline run.
    /// - Throws: a device error when `exitOnDeviceLoss` (exit 69), or any non-device error.
    public func run() throws -> PipelineStats {
        var totals = PipelineStats()
        var config = options.pipeline
        var backoffMs = options.initialBackoffMs
        var lostSinceNs: Int64?
        var lastCaptureNs: Int64 = 0
        defer { current.withLock { $0 = nil } }
        while !isStopping {
            let source: FrameSource
            do {
                source = try openSource()
            } catch let error as ColorcamError where error.kind == .unavailable || error.kind == .missingInput {
                if options.exitOnDeviceLoss || lostSinceNs == nil && totals.framesCaptured == 0 && error.kind == .missingInput {
                    try finishSink(after: error)
                    throw error
                }
                Log.warning("device unavailable: \(error); retrying in \(backoffMs) ms")
                server?.setHealth(.deviceLost(reason: error.description))
                lostSinceNs = lostSinceNs ?? clock.nowNs()
                _ = wake.wait(timeout: .now() + .milliseconds(backoffMs))
                backoffMs = min(options.maxBackoffMs, backoffMs * 2)
                continue
            }
            if let lost = lostSinceNs {
                // Count from the last frame captured before the loss: every interval since then is a frame
                // the camera would have delivered.
                config.firstSequence = traceGap(from: lastCaptureNs > 0 ? lastCaptureNs : lost,
                                                nextSequence: config.firstSequence,
                                                intervalNs: config.frameIntervalOverrideNs ?? source.nominalFrameIntervalNs)
                Log.info("device back after \((clock.nowNs() - lost) / 1_000_000) ms; resuming")
            }
            lostSinceNs = nil
            backoffMs = options.initialBackoffMs
            server?.setHealth(.ok)
            let pipeline = Pipeline(source: source, sink: sink.map { ContinuingSink($0) }, runner: runner,
                                    processor: processor, trace: trace, clock: clock, config: config)
            current.withLock { $0 = pipeline }
            if isStopping { pipeline.requestStop() }
            defer { current.withLock { $0 = nil } }  // releases the source (a device closes) before any retry
            do {
                let stats = try pipeline.run()
                add(stats, to: &totals)
                break  // a clean end: stopped, or a file source ran out
            } catch let failure as PipelineFailure where failure.kind == .unavailable {
                totals.framesCaptured += failure.framesCaptured
                config.firstSequence = failure.nextSequence
                lastCaptureNs = failure.lastCaptureTsNs
                if options.exitOnDeviceLoss {
                    try finishSink(after: failure)
                    throw failure
                }
                Log.warning("device lost: \(failure); retrying")
                server?.setHealth(.deviceLost(reason: failure.description))
                lostSinceNs = clock.nowNs()
            } catch {
                try finishSink(after: error)
                throw error
            }
        }
        try sink?.finish()
        return totals
    }

    /// Finishes the output (keeping what was written as a valid file) before a fatal error propagates.
    private func finishSink(after error: Error) throws {
        do { try sink?.finish() } catch { Log.error("could not finish the output: \(error)") }
    }

    /// Traces the frames a camera would have delivered between `fromNs` and now as `driver_gap` drops.
    /// - Returns: the sequence number to resume at.
    private func traceGap(from fromNs: Int64, nextSequence: Int, intervalNs: Int64) -> Int {
        let nowNs = clock.nowNs()
        guard intervalNs > 0 else { return nextSequence }
        let missed = min(100_000, max(0, Int((nowNs - fromNs) / intervalNs) - 1))
        for i in 0..<missed {
            trace.record(.drop(frame: nextSequence + i, reason: .driverGap, atNs: fromNs + Int64(i + 1) * intervalNs,
                               track: .capture))
        }
        return nextSequence + missed
    }

    private func add(_ stats: PipelineStats, to totals: inout PipelineStats) {
        totals.framesCaptured += stats.framesCaptured
        totals.framesOutput += stats.framesOutput
        totals.inferences += stats.inferences
        totals.maxInFlightSeen = max(totals.maxInFlightSeen, stats.maxInFlightSeen)
        for (reason, n) in stats.drops { totals.drops[reason, default: 0] += n }
        totals.durationNs += stats.durationNs
        totals.nextSequence = stats.nextSequence
        totals.lastCaptureTsNs = stats.lastCaptureTsNs
    }
}
