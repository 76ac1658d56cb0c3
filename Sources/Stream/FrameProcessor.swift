import ColorcamCore

/// Why a photo is (re)colorized; written in the trace's `infer` events as `reason`.
public enum InferenceReason: UInt8, Sendable {
    /// The simulated stand-in, or a whole-frame run: no photo involved.
    case frame = 0
    /// A photo seen for the first time.
    case new = 1
    /// A known photo whose rectified luma changed enough since its colours were computed.
    case changed = 2
    /// A photo given a colour hint since its colours were computed.
    case hint = 3

    public var name: String {
        switch self {
        case .frame: return "frame"
        case .new: return "new"
        case .changed: return "changed"
        case .hint: return "hint"
        }
    }
}

/// What a processor wants colorized for one frame: which photo and why.
public struct InferenceRequest: Sendable, Equatable {
    /// The photo's track id (-1 for whole-frame work).
    public var photo: Int
    public var reason: InferenceReason

    public init(photo: Int, reason: InferenceReason) {
        self.photo = photo
        self.reason = reason
    }
}

/// Which inference result a composited frame carries: the frame it was computed from and that frame's capture
/// time (the trace's `result_frame` and `result_age_us`). With several photos, the stalest one in view.
public struct CompositeStamp: Sendable, Equatable {
    public var resultFrame: Int
    public var resultCaptureTsNs: Int64

    public init(resultFrame: Int, resultCaptureTsNs: Int64) {
        self.resultFrame = resultFrame
        self.resultCaptureTsNs = resultCaptureTsNs
    }
}

/// The per-frame work around the scheduler, plugged in by the CLI (Stream never imports Detect or Infer):
/// analysis (detect + track) on the capture stage, preparing an inference job's input, running it on an inference
/// stage, and compositing the results into each output frame on the output stage. The product's photo colorizer is
/// one; the diagnostic `SimulatedInference` is another.
///
/// Threading and ownership:
/// - `analyse` and `prepareInference` run on the capture stage, in frame order.
/// - `infer` runs on an inference stage; with `--max-in-flight N`, up to N calls at once on distinct slots.
/// - `composite` runs on the output stage, in frame order, after that frame's `analyse`.
/// - Under `Pipeline.run()` each stage is a thread of its own; under `PipelineStepper` all run on one thread.
/// - Input slots `0..<inputSlotCount` belong to the pipeline's scheduler: a slot passed to `prepareInference` is
///   owned by that job until `infer` returns for it or the job is dropped (superseded/busy), then reused.
/// - Per-frame state from `analyse` must be keyed by `frame.poolIndex` (frames come from a fixed pool of
///   `framePoolSize` buffers; a buffer is not reused before its frame has been composited).
/// Implementations must not allocate per frame in steady state, and must make `infer`'s published result and
/// `composite`'s reading of it safe across threads (e.g. a Mutex around a per-photo cache).
public protocol FrameProcessor: AnyObject, Sendable {
    /// Called once before the run with the pool and slot sizes the pipeline will use.
    func prepare(framePoolSize: Int, inputSlotCount: Int)
    /// Detects/tracks photos in `frame`.
    /// - Returns: how many are in view (the trace's `detect` `photos`), or nil when this processor detects nothing
    ///   (no `detect` span is traced).
    func analyse(_ frame: FrameBuffer) -> Int?
    /// Chooses what to colorize from this frame, if anything, and copies its input into `slot`.
    /// - Parameter inferenceIdle: whether no inference is running or waiting in the scheduler. A processor that
    ///   asks only when idle runs one inference at a time and never has a job superseded or refused.
    /// - Returns: nil when nothing needs colorizing now (no job is offered).
    func prepareInference(_ frame: FrameBuffer, slot: Int, inferenceIdle: Bool) -> InferenceRequest?
    /// Runs the model on `slot`'s input and publishes the result (e.g. into a per-photo cache).
    /// `frame`/`captureTsNs` identify the frame the input came from.
    /// - Returns: where it ran and whether it produced a result (a failed remote request publishes nothing: the
    ///   colours in view keep their age); the pipeline writes it into the trace.
    func infer(slot: Int, frame: Int, captureTsNs: Int64) -> InferenceOutcome
    /// Writes the results into `frame` in place.
    /// - Parameter scheduled: the result the scheduler gives the frame: its own in asap pace, else the latest
    ///   finished inference (nil before the first).
    /// - Returns: the result the frame carries, or nil when it carries none.
    func composite(_ frame: FrameBuffer, scheduled: CompositeStamp?) -> CompositeStamp?
    /// True when the model is the diagnostic stand-in.
    var isSimulated: Bool { get }
    /// For the trace's `config` `model`.
    var label: String { get }
}
