import ColorcamCore
import Foundation
import Infer

#if canImport(Glibc)
    import Glibc
#endif

/// Where `personalize` writes its bundle, checked before any training: the parent folder must exist, and an
/// existing path may only be a bundle `personalize` wrote (its manifest has `personalized`). The bundle is written
/// into a temporary sibling folder (files flushed), then renamed into place: a reader sees the old bundle or the
/// new one, never a part.
struct BundleTarget {
    let path: String
    let replaces: Bool

    init(_ path: String) throws {
        let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        self.path = trimmed
        let parent = FilePath.directory(of: trimmed)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDir),
            isDir.boolValue
        else {
            throw ImageFileError(.ioError, file: parent, "the folder for --out does not exist")
        }
        if FileManager.default.fileExists(atPath: trimmed, isDirectory: &isDir) {
            let manifest = (trimmed as NSString).appendingPathComponent("manifest.json")
            guard isDir.boolValue, let data = FileManager.default.contents(atPath: manifest),
                let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
                root["personalized"] != nil
            else {
                throw UsageError(
                    "personalize: --out \(trimmed) exists and is not a bundle personalize wrote; "
                        + "choose another path or remove it")
            }
            replaces = true
        } else {
            replaces = false
        }
    }

    func write(modelBytes: [UInt8], manifest: [UInt8]) throws {
        let pid = getpid()
        let temporary = "\(path).partial-\(pid)"
        let fm = FileManager.default
        try? fm.removeItem(atPath: temporary)
        guard mkdir(temporary, 0o755) == 0 else {
            throw ImageFileError(.ioError, file: temporary, "cannot create (\(Errno.current))")
        }
        for (name, bytes) in [("model.onnx", modelBytes), ("manifest.json", manifest)] {
            let file = (temporary as NSString).appendingPathComponent(name)
            if let failure = FileDescriptor.writeFlushed(bytes, to: file) {
                try? fm.removeItem(atPath: temporary)
                throw ImageFileError(.ioError, file: file, "cannot write (\(failure))")
            }
        }
        let old = "\(path).old-\(pid)"
        if replaces {
            guard rename(path, old) == 0 else {
                let reason = Errno.current
                try? fm.removeItem(atPath: temporary)
                throw ImageFileError(.ioError, file: path, "cannot move the old bundle aside (\(reason))")
            }
        }
        guard rename(temporary, path) == 0 else {
            let reason = Errno.current
            if replaces { _ = rename(old, path) }
            try? fm.removeItem(atPath: temporary)
            throw ImageFileError(.ioError, file: path, "cannot move the new bundle into place (\(reason))")
        }
        if replaces { try? fm.removeItem(atPath: old) }
    }
}

/// What a personalize run did, for the bundle's manifest and the closing summary.
struct PersonalizeRecord {
    let bundle: ModelBundle
    let basePath: String
    let baseHash: String
    let options: Personalizer.Options
    let selectionText: String
    let photosDir: String
    let rehearsalDir: String?
    let files: [String]
    let hashes: [String]
    let outcome: Personalizer.Outcome
    let command: String
    let seconds: Double

    func scores(_ s: ColourScore) -> [String: Any] {
        [
            "ab_l1": (s.abL1 * 1000).rounded() / 1000, "hue_agreement": (s.hue * 10000).rounded() / 10000,
            "views": s.pictures
        ]
    }

    /// The base bundle's manifest (or, for a bare ONNX base, the fields colorcam reads) with the base's own
    /// training record replaced by this run's.
    func manifest() throws -> [UInt8] {
        var root: [String: Any] = [:]
        let baseManifest = (basePath as NSString).appendingPathComponent("manifest.json")
        if let data = FileManager.default.contents(atPath: baseManifest),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        {
            root = object
        } else {
            root["format"] = "onnx"
            root["input"] = [
                "name": "L", "shape": [1, 1, bundle.inputSizePx, bundle.inputSizePx],
                "scale": Double(bundle.inputScale), "offset": Double(bundle.inputOffset)
            ]
            root["output"] = ["name": "ab", "scale": Double(bundle.outputScale)]
            root["head"] = bundle.head
        }
        for key in ["training", "metrics", "export_check", "personalized"] { root.removeValue(forKey: key) }
        let baseName = bundle.name
        root["name"] = "\(baseName)-personal"
        root["file"] = "model.onnx"
        let hashOf = Dictionary(uniqueKeysWithValues: zip(files, hashes))
        root["personalized"] =
            [
                "base": ["name": baseName, "path": basePath, "model_sha256": baseHash],
                "trained": [
                    "selection": selectionText, "layers": outcome.trainedNodes, "initializers": outcome.trainable
                ],
                "photos": [
                    "folder": photosDir, "count": files.count,
                    "train": outcome.trainPhotos.map { ["file": $0, "sha256": hashOf[$0] ?? ""] },
                    "heldout": outcome.heldoutPhotos.map { ["file": $0, "sha256": hashOf[$0] ?? ""] }
                ],
                "heldout_before": scores(outcome.before),
                "heldout_after": scores(outcome.after),
                "rehearsal": rehearsalRecord(),
                "steps": outcome.steps, "train_views": outcome.trainViews,
                "seed": Int(options.seed), "holdout": options.holdout,
                "learning_rate": Double(options.learningRate), "decay_to_base": Double(options.decay),
                "step_ms_per_view": (outcome.stepMs * 10).rounded() / 10,
                "frozen_cache_seconds": (outcome.cacheSeconds * 10).rounded() / 10,
                "frozen_cache_mb": outcome.cacheBytes >> 20,
                "seconds": seconds.rounded(), "stopped_early": outcome.stoppedEarly,
                "command": command,
                "finished": ISO8601DateFormatter().string(from: Date())
            ] as [String: Any]
        let data = try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])
        return Array(data) + [0x0A]
    }

    /// The general photos rehearsed and the guard's scores (`NSNull` when the run had none).
    func rehearsalRecord() -> Any {
        guard let rehearsalDir else { return NSNull() }
        var record: [String: Any] = [
            "folder": rehearsalDir, "rehearsed_photos": outcome.rehearsalPhotos.count,
            "guard_photos": outcome.guardPhotos.map { ($0 as NSString).lastPathComponent },
            "weight": Double(options.rehearsalWeight), "general_tolerance": options.generalTolerance
        ]
        if let b = outcome.generalBefore, let a = outcome.generalAfter {
            record["guard_before"] = scores(b)
            record["guard_after"] = scores(a)
        }
        return record
    }

    func summary(out: String) -> String {
        let b = outcome.before, a = outcome.after
        var general = ""
        if let gb = outcome.generalBefore, let ga = outcome.generalAfter {
            general = String(
                format: "; general photos (%d views): ab L1 %.2f -> %.2f, hue %.1f %% -> %.1f %%", ga.pictures,
                gb.abL1, ga.abL1, 100 * gb.hue, 100 * ga.hue)
        }
        return String(
            format:
                "personalize: wrote %@ — held-out photos (%d views): ab L1 %.2f -> %.2f, hue agreement %.1f %% -> %.1f %%"
                + "%@ (%d steps, %.0f s%@)",
            out, a.pictures, b.abL1, a.abL1, 100 * b.hue, 100 * a.hue, general, outcome.steps, seconds,
            outcome.stoppedEarly ? ", stopped early" : "")
    }
}
