import ColorcamCore

/// Runs the colorizer graph on one input: colorcam's own `InferenceEngine`, or a remote inference server
/// (`Remote.RemoteModel`). The pipeline's colour processor and `colorize --whole` take either.
///
/// Threading: one thread at a time per runner. Ownership: `input`/`output` are borrowed for the call; `output` is
/// written only when the outcome succeeded (a failed run leaves it as it was).
public protocol ModelRunner: AnyObject {
    var inputName: String { get }
    var outputName: String { get }
    var inputShape: [Int] { get }
    var outputShape: [Int] { get }
    /// False while a request would not be tried now (a remote server backing off after a failure); read from any
    /// thread.
    var acceptsRequests: Bool { get }
    /// Runs the model once; what happened (where, whether it produced `output`, how long its parts took).
    func runModel(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) -> InferenceOutcome
}

extension InferenceEngine: ModelRunner {
    public var acceptsRequests: Bool { true }

    /// A local run: always produces its output.
    public func runModel(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>)
        -> InferenceOutcome {
        run(input: input, output: output)
        return .local
    }
}
