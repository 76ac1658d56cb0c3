import ColorcamCore
import Detect
import Foundation
import Infer
import Stream
import Testing

@testable import PhotoPipeline

/// Drives `PhotoColorProcessor` by hand, as the pipeline's threads would (analyse → prepareInference → infer →
/// composite), on synthetic frames with the bundled default model.
@Suite(.serialized) struct ProcessorTests {
    let bundle: ModelBundle
    init() throws { bundle = try ModelBundle.load(repositoryRoot + "/Models/colorcam-default") }

    final class Run {
        let processor: PhotoColorProcessor
        var sequence = 0
        var requests: [InferenceRequest] = []
        init(_ processor: PhotoColorProcessor) {
            self.processor = processor
            processor.prepare(framePoolSize: 4, inputSlotCount: 3)
        }
        /// One frame through every hook; returns the composited stamp.
        func step(_ frame: FrameBuffer) -> CompositeStamp? {
            let pooled = FrameBuffer(geometry: frame.geometry, poolIndex: sequence % 4)
            pooled.copy(from: frame)
            pooled.sequence = sequence
            pooled.captureTimestampNs = Int64(sequence) * 33_333_333
            pooled.sceneTimestampNs = pooled.captureTimestampNs
            _ = processor.analyse(pooled)
            if let request = processor.prepareInference(pooled, slot: sequence % 3, inferenceIdle: true) {
                requests.append(request)
                _ = processor.infer(slot: sequence % 3, frame: sequence, captureTsNs: pooled.captureTimestampNs)
            }
            let stamp = processor.composite(pooled, scheduled: nil)
            frame.copy(from: pooled)
            sequence += 1
            return stamp
        }
    }

    func options(_ background: Background = .gray, save: String? = nil) -> PhotoPipelineOptions {
        var o = PhotoPipelineOptions()
        o.background = background
        o.savePhotosDirectory = save
        return o
    }

