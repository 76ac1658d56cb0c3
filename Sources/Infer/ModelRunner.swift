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

/// Runs the colorizer once: on `remote` when given (else on `local`), and with `fallbackLocal` on `local` when the
/// server gives no result (the outcome then says `.fallback` and keeps why the server was not used). The one place
/// that decides between a server and the local engine, for the pipeline's processor and `Colorizer`.
public func runColorizer(
    local: InferenceEngine, remote: ModelRunner?, fallbackLocal: Bool,
    input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>
)
    -> InferenceOutcome
{
    guard let remote else { return local.runModel(input: input, output: output) }
    var outcome = remote.runModel(input: input, output: output)
    if !outcome.succeeded && fallbackLocal {
        local.run(input: input, output: output)
        outcome.backend = .fallback
    }
    return outcome
}

extension InferenceEngine: ModelRunner {
    public var acceptsRequests: Bool { true }

    /// A local run: always produces its output.
    public func runModel(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>)
        -> InferenceOutcome
    {
        run(input: input, output: output)
        return .local
    }
}
