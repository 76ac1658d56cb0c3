import ColorcamCore

/// Colorizes a whole image with a `ModelBundle`: Lab in, model, Lab out (the `tools/train/pipeline.py` recipe).
///
///     L (full resolution) → box-average by k = ⌊min(H, W) / N⌋ when k ≥ 2 → bilinear to N×N → model → ab N×N
///     → bilinear to H×W → Lab (own L, predicted ab) → sRGB, rounded to 8 bits
///
/// Bilinear resizes use half-pixel centres with edge clamping (ONNX Resize `linear`/`half_pixel`).
/// Lifecycle: `init` loads and prepares the engine and allocates the N×N buffers; `colorize` allocates only the
/// full-resolution planes of its image. One thread at a time per `Colorizer` (the engine is single-threaded).
public final class Colorizer {
    public let bundle: ModelBundle
    let engine: InferenceEngine
    /// Runs the model instead of `engine` when set (a remote server); `engine` still defines the tensors.
    let remote: ModelRunner?
    /// With `remote`: run `engine` when the server gives no result.
    let fallbackLocal: Bool
    var modelInput: [Float]
    var modelOutput: [Float]

    /// - Parameters:
    ///   - remote: a runner (an inference server) used instead of the local engine for the model run.
    ///   - fallbackLocal: run the local engine when `remote` gives no result (else `colorize` throws).
    public init(bundle: ModelBundle, remote: ModelRunner? = nil, fallbackLocal: Bool = false) throws {
        self.bundle = bundle
        self.remote = remote
        self.fallbackLocal = fallbackLocal
        let n = bundle.inputSizePx
        engine = try Self.engine(for: bundle)
        guard engine.outputShape == [1, 2, n, n] else {
            throw ModelBundleError(
                .badData, file: bundle.modelPath,
                "output shape \(engine.outputShape) is not ab at the input size [1, 2, \(n), \(n)]")
        }
        modelInput = [Float](repeating: 0, count: n * n)
        modelOutput = [Float](repeating: 0, count: 2 * n * n)
    }

    /// Colorizes `image` (its colours are ignored: only its L is used), following `hints` (positions in `image`'s
    /// pixels; none: the model's own colours).
    /// - Throws: `ModelRunFailed` when the remote runner gives no result and there is no local fallback;
    ///   `HintsRefused` for hints to a model without hint inputs or run on a server.
    public func colorize(_ image: RGBImage, hints: [ColourHint] = []) throws -> RGBImage {
        let w = image.widthPx, h = image.heightPx, n = bundle.inputSizePx
        let points = try setHints(hints, imageWidthPx: w, imageHeightPx: h)
        var lightness = [Float](repeating: 0, count: w * h)
        image.pixels.withUnsafeBufferPointer { Lab.lightnessFromRGB8($0.baseAddress!, &lightness, pixelCount: w * h) }
        let k = min(w, h) / n
        var source = lightness, sw = w, sh = h
        if k >= 2 { (source, sw, sh) = Self.boxReduce(lightness, widthPx: w, heightPx: h, factor: k) }
        Self.bilinear(source, widthPx: sw, heightPx: sh, into: &modelInput, outWidthPx: n, outHeightPx: n)
        if bundle.inputScale != 1 || bundle.inputOffset != 0 {
            for i in modelInput.indices { modelInput[i] = modelInput[i] * bundle.inputScale + bundle.inputOffset }
        }
        let outcome = modelInput.withUnsafeBufferPointer { i in
            modelOutput.withUnsafeMutableBufferPointer { o in
                runColorizer(local: engine, remote: remote, fallbackLocal: fallbackLocal, input: i, output: o)
            }
        }
        guard outcome.gaveResult else { throw ModelRunFailed(reason: outcome.failure) }
        points.withUnsafeBufferPointer { p in
            modelOutput.withUnsafeMutableBufferPointer {
                HintPoint.stamp(p, into: $0, widthPx: n, heightPx: n, inputSizePx: n, scale: bundle.outputScale)
            }
        }
        var a = [Float](repeating: 0, count: w * h), b = [Float](repeating: 0, count: w * h)
        modelOutput.withUnsafeBufferPointer { out in
            Self.bilinear(Array(out[0..<(n * n)]), widthPx: n, heightPx: n, into: &a, outWidthPx: w, outHeightPx: h)
            Self.bilinear(Array(out[(n * n)...]), widthPx: n, heightPx: n, into: &b, outWidthPx: w, outHeightPx: h)
        }
        var lab = [Float](repeating: 0, count: 3 * w * h)
        let s = bundle.outputScale
        for i in 0..<(w * h) { lab[3 * i] = lightness[i]; lab[3 * i + 1] = a[i] * s; lab[3 * i + 2] = b[i] * s }
        var pixels = [UInt8](repeating: 0, count: 3 * w * h)
        Lab.convertLabToRGB8(lab, &pixels, pixelCount: w * h)
        return RGBImage(widthPx: w, heightPx: h, pixels: pixels)
    }

