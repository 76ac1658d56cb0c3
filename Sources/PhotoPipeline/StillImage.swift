import ColorcamCore
import Detect
import Infer

/// Colorizes the photos found in one still image (`colorcam colorize` without `--whole`): the image becomes a
/// 4:4:4 full-range BT.601 frame, runs through `PhotoColorProcessor` (shown a few times, as the tracker needs a
/// couple of sightings, and until every photo found is colorized), and the pixels the compositor did not touch keep
/// the input's exact RGB.
///
/// Threading: runs everything on the caller's thread; allocates per call (a command-line path, not a stream).
public enum StillImage {
    /// Returns the image with its photos colorized, and how many photos were found.
    /// - Parameters:
    ///   - detectModel, detectorMode: the detector's learned front-end and mode (see `PhotoPipelineOptions`).
    ///   - remote, remoteFallbackLocal: a colorizer on an inference server, used instead of the local engine, and
    ///     whether the local engine stands in when it gives no result (see `PhotoPipelineOptions`).
    /// - Throws: `ModelRunFailed` when the server gives no result for a photo.
    public static func colorizePhotos(
        _ image: RGBImage, bundle: ModelBundle,
        detector: DetectorParameters = DetectorParameters(),
        detectModel: DetectModel? = nil,
        detectorMode: DetectorMode? = nil,
        remote: (any ModelRunner & Sendable)? = nil,
        remoteFallbackLocal: Bool = false
    ) throws -> (RGBImage, Int) {
        let w = image.widthPx, h = image.heightPx
        let geometry = FrameGeometry(widthPx: w, heightPx: h, chroma: .yuv444)
        let codec = PixelCodec(encoding: .bt601Full)
        let source = FrameBuffer(geometry: geometry)
        let y = source.luma.bindMemory(to: UInt8.self), cb = source.cb.bindMemory(to: UInt8.self)
        let cr = source.cr.bindMemory(to: UInt8.self)
        for i in 0..<(w * h) {
            let c = codec.codes(
                SIMD3(
                    Float(image.pixels[3 * i]), Float(image.pixels[3 * i + 1]),
                    Float(image.pixels[3 * i + 2])) / 255)
            y[i] = UInt8(min(255, max(0, c.x)) + 0.5)
            cb[i] = UInt8(min(255, max(0, c.y)) + 0.5)
            cr[i] = UInt8(min(255, max(0, c.z)) + 0.5)
        }
        var options = PhotoPipelineOptions()
        options.background = .original
        options.fullDetectionInterval = 1
        options.detector = detector
        options.detectModel = detectModel
        options.detectorMode = detectorMode
        options.remote = remote
        options.remoteFallbackLocal = remoteFallbackLocal
        let processor = try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options)
        processor.prepare(framePoolSize: 1, inputSlotCount: 1)
        let frame = FrameBuffer(geometry: geometry, poolIndex: 0)
        var photos = 0
        for step in 0..<(3 + 2 * options.maxPhotos) {
            frame.copy(from: source)
            frame.sequence = step
            frame.captureTimestampNs = Int64(step) * 33_333_333
            frame.sceneTimestampNs = frame.captureTimestampNs
            photos = processor.analyse(frame) ?? 0
            if let _ = processor.prepareInference(frame, slot: 0, inferenceIdle: true) {
                let outcome = processor.infer(slot: 0, frame: step, captureTsNs: frame.captureTimestampNs)
                if !outcome.gaveResult {
                    throw ModelRunFailed(reason: outcome.failure)
                }
            } else if step >= 3 {
                break  // every photo in view has its colours
            }
        }
        _ = processor.composite(frame, scheduled: nil)
        var out = image
        let oy = frame.luma.bindMemory(to: UInt8.self), ocb = frame.cb.bindMemory(to: UInt8.self)
        let ocr = frame.cr.bindMemory(to: UInt8.self)
        for i in 0..<(w * h) where oy[i] != y[i] || ocb[i] != cb[i] || ocr[i] != cr[i] {
            let c = codec.rgb(y: Float(oy[i]), cb: Float(ocb[i]), cr: Float(ocr[i]))
            out.pixels[3 * i] = UInt8(c.x * 255 + 0.5)
            out.pixels[3 * i + 1] = UInt8(c.y * 255 + 0.5)
            out.pixels[3 * i + 2] = UInt8(c.z * 255 + 0.5)
        }
        return (out, photos)
    }
}
