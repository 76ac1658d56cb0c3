import ColorcamCore
import Foundation

/// A colorizer model and how to feed it: a directory with `manifest.json` + ONNX file, or a bare ONNX file
/// plus a preset.
///
/// The model maps L (1×1×H×W, after `L × inputScale + inputOffset`) to ab (1×2×H×W at the input's size,
/// multiplied by `outputScale`). Presets for bare files:
/// - `colorcam`: this project's export (raw L in, ab out; normalisation inside the graph);
/// - `eccv16`: an ONNX export of the PyTorch port of Zhang et al.'s ECCV16 model, which normalises L and decodes
///   its 313-bin softmax to ab (×110, ×4 upsampling) inside the graph, so it takes raw L and gives ab;
/// - `siggraph17`: likewise, for exports whose hint inputs (ab hints, mask) were fixed to zero at export; a graph
///   that still has required hint inputs is refused by the engine (one run-time input unless fed).
/// A bundle whose manifest declares `hints.inputs` takes colour hints (`hintInputs`; `Colorizer` feeds them).
/// Value type; immutable after loading.
public struct ModelBundle: Sendable, Equatable {
    public enum Preset: String, Sendable, CaseIterable {
        case colorcam, eccv16, siggraph17
    }

    public var name: String
    public var modelPath: String
    public var inputSizePx: Int
    public var inputScale: Float
    public var inputOffset: Float
    public var outputScale: Float
    public var head: String
    /// The graph's hint inputs when the manifest declares them (`hints`), else nil: the model takes no hints.
    public var hintInputs: HintInputs?
    /// The graph's ab distribution when the manifest declares it (`distribution`), else nil.
    public var distribution: Distribution?
    /// The graph's orientation head when the manifest declares it (`orientation`), else nil: views are coloured as
    /// they are fed.
    public var orientation: Orientation?

    /// A colorizer's orientation head: an intermediate tensor `[1, 4]` holding the probabilities that the picture fed
    /// is its upright picture turned 0, 1, 2 or 3 quarter turns counterclockwise, and how often a print's view is fed
    /// upright before any turn (`priorUpright`; the other three turns share the rest). A print on a table has no up
    /// the detector can see; the product asks the head which way is up (`UprightVote`).
    public struct Orientation: Sendable, Equatable {
        public var tensor: String
        public var priorUpright: Double
        public init(tensor: String, priorUpright: Double) {
            self.tensor = tensor
            self.priorUpright = priorUpright
        }
    }

    /// A colorizer's ab distribution: an intermediate tensor `[1, Q, H, W]` holding, per cell of an H×W grid over the
    /// picture, the probability of each of Q ab bins, and the bins' ab (Lab units). What the model thinks a point's
    /// colour could be — the preview's picker offers its most likely colours (`ABSuggestions`).
    public struct Distribution: Sendable, Equatable {
        public var tensor: String
        public var shape: [Int]
        /// Per bin: a, b.
        public var binA: [Float]
        public var binB: [Float]
        public init(tensor: String, shape: [Int], binA: [Float], binB: [Float]) {
            self.tensor = tensor
            self.shape = shape
            self.binA = binA
            self.binB = binB
        }
    }

    /// The names of a colorizer graph's hint inputs: the ab hint image (1×2×N×N) and the mask (1×1×N×N).
    public struct HintInputs: Sendable, Equatable {
        public var ab: String
        public var mask: String
        public init(ab: String, mask: String) {
            self.ab = ab
            self.mask = mask
        }
    }

    public init(
        name: String, modelPath: String, inputSizePx: Int = 256, inputScale: Float = 1, inputOffset: Float = 0,
        outputScale: Float = 1, head: String = "ab"
    ) {
        self.name = name
        self.modelPath = modelPath
        self.inputSizePx = inputSizePx
        self.inputScale = inputScale
        self.inputOffset = inputOffset
        self.outputScale = outputScale
        self.head = head
    }

    /// A bare ONNX file read with a preset.
    public static func bare(_ path: String, preset: Preset) -> ModelBundle {
        ModelBundle(name: "\(preset.rawValue) (\(path))", modelPath: path)
    }

