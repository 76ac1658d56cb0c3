import ColorcamCore
import Stream
import Synchronization

/// Collects trace events in memory (tests only).
final class RecordingTraceSink: TraceSink {
    private let storage = Locked<[TraceEvent]>([])
    func record(_ event: TraceEvent) { storage.withLock { $0.append(event) } }
    var events: [TraceEvent] { storage.withLock { $0 } }
    func events(_ kind: TraceEvent.Kind) -> [TraceEvent] { events.filter { $0.kind == kind } }
    func drops(_ reason: DropReason) -> [TraceEvent] { events(.drop).filter { $0.reason == reason } }
}

/// An in-memory source of `count` frames with a moving ramp, paced at `fps` (no timestamps).
final class SyntheticSource: FrameSource {
    let geometry: FrameGeometry
    let nominalFrameIntervalNs: Int64
    let frameRate: (numerator: Int, denominator: Int)
    let name = "synthetic"
    let canRewind = true
    private let count: Int
    private var next = 0

    init(count: Int, fps: Int, widthPx: Int = 64, heightPx: Int = 48) {
        geometry = FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: .yuv420(.jpeg))
        nominalFrameIntervalNs = 1_000_000_000 / Int64(fps)
        frameRate = (fps, 1)
        self.count = count
    }

    func readFrame(into buffer: FrameBuffer) throws -> Bool {
        guard next < count else { return false }
        let bytes = buffer.pixels.bindMemory(to: UInt8.self)
        for i in 0..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &+ next) }
        buffer.sequence = next
        buffer.sourceTimestampNs = nil
        next += 1
        return true
    }

    func rewind() throws { next = 0 }
}

/// A processor for scheduler tests: detects nothing, asks for an inference on every frame, and holds the inference
/// for `durationNs(frame)` by sleeping on `clock` (on a `SteppedClock` that is exactly the inference's length);
/// output frames carry the scheduler's result.
class ScheduledInference: FrameProcessor, @unchecked Sendable {
    let clock: MonotonicClock
    let durationNs: @Sendable (Int) -> Int64
    var isSimulated: Bool { true }
    var label: String { "scheduled test inference" }

    init(clock: MonotonicClock, durationNs: @escaping @Sendable (Int) -> Int64) {
        self.clock = clock
        self.durationNs = durationNs
    }

    func prepare(framePoolSize: Int, inputSlotCount: Int) {}
    func analyse(_ frame: FrameBuffer) -> Int? { nil }
    func prepareInference(_ frame: FrameBuffer, slot: Int, inferenceIdle: Bool) -> InferenceRequest? {
        InferenceRequest(photo: -1, reason: .frame)
    }
    func infer(slot: Int, frame: Int, captureTsNs: Int64) -> InferenceOutcome {
        clock.sleep(untilNs: clock.nowNs() + durationNs(frame))
        return .local
    }
    func composite(_ frame: FrameBuffer, scheduled: CompositeStamp?) -> CompositeStamp? { scheduled }
}

/// A sink whose every write takes `costNs` on `clock` (an output device's time per frame); counts what it got.
final class TimedSink: FrameSink {
    let clock: MonotonicClock
    let costNs: Int64
    private(set) var written: [Int] = []

    init(clock: MonotonicClock, costNs: Int64) {
        self.clock = clock
        self.costNs = costNs
    }

    func write(_ frame: FrameBuffer) throws {
        written.append(frame.sequence)
        clock.sleep(untilNs: clock.nowNs() + costNs)
    }
    func finish() throws {}
    func abort() {}
}

/// A run of the real `Pipeline` under `PipelineStepper`: `count` frames of a `fps` source (no lead: frame k is
/// captured at k × the integer frame interval), inference of `inferenceNs(frame)` (nil: none), output costing
/// `outputCostNs` per frame.
struct SteppedRun {
    var count = 300
    var fps = 30
    var config = PipelineConfig()
    var inferenceNs: (@Sendable (Int) -> Int64)? = { _ in 90_000_000 }
    var outputCostNs: Int64 = 1_000_000

    init() { config.startLeadNs = 0 }

    /// The source's frame interval.
    var intervalNs: Int64 { 1_000_000_000 / Int64(fps) }

    func run(trace: TraceSink, observe: ((PipelineCore) -> Void)? = nil) throws -> (PipelineStats, TimedSink) {
        let clock = SteppedClock()
        let sink = TimedSink(clock: clock, costNs: outputCostNs)
        let pipeline = Pipeline(
            source: SyntheticSource(count: count, fps: fps), sink: sink,
            processor: inferenceNs.map { ScheduledInference(clock: clock, durationNs: $0) }, trace: trace,
            clock: clock, config: config)
        let stepper = PipelineStepper(pipeline: pipeline, clock: clock)
        stepper.observe = observe
        return (try stepper.run(), sink)
    }
}
