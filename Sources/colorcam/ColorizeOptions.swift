import ColorcamCore
import Infer
import PhotoPipeline
import Stream

/// The options `replay` and `live` share for the real product (detect → colorize → composite), and building the
/// processor from them.
enum ColorizeOptions {
    static let valued: Set<String> = Set([
        "model", "preset", "background", "save-photos", "color-range", "detect-every", "hint-click", "hints-file"
    ])
    .union(DetectModelOptions.valued).union(RemoteInferenceOption.valued)
    static let boolean: Set<String> = ["passthrough"]

    static let help = """
          --model DIR|FILE.onnx     the colorizer (default: the colorcam-default bundle, see 'colorcam doctor')
          --preset colorcam|eccv16|siggraph17
                                    how to read a bare .onnx file (default colorcam)
          --background gray|original
                                    the frame outside the photos: its luma only (default) or as captured
          --save-photos DIR         write each photo's best colorized view once: photo-<track>.png + .json
          --color-range full|limited
                                    how to read the source's Y'CbCr (default: the file's XCOLORRANGE tag, else full
                                    range as JPEG/MJPEG webcams and colorcam's own recordings use)
          --detect-every N          full photo search every N frames, tracking in between (default 3)
          --passthrough             no detection and no model: frames pass through untouched (timing, format tests)
          --hint-click FRAME,X,Y,#RRGGBB
                                    a colour hint, as a click on the output at frame FRAME: the photo under pixel X,Y
                                    is that colour there (its chroma), in the photo's own coordinates while it is
                                    tracked; repeat for more (needs a model with hint inputs, run locally)
          --hints-file FILE.json    keep every photo's colour hints in FILE.json (read at start, rewritten
                                    atomically on each change): a print found again, in this run or a later
                                    one, gets its hints back (recognised by its content)
        \(DetectModelOptions.help)
        \(RemoteInferenceOption.help)
        """

    /// The processor the arguments ask for; nil for `--passthrough` or when a simulation is running instead.
    static func processor(
        _ a: Arguments, command: String, geometry: FrameGeometry, colorRange: Y4MColorRange,
        simulated: Bool
    ) throws -> PhotoColorProcessor? {
        let used = valued.sorted().filter { a.string($0) != nil }
        if a.flag("passthrough") || simulated {
            if let first = used.first {
                throw UsageError(
                    "\(command): --\(first) needs the model (not --passthrough or --simulate-inference-ms)")
            }
            if a.flag("passthrough") && simulated {
                throw UsageError("\(command): --passthrough and --simulate-inference-ms exclude each other")
            }
            return nil
        }
        try CPUSupport.requireInference(command)
        var preset: ModelBundle.Preset?
        if let text = a.string("preset") {
            guard let p = ModelBundle.Preset(rawValue: text) else {
                throw UsageError("\(command): --preset must be colorcam, eccv16 or siggraph17, got '\(text)'")
            }
            preset = p
        }
        let bundle = try ModelBundle.load(try a.string("model") ?? ColorizeCommand.defaultModel(), preset: preset)
        var options = PhotoPipelineOptions()
        options.background = Background(rawValue: try a.choice("background", ["gray", "original"], default: "gray"))!
        let range = try a.choice(
            "color-range", ["full", "limited"], default: colorRange == .limited ? "limited" : "full")
        options.encoding = range == "full" ? .bt601Full : .bt601Limited
        options.fullDetectionInterval = try a.int("detect-every", default: 3, range: 1...1000)!
        options.savePhotosDirectory = a.string("save-photos")
        (options.detectModel, options.detectorMode) = try DetectModelOptions.resolve(a, command: command)
        if let remote = try RemoteInferenceOption.resolve(a, command: command, bundle: bundle) {
            options.remote = remote.model
            options.remoteFallbackLocal = remote.fallbackLocal
            options.remoteLabel = remote.model.url.description
        }
        let clicks = try a.strings("hint-click").map { text in
            let parts = text.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, let frame = Int(parts[0]), frame >= 0,
                let hint = ColourHint(parsing: String(parts[1]))
            else {
                throw UsageError("\(command): --hint-click wants FRAME,X,Y,#RRGGBB, got '\(text)'")
            }
            guard (0..<Double(geometry.widthPx)).contains(hint.xPx), (0..<Double(geometry.heightPx)).contains(hint.yPx)
            else {
                throw UsageError(
                    "\(command): --hint-click \(text): the point lies outside the \(geometry.widthPx)x\(geometry.heightPx) frame"
                )
            }
            return (frame, hint)
        }
        options.hintsFile = try a.string("hints-file").map { try HintsFile(path: $0) }
        options.keepsColourSuggestions = command == "live"  // its preview's hint picker asks for them
        if !clicks.isEmpty || options.hintsFile != nil {
            if clicks.count > 64 { throw UsageError("\(command): at most 64 --hint-click, got \(clicks.count)") }
            if bundle.hintInputs == nil {
                throw HintsRefused.noHintInputs(bundle)
            }
            if options.remote != nil {
                throw HintsRefused.remote(bundle)
            }
        }
        if !geometry.chroma.hasChroma {
            Log.warning(
                "\(command): the source has no chroma planes (\(geometry.chroma)); the output cannot show colour")
        }
        let processor = try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options)
        for (frame, hint) in clicks {
            processor.addHint(
                frame: frame, xPx: hint.xPx, yPx: hint.yPx, red: hint.red, green: hint.green, blue: hint.blue)
        }
        return processor
    }
}
