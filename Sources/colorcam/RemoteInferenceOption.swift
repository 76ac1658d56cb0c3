import ColorcamCore
import Infer
import Remote

/// `--infer-url`, `--infer-timeout-ms` and `--infer-fallback` on `live`, `replay` and `colorize`: the colorizer
/// runs on an Open Inference Protocol v2 server instead of this process's engine.
enum RemoteInferenceOption {
    static let valued: Set<String> = ["infer-url", "infer-timeout-ms", "infer-fallback", "infer-encoding"]

    static let help = """
          --infer-url http://HOST:PORT/v2/models/NAME[/versions/V]
                                    colorize on an inference server (Open Inference Protocol v2: Triton, KServe,
                                    MLServer, …) serving the same model (its metadata is checked against --model's);
                                    one request in flight, output never waits for it
          --infer-timeout-ms N      abandon a request the server has not answered in N ms (default 1000); the
                                    colours keep their age, and retries back off 250 ms → 4 s
          --infer-fallback none|local
                                    while the server fails or is away, colorize with the local model (default none)
          --infer-encoding binary|json
                                    tensors as the binary tensor data extension (default; Triton, KServe) or as JSON
                                    data lists (any v2 server, e.g. MLServer's REST; much slower)
        """

    struct Remote {
        var model: RemoteModel
        var fallbackLocal: Bool
    }

    /// The remote colorizer the arguments ask for (nil without `--infer-url`), checked against `bundle`'s model.
    /// - Throws: usage errors (exit 64), a server that is not there (69) or serves another model (65).
    static func resolve(_ a: Arguments, command: String, bundle: ModelBundle) throws -> Remote? {
        guard let text = a.string("infer-url") else {
            if let other = ["infer-timeout-ms", "infer-fallback", "infer-encoding"].first(where: { a.string($0) != nil }
            ) {
                throw UsageError("\(command): --\(other) needs --infer-url")
            }
            return nil
        }
        let url = try InferenceURL(text)
        let timeoutMs = try a.int("infer-timeout-ms", default: 1000, range: 10...600_000)!
        let fallback = try a.choice("infer-fallback", ["none", "local"], default: "none") == "local"
        let encoding = RemoteModel.TensorEncoding(
            rawValue: try a.choice(
                "infer-encoding", ["binary", "json"],
                default: "binary"))!
        let n = bundle.inputSizePx
        let local = try InferenceEngine(path: bundle.modelPath, inputShape: [1, 1, n, n])
        // With a local fallback a server that is away is not waited for: the stream starts colorizing locally.
        let model = try RemoteModel(
            url: url, matching: local, timeoutMs: timeoutMs, encoding: encoding,
            startupWaitMs: fallback ? 0 : 10_000, requireServer: !fallback)
        Log.info(
            "colorizing on \(url) (\(encoding.rawValue) tensors, timeout \(timeoutMs) ms"
                + (fallback ? ", local fallback)" : ")"))
        return Remote(model: model, fallbackLocal: fallback)
    }
}
