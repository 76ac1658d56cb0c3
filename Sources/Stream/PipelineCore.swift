/// A frame's request for inference, as the scheduler sees it. Times are nanoseconds on the pipeline clock.
public struct InferenceJob: Sendable, Equatable {
    /// The frame's sequence number.
    public var frame: Int
    public var captureTsNs: Int64
    /// When the frame was offered to the scheduler.
    public var arrivedNs: Int64
    /// When the scheduler handed the job to an inference worker (set when it starts or leaves the queue).
    public var requestedNs: Int64 = 0
    /// Index of the input slot holding the job's input (`-1` until the pipeline assigns one).
    public var inputSlot: Int = -1
    /// The photo (track id) to colorize, -1 for whole-frame or simulated work.
    public var photo: Int = -1
    public var reason: InferenceReason = .frame

    public init(frame: Int, captureTsNs: Int64, arrivedNs: Int64, inputSlot: Int = -1) {
        self.frame = frame
        self.captureTsNs = captureTsNs
        self.arrivedNs = arrivedNs
        self.inputSlot = inputSlot
    }
}

/// The most recent finished inference: which frame it was for and when it finished.
public struct InferenceResultStamp: Sendable, Equatable {
    public var frame: Int
    public var captureTsNs: Int64
    public var finishedNs: Int64
}

/// The pipeline's decisions, separated from its stages: admission (via `FlowLimiter`), the latest result each output
/// frame carries, and the output deadline. Every decision is traced here, so the trace cannot disagree with what
/// happened.
///
/// Threading: a value; the pipeline keeps it in a `Locked` (its stages run on threads, or all on `PipelineStepper`'s
/// one). Methods never block or allocate.
public struct PipelineCore {
    public private(set) var limiter: FlowLimiter<InferenceJob>
    public private(set) var latestResult: InferenceResultStamp?
    /// Highest number of jobs seen in flight at once (a check on the limiter, reported in stats).
    public private(set) var maxInFlightSeen = 0
    public private(set) var dropCounts: [DropReason: Int] = [:]
    public private(set) var inferencesStarted = 0
    /// Frames whose inference is running now (at most `maxInFlight`; storage reserved at init).
    private var runningFrames: [Int] = []

    public init(maxInFlight: Int, queueCapacity: Int) {
        limiter = FlowLimiter(maxInFlight: maxInFlight, queueCapacity: queueCapacity)
        runningFrames.reserveCapacity(maxInFlight)
        for reason in DropReason.allCases { dropCounts[reason] = 0 }
    }

    /// Whether `frame`'s inference, started earlier, has finished. `asap` output waits on this for its own frame:
    /// `latestResult` alone cannot say, because a later frame's inference may finish first (`maxInFlight` > 1) or
    /// before the output thread looks (it then names the later frame).
    public func hasFinished(frame: Int) -> Bool { !runningFrames.contains(frame) }

    /// Offers a frame's inference at `nowNs`.
    /// - Returns: the job to start now (its `requestedNs` set to `nowNs`), and the job that lost its place and
    ///   whose input slot must be released (superseded or refused), if any.
    public mutating func offer(_ job: InferenceJob, nowNs: Int64, trace: TraceSink)
        -> (start: InferenceJob?, released: InferenceJob?)
    {
        var result: (start: InferenceJob?, released: InferenceJob?) = (nil, nil)
        switch limiter.offer(job) {
        case .start(var started):
            started.requestedNs = nowNs
            inferencesStarted += 1
            runningFrames.append(started.frame)
            result.start = started
            trace.record(.counter(.inFlight, value: limiter.inFlight, atNs: nowNs))
        case .queued(let superseded):
            if let superseded {
                noteDrop(frame: superseded.frame, reason: .superseded, atNs: nowNs, track: .capture, trace: trace)
                result.released = superseded
            }
            trace.record(.counter(.queueDepth, value: limiter.queueDepth, atNs: nowNs))
        case .rejected(let refused):
            noteDrop(frame: refused.frame, reason: .busy, atNs: nowNs, track: .capture, trace: trace)
            result.released = refused
        }
        maxInFlightSeen = max(maxInFlightSeen, limiter.inFlight)
        return result
    }

    /// Records that `job` finished at `nowNs`; publishes it as the latest result (if newer than the current one).
    /// - Returns: the next job to start now (its `requestedNs` = `nowNs`), if one was waiting.
    public mutating func finish(_ job: InferenceJob, nowNs: Int64, trace: TraceSink) -> InferenceJob? {
        if latestResult == nil || latestResult!.frame < job.frame {
            latestResult = InferenceResultStamp(frame: job.frame, captureTsNs: job.captureTsNs, finishedNs: nowNs)
        }
        if let index = runningFrames.firstIndex(of: job.frame) { runningFrames.remove(at: index) }
        let hadQueue = limiter.queueDepth > 0
        guard var next = limiter.finish() else {
            trace.record(.counter(.inFlight, value: limiter.inFlight, atNs: nowNs))
            return nil
        }
        next.requestedNs = nowNs
        inferencesStarted += 1
        runningFrames.append(next.frame)
        if hadQueue { trace.record(.counter(.queueDepth, value: limiter.queueDepth, atNs: nowNs)) }
        maxInFlightSeen = max(maxInFlightSeen, limiter.inFlight)
        return next
    }

    /// Whether a frame captured at `captureTsNs` can still be output at `nowNs` given a latency budget
    /// (`deadlineNs` nil = no deadline, as in `--pace asap`). A late frame is counted and traced as `late`.
    public mutating func admitOutput(
        frame: Int, captureTsNs: Int64, nowNs: Int64, budgetNs: Int64?,
        trace: TraceSink
    ) -> Bool {
        if let budgetNs, nowNs - captureTsNs > budgetNs {
            noteDrop(frame: frame, reason: .late, atNs: nowNs, track: .output, trace: trace)
            return false
        }
        return true
    }

    /// Counts and traces a drop decided elsewhere (e.g. a capture that found no free buffer, a driver gap).
    public mutating func noteDrop(frame: Int, reason: DropReason, atNs: Int64, track: TraceTrack, trace: TraceSink) {
        dropCounts[reason, default: 0] += 1
        trace.record(.drop(frame: frame, reason: reason, atNs: atNs, track: track))
    }

    /// Empties the queue at shutdown; returns the jobs whose input slots must be released.
    public mutating func drainQueue() -> [InferenceJob] { limiter.drainQueue() }
}
