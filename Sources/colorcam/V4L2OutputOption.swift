import ColorcamCore
import Stream

/// `--v4l2-output /dev/videoN` and `--v4l2-output-format FOURCC` for `replay` and `live`: the output frames also go
/// to a V4L2 video output node (a v4l2loopback virtual camera), never holding the pipeline back.
enum V4L2OutputOption {
    static let valued: Set<String> = ["v4l2-output", "v4l2-output-format"]

    static let help = """
          --v4l2-output /dev/videoN also show the output frames on this V4L2 video output device (a v4l2loopback
                                    virtual camera that OBS, video calls and browsers pick like a webcam; README
                                    "colorcam as a webcam"). Never slows the pipeline: a frame the device cannot take
                                    at once is skipped for it (trace drop sink_busy / sink_error, /metrics), and a device
                                    that goes away is reopened with backoff
          --v4l2-output-format F    the device's pixel format: \(V4L2OutputConverter.offeredFormats.map(\.fourCC).joined(separator: ", "))
                                    (default: the first of these the device accepts)
        """

    /// Opens the device when asked (after the other outputs' checks, before the run), or nil.
    /// - Parameters:
    ///   - framesPerSecond: the rate frames reach the output (numerator / denominator fps).
    ///   - trace: where the sink's drops go (the run's trace, and for `live` the metrics).
    static func open(
        _ a: Arguments, command: String, geometry: FrameGeometry,
        framesPerSecond: (numerator: Int, denominator: Int), trace: TraceSink,
        clock: MonotonicClock
    ) throws -> V4L2OutputSink? {
        let formatText = a.string("v4l2-output-format")
        guard let path = a.string("v4l2-output") else {
            if formatText != nil { throw UsageError("\(command): --v4l2-output-format needs --v4l2-output") }
            return nil
        }
        var format: V4L2PixelFormat?
        if let formatText {
            let padded =
                formatText.count < 4 ? formatText + String(repeating: " ", count: 4 - formatText.count) : formatText
            guard let parsed = V4L2PixelFormat(fourCC: padded), V4L2OutputConverter.offeredFormats.contains(parsed)
            else {
                let list = V4L2OutputConverter.offeredFormats.map(\.fourCC).joined(separator: ", ")
                throw UsageError("\(command): --v4l2-output-format must be one of \(list), got '\(formatText)'")
            }
            format = parsed
        }
        let sink = try V4L2OutputSink(
            options: V4L2OutputSink.Options(path: path, pixelFormat: format),
            geometry: geometry, framesPerSecond: framesPerSecond, trace: trace, clock: clock)
        Log.info(
            "v4l2 output \(path): \(geometry.widthPx)x\(geometry.heightPx) \(sink.format)"
                + (sink.notes.isEmpty ? "" : " (" + sink.notes.joined(separator: "; ") + ")"))
        return sink
    }

    /// `v4l2 output /dev/video1: 300 frames written, 2 skipped (busy), 0 skipped (device errors)[; N repeats …]`.
    static func summary(_ sink: V4L2OutputSink) -> String {
        let repeats = sink.framesRepeated.load(ordering: .relaxed)
        return "v4l2 output \(sink.options.path): \(sink.framesWritten.load(ordering: .relaxed)) frames written, "
            + "\(sink.framesBusy.load(ordering: .relaxed)) skipped (busy), "
            + "\(sink.framesFailed.load(ordering: .relaxed)) skipped (device errors)"
            + (repeats > 0 ? "; \(repeats) repeats to fill the device's faster rate" : "")
    }
}
