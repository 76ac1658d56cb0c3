import ColorcamCore

/// Why a photo is (re)colorized; written in the trace's `infer` events as `reason`.
public enum InferenceReason: UInt8, Sendable {
    /// The simulated stand-in, or a whole-frame run: no photo involved.
    case frame = 0
    /// A photo seen for the first time.
    case new = 1
    /// A known photo whose rectified luma changed enough since its colours were computed.
    case changed = 2

    public var name: String {
        switch self {
        case .frame: return "frame"
        case .new: return "new"
        case .changed: return "changed"
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
/// analysis (detect + track) on the capture thread, preparing a colorization job's input, running it on the
/// inference thread, and compositing the cached results into each output frame on the output thread.
///
/// Threading and ownership:
/// - `analyse` and `prepareInference` run on the capture thread, in frame order.
/// - `infer` runs on an inference thread; with `--max-in-flight N`, up to N calls at once on distinct slots.
/// - `composite` runs on the output thread, in frame order, after that frame's `analyse`.
/// - Input slots `0..<inputSlotCount` belong to the pipeline's scheduler: a slot passed to `prepareInference` is
///   owned by that job until `infer` returns for it or the job is dropped (superseded/busy), then reused.
/// - Per-frame state from `analyse` must be keyed by `frame.poolIndex` (frames come from a fixed pool of
///   `framePoolSize` buffers; a buffer is not reused before its frame has been composited).
/// Implementations must not allocate per frame in steady state, and must make `infer`'s published result and
/// `composite`'s reading of it safe across threads (e.g. a Mutex around a per-photo cache).
public protocol FrameProcessor: AnyObject, Sendable {
    /// Called once before the run with the pool and slot sizes the pipeline will use.
    func prepare(framePoolSize: Int, inputSlotCount: Int)
    /// Detects/tracks photos in `frame`; returns how many are in view (the trace's `detect` `photos`).
    func analyse(_ frame: FrameBuffer) -> Int
    /// Chooses what to colorize from this frame, if anything, and copies its input into `slot`.
    /// - Returns: nil when nothing needs colorizing now (no job is offered).
    func prepareInference(_ frame: FrameBuffer, slot: Int) -> InferenceRequest?
    /// Runs the model on `slot`'s input and publishes the result (e.g. into a per-photo cache).
    /// `frame`/`captureTsNs` identify the frame the input came from.
    /// - Returns: where it ran and whether it produced a result (a failed remote request publishes nothing: the
    ///   colours in view keep their age); the pipeline writes it into the trace.
    func infer(slot: Int, frame: Int, captureTsNs: Int64) -> InferenceOutcome
    /// Writes the cached results into `frame` in place.
    /// - Returns: the result the frame carries, or nil when it carries none.
    func composite(_ frame: FrameBuffer) -> CompositeStamp?
    /// True when the model is the diagnostic stand-in.
    var isSimulated: Bool { get }
    /// For the trace's `config` `model`.
    var label: String { get }
}
