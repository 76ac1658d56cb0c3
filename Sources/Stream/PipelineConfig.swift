/// How the pipeline paces its source and bounds its work. Durations in nanoseconds.
public struct PipelineConfig: Sendable {
    public enum Pace: String, Sendable, CaseIterable {
        /// Frames arrive at their timestamps, as from a camera; what the pipeline cannot take is dropped.
        case realtime
        /// Every frame is processed, as fast as possible, each with its own inference (batch conversion).
        case asap
    }

    public var pace: Pace = .realtime
    /// At most this many inference runs at once (`--max-in-flight`).
    public var maxInFlight = 1
    /// Newest-wins waiting places for inference (`--queue`, 0 or more; default 1).
    public var queueCapacity = 1
    /// Realtime only: a frame whose output would come later than this after its capture is dropped `late`.
    /// nil = two frame intervals.
    public var outputBudgetNs: Int64?
    /// How many times to play the source (`--loop`).
    public var loops = 1
    /// Overrides the source's frame interval and ignores its timestamps (`--fps`).
    public var frameIntervalOverrideNs: Int64?
    /// Preallocated frame buffers between capture and output.
    public var framePoolSize = 8
    /// Realtime: delay before the first frame is due, so threads are up before the clock starts counting.
    public var startLeadNs: Int64 = 5_000_000

    public init() {}
}

/// What a run did, for the CLI's closing line and for tests.
public struct PipelineStats: Sendable {
    public var framesCaptured = 0
    public var framesOutput = 0
    public var inferences = 0
    public var drops: [DropReason: Int] = [:]
    public var maxInFlightSeen = 0
    public var durationNs: Int64 = 0
}