    @Test func aNewPhotoIsColorizedOnceAndItsColoursFollowEveryFrame() throws {
        let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
        let run = Run(try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options()))
        var stamps: [CompositeStamp?] = []
        for _ in 0..<12 { stamps.append(run.step(sceneFrame(quad: printQuad, picture: landscape))) }
        #expect(run.requests.count == 1, "requests \(run.requests)")
        #expect(run.requests.first?.reason == .new)
        // Tracks appear after the tracker's hysteresis; from the first colorization on, every frame carries it.
        let first = try #require(stamps.firstIndex { $0 != nil })
        #expect(first <= 4)
        #expect(stamps[first...].allSatisfy { $0?.resultFrame == first })
        // The output is coloured inside the print (the model gives the landscape some chroma) and grey outside.
        let out = sceneFrame(quad: printQuad, picture: landscape)
        _ = run.step(out)
        let g = out.geometry
        var chroma = 0.0, n = 0.0
        for cy in 40..<80 {
            for cx in 50..<110 {
                let c = cy * g.chromaWidthPx + cx
                chroma +=
                    abs(Double(out.cb.load(fromByteOffset: c, as: UInt8.self)) - 128)
                    + abs(Double(out.cr.load(fromByteOffset: c, as: UInt8.self)) - 128)
                n += 1
            }
        }
        #expect(chroma / n > 1.0, "mean |chroma| inside \(chroma / n)")
        #expect(out.cb.load(fromByteOffset: 2 * g.chromaWidthPx + 2, as: UInt8.self) == 128)
    }

    @Test func changedContentIsColorizedAgainWithReasonChanged() throws {
        let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
        let run = Run(try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options()))
        for _ in 0..<8 { _ = run.step(sceneFrame(quad: printQuad, picture: landscape)) }
        // Same print, brighter light: not a change.
        for _ in 0..<4 { _ = run.step(sceneFrame(quad: printQuad) { u, v in landscape(u, v) * 0.8 + 30 }) }
        #expect(run.requests.map(\.reason) == [.new])
        // Another picture in the same place: a change.
        for _ in 0..<4 { _ = run.step(sceneFrame(quad: printQuad, picture: portrait)) }
        #expect(run.requests.map(\.reason) == [.new, .changed])
        #expect(Set(run.requests.map(\.photo)).count == 1)
    }

    @Test func reloadRecolorsWithTheNewModelAndRefusesABrokenOne() throws {
        let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
        let processor = try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options())
        let run = Run(processor)
        for _ in 0..<6 { _ = run.step(sceneFrame(quad: printQuad, picture: landscape)) }
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(getpid()).onnx").path
        try Data("not a model".utf8).write(to: URL(fileURLWithPath: broken))
        defer { try? FileManager.default.removeItem(atPath: broken) }
        #expect(throws: (any Error).self) { try processor.reload(.bare(broken, preset: .colorcam)) }
        for _ in 0..<3 { _ = run.step(sceneFrame(quad: printQuad, picture: landscape)) }
        #expect(run.requests.map(\.reason) == [.new])
        try processor.reload(bundle)
        for _ in 0..<3 { _ = run.step(sceneFrame(quad: printQuad, picture: landscape)) }
        #expect(run.requests.map(\.reason) == [.new, .changed])
    }

    @Test func savedPhotosAreWrittenOnceWithASidecar() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cc-save-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
        let processor = try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options(save: dir))
        let run = Run(processor)
        for _ in 0..<10 { _ = run.step(sceneFrame(quad: printQuad, picture: landscape)) }
        try processor.finish()
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files.count == 2 && files[0].hasSuffix(".json") && files[1].hasSuffix(".png"), "\(files)")
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/" + files[0])))
            as? [String: Any]
        #expect((json?["corners"] as? [[Double]])?.count == 4)
        #expect(json?["model"] as? String == bundle.name)
        // Aspect of the print (≈ 180 × 132) → the long side 256 wide.
        #expect(json?["width"] as? Int == 256)
        #expect(abs((json?["height"] as? Int ?? 0) - 188) <= 6)
        let image = try ImageFile.read(dir + "/" + files[1])
        #expect(image.widthPx == 256)
    }

    /// A keepsake is a view with nothing over the print: a skin-coloured hand lying on the print for the first
    /// frames is colorized first (the photo is new), but once it is gone the clear view is colorized again and
    /// replaces it, and the sidecar says how much was covered.
    @Test func theSavedViewIsOneWithNothingOverThePrint() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cc-cover-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
        let processor = try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options(save: dir))
        let run = Run(processor)
        for _ in 0..<12 {
            let frame = sceneFrame(quad: printQuad, picture: landscape)
            paintHand(on: frame, centreX: 190, centreY: 120, radiusPx: 28)
            _ = run.step(frame)
        }
        let coveredRequests = run.requests.count
        #expect(coveredRequests == 1, "the photo is colorized while covered: \(run.requests)")
        for _ in 0..<12 { _ = run.step(sceneFrame(quad: printQuad, picture: landscape)) }
        #expect(run.requests.dropFirst(coveredRequests).first?.reason == .changed, "\(run.requests)")
        try processor.finish()
        let json = try savedSidecar(in: dir)
        #expect((json["frame"] as? Int ?? -1) >= 12, "the saved view is a covered one: \(json)")
        #expect((json["covered"] as? Double ?? 1) < 0.01, "\(json)")
    }

    /// A hand the cover mask cannot see (here a grey finger on a grey print: no tone to tell it by), reaching over
    /// the print's top edge, lies on it while it is first colorized; when it goes, the print has changed in one place
    /// only (too little for the whole thumbnail's distance) and its edge there is clear again, so the clear view is
    /// colorized again and replaces the keepsake. The same finger arriving on a print seen clear leaves the
    /// keepsake alone (there the edge is less clear now).
    @Test func aHandOfThePrintsOwnToneIsToldWhenItGoes() throws {
        let covered = { () -> FrameBuffer in
            let frame = sceneFrame(quad: printQuad, picture: landscape)
            self.paintFinger(on: frame, x: 140..<156, y: 30..<88, luma: 110)
            return frame
        }
        let clear = { sceneFrame(quad: printQuad, picture: landscape) }
        let cases: [(first: () -> FrameBuffer, then: () -> FrameBuffer, keepsakeFrom: ClosedRange<Int>)] = [
            (covered, clear, 12...23), (clear, covered, 0...11)
        ]
        for (first, then, keepsakeFrom) in cases {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cc-unseen-\(getpid())").path
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
            let processor = try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options(save: dir))
            let run = Run(processor)
            for _ in 0..<12 { _ = run.step(first()) }
            #expect(run.requests.map(\.reason) == [.new], "\(run.requests)")
            for _ in 0..<12 { _ = run.step(then()) }
            try processor.finish()
            let json = try savedSidecar(in: dir)
            #expect(keepsakeFrom.contains(json["frame"] as? Int ?? -1), "the saved view is a covered one: \(json)")
        }
    }

    /// The model's colours go on the print, not on the hand lying on it: the hand keeps its own colour.
    @Test func aHandOverAColorizedPrintKeepsItsOwnColour() throws {
        let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
        let run = Run(try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options()))
        for _ in 0..<8 { _ = run.step(sceneFrame(quad: printQuad, picture: landscape)) }
        let frame = sceneFrame(quad: printQuad, picture: landscape)
        paintHand(on: frame, centreX: 190, centreY: 120, radiusPx: 28)
        #expect(run.step(frame) != nil, "the print carries colour")
        let g = frame.geometry
        // Every chroma sample well inside the disc is the hand's own; the print around it is painted.
        var kept = 0, inside = 0
        for cy in 50..<70 {
            for cx in 85..<105 where (2 * cx - 190) * (2 * cx - 190) + (2 * cy - 120) * (2 * cy - 120) <= 18 * 18 {
                inside += 1
                let c = cy * g.chromaWidthPx + cx
                if frame.cb.load(fromByteOffset: c, as: UInt8.self) == 105
                    && frame.cr.load(fromByteOffset: c, as: UInt8.self) == 158
                {
                    kept += 1
                }
            }
        }
        #expect(inside > 200 && kept == inside, "\(kept) of \(inside) hand samples kept their colour")
        let painted = frame.cb.load(fromByteOffset: 40 * g.chromaWidthPx + 50, as: UInt8.self)
        let paintedCr = frame.cr.load(fromByteOffset: 40 * g.chromaWidthPx + 50, as: UInt8.self)
        #expect(painted != 128 || paintedCr != 128, "the print away from the hand is coloured")
    }

    /// The JSON sidecar of the (one) photo saved in `dir`.
    func savedSidecar(in dir: String) throws -> [String: Any] {
        let sidecar = try #require(
            try FileManager.default.contentsOfDirectory(atPath: dir).first { $0.hasSuffix(".json") })
        return try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/" + sidecar)))
                as? [String: Any])
    }

    /// A neutral bar (a grey finger) of `luma` over frame pixels `x` × `y`.
    func paintFinger(on frame: FrameBuffer, x: Range<Int>, y: Range<Int>, luma: UInt8) {
        let g = frame.geometry
        for py in y {
            for px in x {
                frame.luma.storeBytes(of: luma, toByteOffset: py * g.widthPx + px, as: UInt8.self)
                let c = (py / 2) * g.chromaWidthPx + px / 2
                frame.cb.storeBytes(of: 128, toByteOffset: c, as: UInt8.self)
                frame.cr.storeBytes(of: 128, toByteOffset: c, as: UInt8.self)
            }
        }
    }

    /// A disc lying on the frame, skin-toned by default (Y 170, Cb 105, Cr 158): a hand or a finger over the print.
    func paintHand(
        on frame: FrameBuffer, centreX: Int, centreY: Int, radiusPx: Int, luma: UInt8 = 170, cb: UInt8 = 105,
        cr: UInt8 = 158
    ) {
        let g = frame.geometry
        for y in (centreY - radiusPx)...(centreY + radiusPx) {
            for x in (centreX - radiusPx)...(centreX + radiusPx)
            where (x - centreX) * (x - centreX) + (y - centreY) * (y - centreY) <= radiusPx * radiusPx {
                frame.luma.storeBytes(of: luma, toByteOffset: y * g.widthPx + x, as: UInt8.self)
                let c = (y / 2) * g.chromaWidthPx + x / 2
                frame.cb.storeBytes(of: cb, toByteOffset: c, as: UInt8.self)
                frame.cr.storeBytes(of: cr, toByteOffset: c, as: UInt8.self)
            }
        }
    }

    @Test func aModelThatIsNotAColorizerIsRefused() throws {
        let geometry = FrameGeometry(widthPx: 64, heightPx: 48, chroma: .yuv420(.jpeg))
        let missing = ModelBundle.bare("/nonexistent/model.onnx", preset: .colorcam)
        #expect(throws: (any Error).self) { try PhotoColorProcessor(bundle: missing, geometry: geometry) }
    }
}