    /// Prepares `bundle`'s model as a colorizer: L `[1, 1, N, N]` in, feeding its hint inputs when it declares them
    /// (zeros until set: no hints) and keeping its ab distribution for `tapped` when it declares one. Checks the
    /// output is ab, `[1, 2, H, W]`, and the distribution's shape. The one place a colorizer engine is made (its
    /// orientation head runs in an engine of its own, `orientationEngine(for:)`).
    public static func engine(for bundle: ModelBundle) throws -> InferenceEngine {
        let n = bundle.inputSizePx
        let engine = try InferenceEngine(
            path: bundle.modelPath, inputShape: [1, 1, n, n],
            feeding: bundle.hintInputs.map { [$0.ab, $0.mask] } ?? [],
            tapping: bundle.distribution.map { [$0.tensor] } ?? [])
        let out = engine.outputShape
        guard out.count == 4, out[0] == 1, out[1] == 2, out[2] >= 1, out[3] >= 1 else {
            throw ModelBundleError(
                .badData, file: bundle.modelPath,
                "output shape \(out) is not ab: want [1, 2, H, W] for input [1, 1, \(n), \(n)]")
        }
        if let d = bundle.distribution, let tapped = engine.tapped(d.tensor), tapped.shape != d.shape {
            throw ModelBundleError(
                .badData, file: bundle.modelPath,
                "distribution '\(d.tensor)' computes to \(tapped.shape), the manifest says \(d.shape)")
        }
        return engine
    }

    /// Prepares the part of `bundle`'s model that computes its orientation head (`ModelBundle.orientation`): the
    /// colorizer's graph cut at the head's tensor (`ONNXModel.truncated`), L `[1, 1, N, N]` in and the head's four
    /// probabilities out, feeding the hint inputs like `engine(for:)` (set them with `setHints`). Which way is up
    /// is asked of it (four runs, one per quarter turn) instead of four runs of the whole colorizer: the decoder,
    /// about half of a run, is not needed for it. Nil when the bundle has no head.
    /// - Throws: `ModelBundleError`/`InferError` when the model cannot be read or computes no such head.
    public static func orientationEngine(for bundle: ModelBundle) throws -> InferenceEngine? {
        guard let head = bundle.orientation else { return nil }
        let bytes = try readWholeFile(bundle.modelPath, what: "model file")
        guard let cut = try ONNXModel.decode(bytes, file: bundle.modelPath).truncated(at: head.tensor) else {
            throw ModelBundleError(
                .badData, file: bundle.modelPath, "no node computes the orientation head '\(head.tensor)'")
        }
        let n = bundle.inputSizePx
        let engine = try InferenceEngine(
            model: cut, file: bundle.modelPath, inputShape: [1, 1, n, n],
            feeding: bundle.hintInputs.map { [$0.ab, $0.mask] } ?? [])
        guard engine.outputShape == [1, 4] else {
            throw ModelBundleError(
                .badData, file: bundle.modelPath,
                "orientation '\(head.tensor)' computes to \(engine.outputShape), want [1, 4]: one probability per "
                    + "quarter turn")
        }
        return engine
    }

    /// Writes `hints` into `engine`'s hint inputs for its next run (none: zeros). False, with nothing written, when
    /// `bundle` declares no hint inputs (then `hints` cannot be followed). Allocates nothing; the engine's thread.
    @discardableResult
    public static func setHints(
        _ hints: UnsafeBufferPointer<HintPoint>, engine: InferenceEngine, bundle: ModelBundle
    ) -> Bool {
        guard let names = bundle.hintInputs, let ab = engine.fedInput(names.ab), let mask = engine.fedInput(names.mask)
        else { return false }
        HintPoint.writePlanes(hints, sizePx: bundle.inputSizePx, ab: ab, mask: mask)
        return true
    }

