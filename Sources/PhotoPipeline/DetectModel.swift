import ColorcamCore
import Detect
import Foundation
import Infer

/// A learned print segmenter's model (see `CNNPrintSegmenter` for the tensor contract): a bundle directory
/// (`manifest.json` + `model.onnx`) or a bare ONNX file. Value type; immutable after loading. Loading reads the
/// manifest only; the ONNX file is decoded when a segmenter is made for a frame geometry.
///
/// Manifest fields read (others are ignored): `kind` (must be `detect-segmenter` when present), `file` (the model's
/// name inside the bundle, default `model.onnx`), `cell_px_per_coarse_factor` (must be 2 when present) and
/// `multiple` (the model's size multiple; must divide 8 when present).
public struct DetectModel: Sendable, Equatable {
    /// The bundle directory or file as found.
    public var name: String
    /// The ONNX file.
    public var modelPath: String

    public init(name: String, modelPath: String) {
        self.name = name
        self.modelPath = modelPath
    }

    /// The bundle's directory name in `Models/` and on the model search path.
    public static let defaultBundleName = "detect-default"

    /// Where the default bundle is looked for, in order: `Models/detect-default` under the working directory, then
    /// each `ModelSearchPath` directory's `detect-default` (the colorizer's search path).
    public static func defaultCandidates() -> [String] {
        ["Models/" + defaultBundleName] + ModelSearchPath.directories().map { $0 + "/" + defaultBundleName }
    }

    /// The model a `--detect-model` option names: `none` → nil (no segmenter); nil (option not given) → the first
    /// default bundle directory that exists, loaded, or nil when there is none; anything else → `load(_:)`.
    /// - Throws: `ModelBundleError`: `.missingInput` (exit 66) for a missing explicit path or a bundle without its
    ///   files, `.badData` (exit 65) for a manifest that is not a detect segmenter's.
    public static func resolve(_ option: String?) throws -> DetectModel? {
        if option == "none" { return nil }
        if let option { return try load(option) }
        var isDirectory: ObjCBool = false
        for dir in defaultCandidates()
        where FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) && isDirectory.boolValue {
            return try load(dir)
        }
        return nil
    }

    /// Loads `path`: a bundle directory (reads its manifest) or an ONNX file (taken as it is).
    public static func load(_ path: String) throws -> DetectModel {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ModelBundleError(.missingInput, file: path, "no such detect model file or bundle directory")
        }
        guard isDirectory.boolValue else { return DetectModel(name: path, modelPath: path) }
        let manifestPath = (path as NSString).appendingPathComponent("manifest.json")
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw ModelBundleError(.missingInput, file: manifestPath, "detect model bundle has no manifest.json")
        }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ModelBundleError(.badData, file: manifestPath, "not a JSON object")
        }
        if let kind = root["kind"], (kind as? String) != "detect-segmenter" {
            throw ModelBundleError(.badData, file: manifestPath, "'kind' is \(kind), not detect-segmenter")
        }
        if let factor = root["cell_px_per_coarse_factor"], (factor as? Int) != 2 {
            throw ModelBundleError(
                .badData, file: manifestPath,
                "'cell_px_per_coarse_factor' is \(factor); colorcam's grid is 2 (cell = 2 × factor)")
        }
        if let multiple = root["multiple"] {
            guard let m = multiple as? Int, m > 0, SegmentationGrid.multiple % m == 0 else {
                throw ModelBundleError(
                    .badData, file: manifestPath,
                    "'multiple' is \(multiple); colorcam pads the grid to multiples of 8")
            }
        }
        let file = (root["file"] as? String) ?? "model.onnx"
        guard !file.contains("/"), !file.isEmpty else {
            throw ModelBundleError(.badData, file: manifestPath, "'file' must be a name inside the bundle")
        }
        let modelPath = (path as NSString).appendingPathComponent(file)
        guard FileManager.default.fileExists(atPath: modelPath) else {
            throw ModelBundleError(.missingInput, file: modelPath, "detect model bundle has no \(file)")
        }
        return DetectModel(name: path, modelPath: modelPath)
    }
}
