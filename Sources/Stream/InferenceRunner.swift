import ColorcamCore

/// What the scheduler runs for an admitted frame: the colorizer, or the labelled simulation.
///
/// Lifecycle: created ready → `run` many times → released. Threading: `run` is called only from the inference
/// thread(s); with `--max-in-flight N` up to N calls run at once, each on its own input.
public protocol InferenceRunner: AnyObject, Sendable {
    /// True for the diagnostic stand-in; the trace and every report say so.
    var isSimulated: Bool { get }
    /// A short description for the trace's `config` (model name, or `simulated 90±5 ms spin`).
    var label: String { get }
    /// Runs inference for `frame`. Blocks for the inference's duration. (Runners that need pixels plug in as a
    /// `FrameProcessor`, which owns its inputs.)
    func run(frame: Int)
}
