import ColorcamCore
import Detect
import PhotoPipeline
import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam detect`: finds photos in an image or a clip and prints them (text or JSON), optionally drawing them.
enum DetectCommand {
    static let command = Command(
        name: "detect", summary: "find photos in a .png image or a .y4m clip (corners, confidence, track ids)",
        help: help, run: { try run($0) })

    static let help = """
        usage: colorcam detect INPUT [--json] [--draw OUT.png] [options]

        Finds rectangular photos (prints) in INPUT, a .png image or a .y4m clip. For a clip, detections are tracked
        across frames (stable ids, smoothed corners); a track is shown after 2 of 3 frames and kept through 6 misses.

        Corners are in pixels, the image spanning [0,W]×[0,H] (pixel centres at +0.5), clockwise from the corner
        nearest the image's top-left.

          --json                    image: exactly one JSON object on stdout,
                                    {"width":W,"height":H,"detections":[{"corners":[[x,y]×4],"confidence":c,"id":n}]}
                                    clip: one such object per frame and line, with "frame":n; tracked, each
                                    detection has "painted": whether replay/live paint colour on it in that frame
          --draw OUT.png            write the image (for a clip: its last frame) with the detections outlined
          --no-track                clip: report each frame's raw detections (ids are per-frame ranks)
          --full-detection-interval K
                                    clip: search the whole frame every K-th frame (default 3); in between, tracked
                                    photos are re-found from their predicted corners (1 = search every frame)
          --no-photo-motion         clip: do not measure each photo's motion from its picture (the tracker then
                                    follows the outlines with its lighter smoothing; a diagnostic)
          --min-size F              smallest photo side as a fraction of the shorter image side (default 0.08)
          --min-aspect F            smallest short/long side ratio (default 0.5)
          --max-aspect F            largest short/long side ratio (default 1.0)
          --quadrature-tolerance D  largest corner-angle deviation from 90°, degrees (default 30)
          --min-confidence F        drop detections below this confidence, 0…1 (default 0)
          --max-observations N      at most N detections per frame, best first (default 8; 0 = unlimited)
        \(DetectModelOptions.help)
        \(DetectModelOptions.closeLookHelp)
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, command: "detect",
            valued: Set([
                "draw", "full-detection-interval", "min-size", "min-aspect", "max-aspect",
                "quadrature-tolerance", "min-confidence", "max-observations"
            ])
            .union(DetectModelOptions.valued),
            boolean: ["json", "no-track", "no-photo-motion", "no-close-look"])
        let input = try a.positionals(exactly: 1, usage: "detect INPUT [--json] [--draw OUT.png] (see --help)")[0]
        let parameters = try detectorParameters(a, command: "detect")
        let isImage = input.lowercased().hasSuffix(".png")
        let source: FrameSource =
            isImage
            ? try PNGFolderSource(files: [input], name: input)
            : try Y4MSource(path: input)
        let (model, mode) = try DetectModelOptions.resolve(a, command: "detect")
        let interval = try a.int("full-detection-interval", default: 3, range: 1...1000)!
        let json = a.flag("json"), track = !isImage && !a.flag("no-track")
        let segmenter = try DetectModelOptions.segmenter(
            model, geometry: source.geometry, closeLooks: !a.flag("no-close-look"))
        // One detector: the session's when tracking, else a detector of its own.
        let session = PhotoTrackingSession(
            geometry: source.geometry, parameters: parameters,
            fullDetectionInterval: interval, segmenter: track ? segmenter : nil,
            detectorMode: track ? mode : .classic)
        session.measuresPhotoMotion = !a.flag("no-photo-motion")
        let detector =
            track
            ? session.detector
            : PhotoDetector(
                geometry: source.geometry, parameters: parameters, segmenter: segmenter,
                mode: mode)
        if getenv("COLORCAM_DETECT_TRACE") != nil {  // diagnostics: why each candidate region was kept or rejected
            detector.trace = { printError($0) }
        }
        let frame = FrameBuffer(geometry: source.geometry)
        var drawn: [Quad] = []
        var index = 0
        var out = ""
        var gate = PaintGate(geometry: source.geometry)
        while try source.readFrame(into: frame) {
            var rows: [Row] = []
            if track {
                let timestampNs = frame.sourceTimestampNs ?? Int64(index) * source.nominalFrameIntervalNs
                for t in session.process(frame, timestampNs: timestampNs) {
                    rows.append((t.quad, t.confidence, t.id, gate.paints(t)))
                }
                gate.endFrame()
            } else {
                for (rank, o) in detector.detect(frame).enumerated() {
                    rows.append((o.quad, o.confidence, rank + 1, nil))
                }
            }
            drawn = rows.map(\.quad)
            out +=
                json
                ? jsonLine(rows, geometry: source.geometry, frame: isImage ? nil : index)
                : textLine(rows, frame: isImage ? nil : index)
            if out.utf8.count > 1 << 16 { print(out, terminator: ""); out = "" }
            index += 1
        }
        print(out, terminator: "")
        if let drawPath = a.string("draw") {
            for quad in drawn { OutlineDrawer.draw(quad, into: frame) }
            try PNGImageWriter.write(frame, to: drawPath)
        }
        return 0
    }

    /// Reads the shared detector options (also used by `bench detect`).
    static func detectorParameters(_ a: Arguments, command: String) throws -> DetectorParameters {
        var p = DetectorParameters()
        p.minimumSize = try a.double("min-size", default: p.minimumSize, min: 0)!
        p.minimumAspectRatio = try a.double("min-aspect", default: p.minimumAspectRatio, min: 0)!
        p.maximumAspectRatio = try a.double("max-aspect", default: p.maximumAspectRatio, min: 0)!
        p.quadratureTolerance = try a.double("quadrature-tolerance", default: p.quadratureTolerance, min: 0)!
        p.minimumConfidence = try a.double("min-confidence", default: p.minimumConfidence, min: 0)!
        p.maximumObservations = try a.int("max-observations", default: p.maximumObservations, range: 0...1000)!
        if let problem = p.validationError() { throw UsageError("\(command): \(problem)") }
        return p
    }

    static func number(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func number3(_ value: Double) -> String { String((value * 1000).rounded() / 1000) }

    /// One detection: corners, confidence, id (track id, or rank without tracking), and for a track whether the
    /// product paints colour on it in this frame (`PaintGate`).
    typealias Row = (quad: Quad, confidence: Double, id: Int, painted: Bool?)

    static func jsonLine(
        _ rows: [Row], geometry: FrameGeometry,
        frame: Int?
    ) -> String {
        var s = "{"
        if let frame { s += "\"frame\":\(frame)," }
        s += "\"width\":\(geometry.widthPx),\"height\":\(geometry.heightPx),\"detections\":["
        for (k, row) in rows.enumerated() {
            if k > 0 { s += "," }
            s += "{\"corners\":["
            for i in 0..<4 {
                if i > 0 { s += "," }
                s += "[\(number(row.quad[i].x)),\(number(row.quad[i].y))]"
            }
            s += "],\"confidence\":\(number(row.confidence)),\"id\":\(row.id)"
            if let painted = row.painted { s += ",\"painted\":\(painted)" }
            s += "}"
        }
        return s + "]}\n"
    }

    static func textLine(_ rows: [Row], frame: Int?) -> String {
        var s = frame.map { "frame \($0): " } ?? ""
        s += "\(rows.count) photo\(rows.count == 1 ? "" : "s")"
        for row in rows {
            let corners = (0..<4).map { "(\(number(row.quad[$0].x)), \(number(row.quad[$0].y)))" }
            s += "\n  #\(row.id) confidence \(number(row.confidence)): " + corners.joined(separator: " ")
        }
        return s + "\n"
    }
}
