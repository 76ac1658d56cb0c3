import ColorcamCore
import Detect
import PhotoPipeline

/// `--detect-model` and `--detector`, shared by every command that builds a detector (detect, bench detect, replay,
/// live, colorize): which learned print segmenter to load and which candidate regions the detector searches.
enum DetectModelOptions {
    static let valued: Set<String> = ["detect-model", "detector"]

    static let help = """
          --detect-model DIR|FILE.onnx|none
                                    the detector's learned print segmenter: a bundle (manifest.json + model.onnx) or an
                                    ONNX file; default: Models/detect-default, then detect-default on the model search
                                    path ('colorcam doctor' says which); none found or 'none': the classic detector only
          --detector learned|classic|both
                                    candidate regions from the segmenter only, the classic edge passes only, or the
                                    segmenter's first, then the classic ones (default: both with a detect model, else
                                    classic)
        """

    /// The detect model and the detector mode the arguments ask for. The model is nil when none is found, none is
    /// asked for, or the mode is `classic`.
    /// - Throws: `UsageError` (64) for a bad `--detector` or `learned`/`both` without a model; the model's load
    ///   errors (66 missing, 65 bad manifest); 69 when an asked-for model cannot run on this CPU.
    static func resolve(_ a: Arguments, command: String) throws -> (model: DetectModel?, mode: DetectorMode) {
        let asked = try a.string("detector").map { text in
            guard let mode = DetectorMode(rawValue: text) else {
                throw UsageError("\(command): --detector must be learned, classic or both, got '\(text)'")
            }
            return mode
        }
        if asked == .classic { return (nil, .classic) }
        let option = a.string("detect-model")
        let model = try DetectModel.resolve(option)
        if model != nil { try CPUSupport.requireInference(command) }
        guard let model else {
            if let asked {
                let why =
                    option == "none"
                    ? "--detect-model none was given"
                    : "no detect model was found (see 'colorcam doctor')"
                throw UsageError("\(command): --detector \(asked) needs a detect model; \(why)")
            }
            return (nil, .classic)
        }
        return (model, asked ?? .both)
    }

    /// `--no-close-look` (detect and bench detect only): a diagnostic to compare the detector without its close
    /// looks at small prints (`PhotoDetector+CloseLook.swift`).
    static let closeLookHelp = """
          --no-close-look           a diagnostic: do not look again, at twice the scale, at small prints the
                                    segmenter found (what the close look adds, in accuracy and time)
        """

    /// The segmenter for frames of `geometry` (taking close looks unless `closeLooks` is false), or nil when
    /// `model` is nil.
    /// - Throws: the engine's one-line error naming the model file (65 bad model, 66 unreadable).
    static func segmenter(_ model: DetectModel?, geometry: FrameGeometry, closeLooks: Bool = true) throws
        -> CNNPrintSegmenter?
    {
        try model.map { try CNNPrintSegmenter(model: $0, geometry: geometry, closeLooks: closeLooks) }
    }
}
