import Detect
import Infer
import Stream

/// How the frame outside the photos looks.
public enum Background: String, Sendable, CaseIterable {
    /// The frame's luma only (neutral chroma), as in the demo that inspired colorcam.
    case gray
    /// The frame as captured.
    case original
}

/// Settings of `PhotoColorProcessor`.
public struct PhotoPipelineOptions: Sendable {
    public var background: Background = .gray
    /// How the source's Y'CbCr codes map to R'G'B' (for L* in and colours out).
    public var encoding: YCbCrEncoding = .bt601Full
    /// Content change (`thumbnailDistance`: mean absolute difference of contrast-normalised 8×8 luma block means)
    /// that makes a photo's colours stale.
    public var changeThreshold: Float = 0.25
    /// Local content change (the most changed 8×8 block of `thumbnailBlockChanges`, in standard deviations) beyond
    /// which `outlineChange` tells whether something came over the print or went: a photo's colours are stale when
    /// what covered it unmeasured (a pale hand on a sepia print has the print's tone) has gone.
    public var localChangeThreshold: Float = 0.6
    /// Full detection every N frames, tracking in between (see `PhotoTrackingSession`).
    public var fullDetectionInterval = 3
    public var featherPx = 2.0
    /// At most this many photos are colorized per frame (the largest first); 1…64.
    public var maxPhotos = 8
    /// A print whose tracked corners moved more than this since the previous frame (mean, px per frame) is shown
    /// without colour in that frame (`PaintGate`).
    public var maxPaintSpeedPx = 16.0
    /// Where `--save-photos` writes; nil to save nothing.
    public var savePhotosDirectory: String?
    public var detector = DetectorParameters()
    /// The learned print segmenter's model; nil = none (the classic detector).
    public var detectModel: DetectModel?
    /// Which regions the detector searches; nil = `both` with a detect model, `classic` without. A mode other than
    /// `classic` needs `detectModel`.
    public var detectorMode: DetectorMode?

    /// A colorizer served by an inference server (`--infer-url`): used instead of the local engine, which must take
    /// the same tensors. Nil: the local engine.
    public var remote: (any ModelRunner & Sendable)?
    /// With `remote`: run the local engine when the server fails or is backing off (`--infer-fallback local`).
    public var remoteFallbackLocal = false
    /// With `remote`: where it is (the URL), for the trace's `config` `model`.
    public var remoteLabel = ""
    /// Where colour hints are kept across restarts (`--hints-file`); nil: for the run only.
    public var hintsFile: HintsFile?
    /// Keep the model's colour suggestions of each photo (`colourSuggestions`: `live`'s picker asks for them): the
    /// most likely bins of its ab distribution after each local run, ~3 ms an inference. Off where nothing asks.
    public var keepsColourSuggestions = false

    public init() {}

    /// The mode the detector runs in (`detectorMode`, or its default).
    public var effectiveDetectorMode: DetectorMode { detectorMode ?? (detectModel == nil ? .classic : .both) }
}