    /// Loads `path`: a directory with `manifest.json`, or an `.onnx` file (with `preset`, default `colorcam`).
    /// Throws `ImageFileError`-style one-line errors naming the manifest and the field.
    public static func load(_ path: String, preset: Preset? = nil) throws -> ModelBundle {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ModelBundleError(.missingInput, file: path, "no such model file or bundle directory")
        }
        if !isDirectory.boolValue { return bare(path, preset: preset ?? .colorcam) }
        if let preset {
            throw ModelBundleError(
                .usage, file: path, "--preset \(preset.rawValue) applies to a bare .onnx file, not a bundle")
        }
        let manifestPath = (path as NSString).appendingPathComponent("manifest.json")
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw ModelBundleError(.missingInput, file: manifestPath, "bundle directory has no manifest.json")
        }
        return try parseManifest(data, directory: path, manifestPath: manifestPath)
    }

    /// Reads the fields colorcam needs from a manifest (see Models/colorcam-default/manifest.json).
    public static func parseManifest(_ data: Data, directory: String, manifestPath: String) throws -> ModelBundle {
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ModelBundleError(.badData, file: manifestPath, "not a JSON object")
        }
        func field<T>(_ object: [String: Any], _ key: String, _ where_: String) throws -> T {
            guard let value = object[key] as? T else {
                throw ModelBundleError(.badData, file: manifestPath, "missing or mistyped '\(where_)\(key)'")
            }
            return value
        }
        let file: String = try field(root, "file", "")
        let input: [String: Any] = try field(root, "input", "")
        let output: [String: Any] = try field(root, "output", "")
        let shape: [Int] = try field(input, "shape", "input.")
        guard shape.count == 4, shape[0] == 1, shape[1] == 1, shape[2] == shape[3], (16...4096).contains(shape[2])
        else {
            throw ModelBundleError(
                .badData, file: manifestPath, "input.shape must be [1, 1, N, N] with 16 <= N <= 4096")
        }
        let scale = (input["scale"] as? Double) ?? 1, offset = (input["offset"] as? Double) ?? 0
        let outScale = (output["scale"] as? Double) ?? 1
        guard !file.contains("/") else {
            throw ModelBundleError(.badData, file: manifestPath, "'file' must be a name inside the bundle")
        }
        var bundle = ModelBundle(
            name: (root["name"] as? String) ?? directory,
            modelPath: (directory as NSString).appendingPathComponent(file),
            inputSizePx: shape[2], inputScale: Float(scale), inputOffset: Float(offset),
            outputScale: Float(outScale), head: (root["head"] as? String) ?? "ab")
        if let hints = root["hints"] {
            bundle.hintInputs = try hintInputs(hints, size: shape[2], manifestPath: manifestPath)
        }
        if let distribution = root["distribution"] {
            bundle.distribution = try self.distribution(distribution, manifestPath: manifestPath)
        }
        if let orientation = root["orientation"] {
            let why = "'orientation' must give a tensor name and prior_upright, a probability between 0 and 1"
            guard let fields = orientation as? [String: Any], let tensor = fields["tensor"] as? String,
                let prior = fields["prior_upright"] as? Double, prior > 0, prior < 1
            else {
                throw ModelBundleError(.badData, file: manifestPath, why)
            }
            bundle.orientation = Orientation(tensor: tensor, priorUpright: prior)
        }
        return bundle
    }

    /// `distribution`: `tensor` (a name), `shape` [1, Q, H, W], `bins_ab` (Q pairs [a, b]).
    static func distribution(_ value: Any, manifestPath: String) throws -> Distribution {
        let why = "'distribution' must give a tensor name, its shape [1, Q, H, W] and bins_ab: Q pairs [a, b]"
        guard let fields = value as? [String: Any], let tensor = fields["tensor"] as? String,
            let shape = fields["shape"] as? [Int], shape.count == 4, shape[0] == 1, shape.allSatisfy({ $0 >= 1 }),
            shape[1] <= Int(UInt16.max), let bins = fields["bins_ab"] as? [[Double]], bins.count == shape[1],
            bins.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isFinite) })
        else {
            throw ModelBundleError(.badData, file: manifestPath, why)
        }
        return Distribution(
            tensor: tensor, shape: shape, binA: bins.map { Float($0[0]) }, binB: bins.map { Float($0[1]) })
    }

    /// `hints.inputs`: two entries, the ab hint image ([1, 2, N, N]) and the mask ([1, 1, N, N]), each with a `name`.
    static func hintInputs(_ hints: Any, size n: Int, manifestPath: String) throws -> HintInputs {
        let why =
            "'hints.inputs' must list the ab hint image [1, 2, \(n), \(n)] and the mask [1, 1, \(n), \(n)], each with a name"
        guard let inputs = (hints as? [String: Any])?["inputs"] as? [[String: Any]], inputs.count == 2,
            let ab = inputs[0]["name"] as? String, let mask = inputs[1]["name"] as? String,
            inputs[0]["shape"] as? [Int] == [1, 2, n, n], inputs[1]["shape"] as? [Int] == [1, 1, n, n]
        else {
            throw ModelBundleError(.badData, file: manifestPath, why)
        }
        return HintInputs(ab: ab, mask: mask)
    }
}

/// A bundle that cannot be used: one line naming the manifest or model file (same shape as an image file error).
public typealias ModelBundleError = ImageFileError
