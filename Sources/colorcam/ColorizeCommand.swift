import ColorcamCore
import Infer
import PhotoPipeline

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam colorize IN OUT [--model M] [--preset P] [--whole]`: colorizes a PNG/JPEG with a model bundle.
enum ColorizeCommand {
    static let help = """
        usage: colorcam colorize IN OUT [--model DIR|FILE.onnx] [--preset colorcam|eccv16|siggraph17] [--whole]
                                        [--hint X,Y,#RRGGBB …] [--hints-file FILE.json]
                                        [--detect-model DIR|FILE.onnx|none] [--detector learned|classic|both]
                                        [--infer-url URL [--infer-timeout-ms N] [--infer-fallback none|local]]

        Reads IN (PNG or JPEG; grey, palette and alpha PNGs are converted; 16-bit PNG and CMYK JPEG are refused),
        keeps its CIE L, predicts a and b with the model and writes OUT (.png, or .jpg/.jpeg at quality 95).
        --model   a bundle directory (manifest.json + model.onnx) or a bare ONNX file; default: the first
                  colorcam-default bundle in Models/ next to the working directory, then $COLORCAM_MODELS, …
        --preset  how to feed a bare ONNX file (default colorcam): colorcam, eccv16 and siggraph17 exports take raw
                  L 1x1x256x256 and return ab 1x2x256x256 (siggraph17 only with its hint inputs fixed at export)
        --whole   colorize the whole image (the model's own view: it sees the image as one photo).
                  Without it, the photos found in the image are colorized and the rest is kept exactly; an image
                  with no photo found is written unchanged, and says so.
        --hint    with --whole: the picture is this colour at pixel X,Y of IN (its chroma; the picture keeps its own
                  lightness), e.g. --hint 120,80,#3060c0; repeat for more points. Needs a model with hint inputs
                  (the default bundle has them; ECCV16 and bare files do not).
        --hints-file  with --whole: also the hints FILE.json remembers for this picture (recognised by its content,
                  in any quarter turn: the file `replay`/`live --hints-file` keep); with --hint, the picture's hints
                  (those and the new ones) are written back to it (atomically)
        \(DetectModelOptions.help)
        \(RemoteInferenceOption.help)
        """

    static let command = Command(
        name: "colorize", summary: "colorize a black-and-white photo (PNG/JPEG)",
        help: help, run: run)

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, command: "colorize",
            valued: Set(["model", "preset", "hint", "hints-file"]).union(DetectModelOptions.valued)
                .union(RemoteInferenceOption.valued),
            boolean: ["whole"])
        let paths = try a.positionals(exactly: 2, usage: "colorize IN OUT [--model M] [--preset P] [--whole]")
        try CPUSupport.requireInference("colorize")
        var preset: ModelBundle.Preset?
        if let text = a.string("preset") {
            guard let p = ModelBundle.Preset(rawValue: text) else {
                throw UsageError("colorize: --preset must be colorcam, eccv16 or siggraph17, got '\(text)'")
            }
            preset = p
        }
        let hints = try a.strings("hint").map { text in
            guard let hint = ColourHint(parsing: text) else {
                throw UsageError("colorize: --hint wants X,Y,#RRGGBB (pixel column, row, sRGB colour), got '\(text)'")
            }
            return hint
        }
        if !hints.isEmpty && !a.flag("whole") {
            throw UsageError(
                "colorize: --hint needs --whole (hints on the photos found in an image are not supported yet)")
        }
        if a.string("hints-file") != nil && !a.flag("whole") {
            throw UsageError("colorize: --hints-file needs --whole")
        }
        let hintsFile = try a.string("hints-file").map { try HintsFile(path: $0) }
        let modelPath = try a.string("model") ?? defaultModel()
        let bundle = try ModelBundle.load(modelPath, preset: preset)
        let image = try ImageFile.read(paths[0])
        let remote = try RemoteInferenceOption.resolve(a, command: "colorize", bundle: bundle)
        if a.flag("whole") {
            let colorizer = try Colorizer(
                bundle: bundle, remote: remote?.model,
                fallbackLocal: remote?.fallbackLocal ?? false)
            let remembered = try hintsFile?.hints(for: image) ?? []
            if let hintsFile, !remembered.isEmpty {
                printNote(
                    "colorize: \(remembered.count) hint\(remembered.count == 1 ? "" : "s") from \(hintsFile.path)")
            }
            let all = remembered + hints
            if all.count > PhotoHints.maxPerPhoto {
                throw UsageError("colorize: \(all.count) hints; a picture keeps at most \(PhotoHints.maxPerPhoto)")
            }
            try ImageFile.write(colorizer.colorize(image, hints: all), to: paths[1])
            if let hintsFile, !hints.isEmpty { try hintsFile.remember(all, for: image) }
        } else {
            let (detectModel, detectorMode) = try DetectModelOptions.resolve(a, command: "colorize")
            let (out, photos) = try StillImage.colorizePhotos(
                image, bundle: bundle, detectModel: detectModel,
                detectorMode: detectorMode, remote: remote?.model,
                remoteFallbackLocal: remote?.fallbackLocal ?? false)
            try ImageFile.write(out, to: paths[1])
            printNote(
                photos == 0
                    ? "colorize: no photo found in \(paths[0]); written unchanged (--whole colorizes it all)"
                    : "colorize: \(photos) photo\(photos == 1 ? "" : "s") found and colorized")
        }
        return 0
    }

    static func defaultModel() throws -> String {
        let candidates = ["Models/colorcam-default"] + ModelSearchPath.directories().map { $0 + "/colorcam-default" }
        for dir in candidates where access(dir + "/manifest.json", R_OK) == 0 { return dir }
        throw ModelBundleError(
            .missingInput, file: "colorcam-default",
            "no --model given and no default bundle in \(candidates.joined(separator: ", "))")
    }

    static func printNote(_ text: String) {
        let line = text + "\n"
        line.withCString { _ = write(2, $0, strlen($0)) }
    }
}
