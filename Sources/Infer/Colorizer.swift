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
        engine = try InferenceEngine(
            path: bundle.modelPath, inputShape: [1, 1, n, n],
            feeding: bundle.hintInputs.map { [$0.ab, $0.mask] } ?? [])
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
        try setHints(hints, imageWidthPx: w, imageHeightPx: h)
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

    /// Writes the hint inputs for the next run: zeros (no hints), then each hint's chroma over its patch at the
    /// model's resolution (the image point mapped as the input resize maps it; later hints win where patches meet).
    func setHints(_ hints: [ColourHint], imageWidthPx w: Int, imageHeightPx h: Int) throws {
        guard let names = bundle.hintInputs, let abPlane = engine.fedInput(names.ab),
            let maskPlane = engine.fedInput(names.mask)
        else {
            if !hints.isEmpty {
                throw HintsRefused(model: bundle.modelPath, why: "its manifest declares no hint inputs")
            }
            return
        }
        if !hints.isEmpty && remote != nil {
            throw HintsRefused(
                model: bundle.modelPath, why: "hints run on the local engine, not on an inference server")
        }
        let n = bundle.inputSizePx
        abPlane.update(repeating: 0)
        maskPlane.update(repeating: 0)
        let r = ColourHint.patchRadiusPx
        if let outside = hints.first(where: { !(0..<Double(w)).contains($0.xPx) || !(0..<Double(h)).contains($0.yPx) })
        {
            throw HintsRefused(
                model: bundle.modelPath, why: "hint at \(outside.xPx),\(outside.yPx) lies outside the \(w)x\(h) image")
        }
        for hint in hints {
            let cx = min(max(Int(((hint.xPx + 0.5) * Double(n) / Double(w) - 0.5).rounded()), 0), n - 1)
            let cy = min(max(Int(((hint.yPx + 0.5) * Double(n) / Double(h) - 0.5).rounded()), 0), n - 1)
            let (a, b) = hint.ab
            for y in max(0, cy - r)...min(n - 1, cy + r) {
                for x in max(0, cx - r)...min(n - 1, cx + r) {
                    abPlane[y * n + x] = a
                    abPlane[n * n + y * n + x] = b
                    maskPlane[y * n + x] = 1
                }
            }
        }
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
    public var kind: FailureKind { .usage }
    public var description: String { "\(model): cannot follow colour hints: \(why)" }
}

/// A model run that gave no result (a remote server's failure; its log line says why).
public struct ModelRunFailed: ColorcamError {
    public let reason: InferenceFailure
    public init(reason: InferenceFailure) { self.reason = reason }
    public var kind: FailureKind { .unavailable }
    public var description: String { "the inference server gave no result (\(reason.name)); see the warning above" }
}