    /// Writes the hint inputs for the next run from hints on the image (`w`×`h` pixels); returns them in the model's
    /// coordinates (for `HintPoint.stamp`).
    func setHints(_ hints: [ColourHint], imageWidthPx w: Int, imageHeightPx h: Int) throws -> [HintPoint] {
        if bundle.hintInputs == nil {
            if !hints.isEmpty {
                throw HintsRefused.noHintInputs(bundle)
            }
            return []
        }
        if !hints.isEmpty && remote != nil {
            throw HintsRefused.remote(bundle)
        }
        if let outside = hints.first(where: { !(0..<Double(w)).contains($0.xPx) || !(0..<Double(h)).contains($0.yPx) })
        {
            throw HintsRefused(
                model: bundle.modelPath, why: "hint at \(outside.xPx),\(outside.yPx) lies outside the \(w)x\(h) image")
        }
        let points = hints.map { hint in
            let (a, b) = hint.ab
            return HintPoint(u: Float((hint.xPx + 0.5) / Double(w)), v: Float((hint.yPx + 0.5) / Double(h)), a: a, b: b)
        }
        points.withUnsafeBufferPointer { _ = Self.setHints($0, engine: engine, bundle: bundle) }
        return points
    }

    /// Means of `factor`×`factor` blocks; the last partial blocks average the pixels they have.
    static func boxReduce(_ plane: [Float], widthPx w: Int, heightPx h: Int, factor k: Int) -> ([Float], Int, Int) {
        let ow = (w + k - 1) / k, oh = (h + k - 1) / k
        var sum = [Double](repeating: 0, count: ow * oh), count = [Double](repeating: 0, count: ow * oh)
        for y in 0..<h {
            let row = (y / k) * ow
            for x in 0..<w {
                sum[row + x / k] += Double(plane[y * w + x])
                count[row + x / k] += 1
            }
        }
        return ((0..<(ow * oh)).map { Float(sum[$0] / count[$0]) }, ow, oh)
    }

    /// Half-pixel-centre bilinear resize with edge clamping.
    static func bilinear(
        _ src: [Float], widthPx w: Int, heightPx h: Int, into dst: inout [Float],
        outWidthPx ow: Int, outHeightPx oh: Int
    ) {
        let sx = Double(w) / Double(ow), sy = Double(h) / Double(oh)
        var x0 = [Int](repeating: 0, count: ow), x1 = x0, fx = [Double](repeating: 0, count: ow)
        for x in 0..<ow {
            let p = min(max((Double(x) + 0.5) * sx - 0.5, 0), Double(w - 1))
            x0[x] = Int(p.rounded(.down)); x1[x] = min(x0[x] + 1, w - 1); fx[x] = p - Double(x0[x])
        }
        for y in 0..<oh {
            let p = min(max((Double(y) + 0.5) * sy - 0.5, 0), Double(h - 1))
            let y0 = Int(p.rounded(.down)), y1 = min(y0 + 1, h - 1), fy = p - Double(y0)
            for x in 0..<ow {
                let top = Double(src[y0 * w + x0[x]]) * (1 - fx[x]) + Double(src[y0 * w + x1[x]]) * fx[x]
                let bottom = Double(src[y1 * w + x0[x]]) * (1 - fx[x]) + Double(src[y1 * w + x1[x]]) * fx[x]
                dst[y * ow + x] = Float(top * (1 - fy) + bottom * fy)
            }
        }
    }
}

/// Hints given to a model that cannot take them (exit 64: a usage error).
public struct HintsRefused: ColorcamError {
    public let model: String
    public let why: String
    public init(model: String, why: String) {
        self.model = model
        self.why = why
    }
    public var kind: FailureKind { .usage }
    public var description: String { "\(model): cannot follow colour hints: \(why)" }

    /// `bundle` declares no hint inputs.
    public static func noHintInputs(_ bundle: ModelBundle) -> HintsRefused {
        HintsRefused(model: bundle.modelPath, why: "its manifest declares no hint inputs")
    }

    /// The model runs on an inference server, whose requests carry L only.
    public static func remote(_ bundle: ModelBundle) -> HintsRefused {
        HintsRefused(model: bundle.modelPath, why: "hints run on the local engine, not on an inference server")
    }
}

/// A model run that gave no result (a remote server's failure; its log line says why).
public struct ModelRunFailed: ColorcamError {
    public let reason: InferenceFailure
    public init(reason: InferenceFailure) { self.reason = reason }
    public var kind: FailureKind { .unavailable }
    public var description: String { "the inference server gave no result (\(reason.name)); see the warning above" }
}
