import ColorcamCore

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
    /// Realtime only: present (write) each frame this long after its capture, not as soon as it is composited, so
    /// output is evenly paced whatever each frame's processing took (a jitter buffer; `--output-delay-ms`).
    /// A frame composited later than that goes out at once. nil: as soon as composited.
    public var presentationDelayNs: Int64?
    /// How many times to play the source (`--loop`).
    public var loops = 1
    /// Overrides the source's frame interval and ignores its timestamps (`--fps`).
    public var frameIntervalOverrideNs: Int64?
    /// Preallocated frame buffers between capture and output.
    public var framePoolSize = 8
    /// Sequence number of the first frame (a daemon restarting its pipeline continues the numbering).
    public var firstSequence = 0
    /// Resuming after a device loss: the capture time (pipeline clock, ns) of the last frame captured before it.
    /// When the first frame of this run arrives, the frame slots the camera would have filled in between (the
    /// whole frame intervals from that capture to this one, less one) are traced as `driver_gap` drops numbered
    /// from `firstSequence`, and the frame is numbered after them. Counted at the first frame, not at the reopen:
    /// a device can reopen quickly yet deliver its first frame much later. nil: no gap to account for.
    public var resumeAfterCaptureNs: Int64?
    /// Realtime: delay before the first frame is due, so threads are up before the clock starts counting.
    public var startLeadNs: Int64 = 5_000_000
    /// The CPU the inference thread restricts itself to (`CPUPlacement.split()`); nil = wherever the others run.
    public var inferenceCPU: Int?
    /// How long the inference thread polls for its next request before it sleeps (`--inference-spin-ms`).
    /// Waking a sleeping thread on an idle core costs ~0.1 ms typically and 1–4 ms at the tail when the other cores
    /// are busy (the kernel's wake-up of an idle CPU; in a virtual machine, of a halted vCPU); a polling thread sees
    /// the request within microseconds. nil: one and a quarter frame intervals when `inferenceCPU` is set (the core
    /// is colorcam's: with a model slower than a frame the next request comes within one interval of the last
    /// result, so the poll almost always ends in work), none otherwise (polling would take a core the capture and
    /// output threads share). 0: never poll. `Int64.max`: always poll (the core never sleeps while the pipeline runs).
    public var inferenceSpinNs: Int64?

    public init() {}

    /// The frame interval used for pacing a source whose own interval is `sourceIntervalNs`: the `--fps` override
    /// or the source's.
    public func frameIntervalNs(sourceIntervalNs: Int64) -> Int64 { frameIntervalOverrideNs ?? sourceIntervalNs }

    /// The realtime output latency budget at that frame interval (nil in asap pace: no deadline).
    public func outputBudgetNs(frameIntervalNs: Int64) -> Int64? {
        pace == .asap ? nil : (outputBudgetNs ?? 2 * frameIntervalNs)
    }
}

/// What a run did, for the CLI's closing line and for tests.
public struct PipelineStats: Sendable {
    public var framesCaptured = 0
    public var framesOutput = 0
    public var inferences = 0
    public var drops: [DropReason: Int] = [:]
    public var maxInFlightSeen = 0
    public var durationNs: Int64 = 0
    /// Sequence number the next frame would have had (continue from here after a restart): one past the last
    /// number used, capture or `driver_gap` drop (not `firstSequence + framesCaptured` once the device skipped).
    public var nextSequence = 0
    /// Capture time of the last frame, on the pipeline clock (0 when none).
    public var lastCaptureTsNs: Int64 = 0

    public init() {}
}

/// A pipeline run that ended on an error: the error (its kind and message are the underlying error's) and how
/// far the run got (`stats`: frames, drops, next sequence number), so a daemon can add it to its totals, resume the
/// numbering and account for the gap.
public struct PipelineFailure: ColorcamError {
    public let underlying: Error
    /// What the run did before the error.
    public let stats: PipelineStats

    public var framesCaptured: Int { stats.framesCaptured }
    public var nextSequence: Int { stats.nextSequence }
    /// Capture time of the run's last frame (0 when it captured none).
    public var lastCaptureTsNs: Int64 { stats.lastCaptureTsNs }

    public var kind: FailureKind { (underlying as? ColorcamError)?.kind ?? .internalError }
    public var description: String { (underlying as? ColorcamError)?.description ?? "\(underlying)" }
}
