import ColorcamCore
import Dispatch
import Foundation
import Infer

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam personalize --photos DIR --out BUNDLE`: fine-tunes the colorizer's later layers on the user's own
/// colour photos, on this machine (`Infer.Personalizer`), and writes a bundle any colorcam command takes.
enum PersonalizeCommand {
    static let help = """
        usage: colorcam personalize --photos DIR --out BUNDLE [--base DIR|FILE.onnx [--preset P]]
                                    [--train head|decoder|N] [--minutes M] [--holdout F] [--seed S]
                                    [--rehearse DIR|none] [--rehearse-weight W] [--learning-rate R]

        Teaches the colorizer the colours of your own photos: reads the colour JPEG/PNG files under DIR (recursively;
        at least 5), shows them to the model as prints under the camera (lightness only, faded, unevenly lit,
        blurred, grainy), and trains its last layers to give back their colours. The rest of the model stays as it
        is and runs once per view. A share of the photos is held out and scored before and during training (ab L1,
        hue agreement); the best weights are kept and written, with the scores, to BUNDLE (a directory:
        model.onnx + manifest.json), atomically: `colorcam live|replay|colorize --model BUNDLE` use it.
        Ctrl+C (SIGINT/SIGTERM) stops early and still writes the best weights so far.
        --photos   the folder of colour photos (black-and-white pictures are refused: they hold no colour to learn)
        --out      the bundle to write; an existing personalized bundle there is replaced, anything else is refused
        --base     the model to start from (default: the colorcam-default bundle)
        --train    which layers learn: head (default: the last layer of each output head; fast steps, and it keeps
                   the rest of the model's colours best), decoder (every layer from the first upsampling on), or N
                   (the last N conv layers)
        --minutes  the whole run's time budget, reading and writing included (default 5)
        --holdout  share of the photos held out for scoring (default 0.2, 0.05…0.5)
        --seed     the split and the views drawn (default 1)
        --rehearse general colour photos the model keeps its colours on while it learns yours (default: the
                   rehearsal/ folder of the colorcam-default bundle; none: learn from your photos alone). Most
                   of them are trained on with the base model's own colouring as the target; the rest are scored
                   against their real colours, and weights that colour them more than 5 % worse than the base
                   model are never kept: a folder of seascapes must not paint every picture blue.
        --rehearse-weight  the general photos' weight in the loss beside yours (default 1)
        --learning-rate    Adam's step size (default 1e-3)
        Runs on one core (OpenBLAS threads as colorcam sets them); prints a progress line to stderr.
        """

    static let command = Command(
        name: "personalize", summary: "train the colorizer on your own colour photos", help: help, run: run)

    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png"]

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let clock = SystemClock()
        let start = Double(clock.nowNs()) / 1e9
        let a = try Arguments(
            args, command: "personalize",
            valued: [
                "photos", "out", "base", "preset", "train", "minutes", "holdout", "seed", "rehearse", "learning-rate",
                "rehearse-weight"
            ])
        _ = try a.positionals(exactly: 0, usage: "personalize --photos DIR --out BUNDLE [options]")
        guard let photosDir = a.string("photos"), let out = a.string("out") else {
            throw UsageError(
                "personalize: --photos DIR and --out BUNDLE are required (see 'colorcam personalize --help')")
        }
        let minutes = try a.double("minutes", default: 5, min: 0.1)!
        let holdout = try a.double("holdout", default: 0.2, min: 0.05)!
        guard holdout <= 0.5 else { throw UsageError("personalize: --holdout must be at most 0.5, got \(holdout)") }
        var options = Personalizer.Options()
        options.holdout = holdout
        options.seed = UInt64(try a.int("seed", default: 1, range: 0...Int(Int32.max))!)
        options.selection = try selection(a.string("train") ?? "head")
        options.learningRate = Float(try a.double("learning-rate", default: Double(options.learningRate), min: 1e-6)!)
        options.rehearsalWeight = Float(
            try a.double("rehearse-weight", default: Double(options.rehearsalWeight), min: 0)!)
        var preset: ModelBundle.Preset?
        if let text = a.string("preset") {
            guard let p = ModelBundle.Preset(rawValue: text) else {
                throw UsageError("personalize: --preset must be colorcam, eccv16 or siggraph17, got '\(text)'")
            }
            preset = p
        }
        try CPUSupport.requireInference("personalize")
        let target = try BundleTarget(out)
        let files = try photoFiles(photosDir)
        guard files.count >= 5 else {
            throw ImageFileError(
                .badData, file: photosDir,
                "\(files.count) photo\(files.count == 1 ? "" : "s") (JPEG/PNG) found; personalize needs at least 5")
        }
        // The rehearsal folder is checked before any photo is read.
        let rehearsalDir = try rehearsalFolder(a.string("rehearse"))
        let general = try rehearsalDir.map { try photoFiles($0) } ?? []
        if let rehearsalDir, general.count < 2 {
            throw ImageFileError(
                .badData, file: rehearsalDir,
                "\(general.count) photo\(general.count == 1 ? "" : "s") (JPEG/PNG) found; rehearsal needs at least 2 "
                    + "(or --rehearse none)")
        }
        let basePath = try a.string("base") ?? ColorizeCommand.defaultModel()
        let bundle = try ModelBundle.load(basePath, preset: preset)
        let personalizer = try Personalizer(bundle: bundle, options: options)
        let photos = try readPhotos(files, what: "photos")
        let rehearsal = try readPhotos(general, what: "general photos")
        Log.info(
            "personalize: \(files.count) photos from \(photosDir); base \(bundle.name); training "
                + "\(personalizer.graph.trainedNodes.joined(separator: ", ")) "
                + "(\(personalizer.graph.trainable.count) tensors, frozen part cached at "
                + "\(personalizer.graph.frontier.joined(separator: ", "))); "
                + (rehearsalDir.map { "rehearsing \(rehearsal.count) general photos from \($0)" }
                    ?? "no rehearsal"))
        let stop = StopFlag()
        let signals = DaemonSignals(stop: { stop.set() }, stopNote: "writing the best weights so far")
        defer { signals.cancel() }
        let deadline = start + minutes * 60 - 3  // leave time to write the bundle
        let trained: Personalizer.Outcome
        do {
            trained = try personalizer.train(
                photos: photos, rehearsal: rehearsal, deadline: deadline, clock: clock,
                progress: { p in
                    switch p.phase {
                    case .caching(let done, let total):
                        progressLine("views through the frozen model \(done)/\(total)", milestone: done == total)
                    case .training:
                        let h = p.heldout.map {
                            String(format: "held-out ab L1 %.2f hue %.1f %%", $0.abL1, 100 * $0.hue)
                        }
                        let b = p.best.map { String(format: "best %.2f", $0.abL1) } ?? ""
                        let g = p.general.map {
                            String(format: "  general ab L1 %.2f hue %.1f %%", $0.abL1, 100 * $0.hue)
                        }
                        progressLine(
                            String(
                                format: "step %d  loss %.3f  %@  %@%@  left %d:%02d", p.step, p.loss, h ?? "", b,
                                g ?? "", Int(p.secondsLeft) / 60, Int(p.secondsLeft) % 60), milestone: true)
                    }
                },
                shouldStop: { stop.isSet })
        } catch is Personalizer.Interrupted {
            finishProgress()
            printError("personalize: stopped before training began; nothing written")
            return 130
        }
        let outcome = trained
        finishProgress()
        let record = PersonalizeRecord(
            bundle: bundle, basePath: basePath, baseHash: SHA256.hex(personalizer.modelBytes), options: options,
            selectionText: a.string("train") ?? "head", photosDir: photosDir, rehearsalDir: rehearsalDir,
            files: files,
            hashes: photos.map(\.sha256),
            outcome: outcome, command: (["colorcam"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            seconds: Double(clock.nowNs()) / 1e9 - start)
        let modelBytes = try personalizer.model.replacingInitializers(
            in: personalizer.modelBytes, file: bundle.modelPath, values: outcome.parameters)
        try target.write(modelBytes: modelBytes, manifest: try record.manifest())
        print(record.summary(out: out))
        return 0
    }

    /// Reads `files` as `UserPhoto`s with a progress line ("reading WHAT i/n").
    static func readPhotos(_ files: [String], what: String) throws -> [UserPhoto] {
        var photos: [UserPhoto] = []
        for (i, file) in files.enumerated() {
            photos.append(try UserPhoto.load(file))
            progressLine("reading \(what) \(i + 1)/\(files.count)", milestone: i + 1 == files.count)
        }
        return photos
    }

    /// The rehearsal folder: `--rehearse DIR`, none for `--rehearse none`, else the default bundle's `rehearsal/`
    /// (none when that bundle has no such folder).
    static func rehearsalFolder(_ text: String?) throws -> String? {
        switch text {
        case "none": return nil
        case let dir?: return dir
        case nil:
            let dir = (try ColorizeCommand.defaultModel() as NSString).appendingPathComponent("rehearsal")
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) && isDir.boolValue ? dir : nil
        }
    }

    static func selection(_ text: String) throws -> TrainGraph.Selection {
        switch text {
        case "head": return .head
        case "decoder": return .decoder
        default:
            guard let n = Int(text), n >= 1, n <= 1000 else {
                throw UsageError("personalize: --train must be head, decoder or a number of layers, got '\(text)'")
            }
            return .lastLayers(n)
        }
    }

    /// The JPEG/PNG files under `dir`, recursively, sorted by path.
    static func photoFiles(_ dir: String) throws -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) else {
            throw ImageFileError(.missingInput, file: dir, "no such folder")
        }
        guard isDir.boolValue else { throw ImageFileError(.badData, file: dir, "not a folder") }
        guard let walker = FileManager.default.enumerator(atPath: dir) else {
            throw ImageFileError(.missingInput, file: dir, "cannot read the folder")
        }
        var files: [String] = []
        while let rel = walker.nextObject() as? String {
            let ext = (rel as NSString).pathExtension.lowercased()
            guard imageExtensions.contains(ext) else { continue }
            files.append((dir as NSString).appendingPathComponent(rel))
        }
        return files.sorted()
    }

    /// A progress line: rewritten in place on a terminal; elsewhere (a log) only `milestone` lines, one each.
    static func progressLine(_ text: String, milestone: Bool = false) {
        let line: String
        if isatty(2) != 0 {
            line = "\r\u{1B}[K" + text
        } else if milestone {
            line = "personalize: " + text + "\n"
        } else {
            return
        }
        line.withCString { _ = write(2, $0, strlen($0)) }
    }

    static func finishProgress() {
        guard isatty(2) != 0 else { return }
        "\n".withCString { _ = write(2, $0, 1) }
    }
}
