/// The single-in-flight admission rule (MediaPipe FlowLimiterCalculator semantics), as a pure value: no threads,
/// no clock. The pipeline wraps it in a `Mutex`; tests drive it directly.
///
/// At most `maxInFlight` jobs run at once. A job offered while all are running waits in a newest-wins queue of
/// `queueCapacity` places (default 1: one slot); when the queue is full the oldest waiting job is pushed out
/// (`superseded`). With `queueCapacity == 0` a job offered while busy is refused (`busy`). When a job finishes,
/// the oldest waiting job starts at once — there is no other queue anywhere.
///
/// Memory: the queue's storage is reserved at init; `offer`/`finish` never allocate.
public struct FlowLimiter<Job> {
    public let maxInFlight: Int
    public let queueCapacity: Int
    /// Jobs currently running.
    public private(set) var inFlight = 0
    private var waiting: [Job] = []

    /// What happened to an offered job.
    public enum Admission {
        /// Start this job now (it is counted in flight).
        case start(Job)
        /// The job waits; `superseded` is the older job it pushed out of the queue, if any.
        case queued(superseded: Job?)
        /// Busy and no queue: the job is refused.
        case rejected(Job)
    }

    public init(maxInFlight: Int = 1, queueCapacity: Int = 1) {
        precondition(maxInFlight >= 1, "maxInFlight must be at least 1")
        precondition(queueCapacity >= 0, "queueCapacity must be non-negative")
        self.maxInFlight = maxInFlight
        self.queueCapacity = queueCapacity
        waiting.reserveCapacity(queueCapacity)
    }

    /// Jobs waiting to start.
    public var queueDepth: Int { waiting.count }

    /// Whether a job offered now would start at once.
    public var canStart: Bool { inFlight < maxInFlight }

    /// Whether no job is running or waiting.
    public var isIdle: Bool { inFlight == 0 && waiting.isEmpty }

    /// Offers a job for inference.
    public mutating func offer(_ job: Job) -> Admission {
        if inFlight < maxInFlight {
            inFlight += 1
            return .start(job)
        }
        if queueCapacity == 0 { return .rejected(job) }
        var pushedOut: Job?
        if waiting.count == queueCapacity { pushedOut = waiting.removeFirst() }
        waiting.append(job)
        return .queued(superseded: pushedOut)
    }

    /// Records that a running job finished.
    /// - Returns: the next job to start now (already counted in flight), or nil when none is waiting.
    public mutating func finish() -> Job? {
        precondition(inFlight > 0, "finish() without a job in flight")
        inFlight -= 1
        guard !waiting.isEmpty else { return nil }
        inFlight += 1
        return waiting.removeFirst()
    }

    /// Removes and returns every waiting job (shutdown).
    public mutating func drainQueue() -> [Job] {
        defer { waiting.removeAll(keepingCapacity: true) }
        return waiting
    }
}
