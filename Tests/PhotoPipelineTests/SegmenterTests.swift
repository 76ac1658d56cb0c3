import ColorcamCore
import Detect
import Foundation
import Infer
import Testing

@testable import PhotoPipeline

/// A temporary directory for one test, removed by the caller.
private func temporaryDirectory() throws -> String {
    let dir = NSTemporaryDirectory() + "colorcam-segmenter-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

private func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

private func sigmoid(_ x: Float) -> Float { 1 / (1 + exp(-x)) }

/// Largest corner distance between two quads over the best cyclic pairing of their canonical orders.
private func cornerError(_ a: Quad, _ b: Quad) -> Double {
    let x = a.canonicallyOrdered(), y = b.canonicallyOrdered()
    return (0..<4).map { shift in
        (0..<4).map { i in ((x[i] - y[i + shift]) * (x[i] - y[i + shift])).sum().squareRoot() }.max()!
    }.min()!
}

/// The grid input equals cell means computed here by hand from random planes, padding included: 4:2:0 at the
/// standard sizes, a size whose grid needs padding on both axes and leaves frame pixels over, 4:2:2, 4:4:4, mono.
@Test(arguments: [
    (640, 480, ChromaFormat.yuv420(.jpeg)), (1280, 720, .yuv420(.jpeg)), (642, 486, .yuv420(.mpeg2)),
    (100, 62, .yuv420(.jpeg)), (322, 250, .yuv422), (200, 100, .yuv444), (200, 100, .mono)
])
func segmenterInputIsTheCellMeans(size: (Int, Int, ChromaFormat)) {
    let geometry = FrameGeometry(widthPx: size.0, heightPx: size.1, chroma: size.2)
    expectCellMeans(randomFrame(geometry), grid: SegmentationGrid(geometry: geometry), originX: 0, originY: 0)
}

/// A close look's window (cells of 2 px from an even origin inside the frame): its input is the cell means from
/// that origin, in each chroma layout; windows at the frame's far corner and at its origin included.
@Test(arguments: [
    (ChromaFormat.yuv420(.jpeg), 150, 96), (.yuv420(.jpeg), 640 - 208, 480 - 208), (.yuv420(.jpeg), 0, 0),
    (.yuv422, 38, 270), (.yuv444, 2, 4), (.mono, 100, 10)
])
func aWindowsInputIsTheCellMeansFromItsOrigin(window: (ChromaFormat, Int, Int)) {
    let geometry = FrameGeometry(widthPx: 640, heightPx: 480, chroma: window.0)
    expectCellMeans(
        randomFrame(geometry), grid: SegmentationGrid(cellPx: 2, widthCells: 104, heightCells: 104),
        originX: window.1, originY: window.2)
}

/// A frame of pseudo-random bytes (seeded from its size and layout).
private func randomFrame(_ geometry: FrameGeometry) -> FrameBuffer {
    let frame = FrameBuffer(geometry: geometry)
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &+ UInt64(geometry.widthPx * 7919 + geometry.heightPx)
    let bytes = frame.pixels.bindMemory(to: UInt8.self)
    for k in 0..<bytes.count {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        bytes[k] = UInt8(truncatingIfNeeded: state >> 24)
    }
    return frame
}

/// `SegmenterInput.fill` of `grid` from (`originX`, `originY`) equals cell means computed here, padding included.
private func expectCellMeans(
    _ frame: FrameBuffer, grid: SegmentationGrid, originX: Int, originY: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let geometry = frame.geometry
    let wp = grid.paddedWidthCells, hp = grid.paddedHeightCells, c = grid.cellPx
    #expect(wp % 8 == 0 && hp % 8 == 0 && wp >= grid.widthCells && hp >= grid.heightCells)
    let tensor = UnsafeMutablePointer<Float>.allocate(capacity: 3 * wp * hp)
    defer { tensor.deallocate() }
    tensor.initialize(repeating: .nan, count: 3 * wp * hp)
    SegmenterInput.fill(from: frame, grid: grid, originXPx: originX, originYPx: originY, into: tensor)
    let luma = frame.luma.bindMemory(to: UInt8.self)
    let cb = frame.cb.bindMemory(to: UInt8.self), cr = frame.cr.bindMemory(to: UInt8.self)
    let (sx, sy) = geometry.chroma.subsamplingShift
    func expected(_ channel: Int, _ i: Int, _ j: Int) -> Double {
        let i = min(i, grid.widthCells - 1), j = min(j, grid.heightCells - 1)  // the padding repeats the edge
        let x0 = originX + i * c, y0 = originY + j * c
        var sum = 0.0, n = 0.0
        if channel == 0 {
            for y in y0..<(y0 + c) {
                for x in x0..<(x0 + c) { sum += Double(luma[y * geometry.widthPx + x]); n += 1 }
            }
            return sum / n / 255 - 0.5
        }
        guard geometry.chroma.hasChroma else { return 0 }
        let plane = channel == 1 ? cb : cr
        for y in (y0 >> sy)..<((y0 + c) >> sy) {
            for x in (x0 >> sx)..<((x0 + c) >> sx) {
                sum += Double(plane[y * geometry.chromaWidthPx + x]); n += 1
            }
        }
        return (sum / n - 128) / 128
    }
    var worst = 0.0, worstAt = (0, 0, 0)
    for channel in 0..<3 {
        for j in 0..<hp {
            for i in 0..<wp {
                let d = abs(Double(tensor[(channel * hp + j) * wp + i]) - expected(channel, i, j))
                if !(d <= worst) { worst = d; worstAt = (channel, i, j) }
            }
        }
    }
    #expect(
        worst < 1e-5, "worst difference \(worst) at channel, x, y = \(worstAt)", sourceLocation: sourceLocation)
}

/// Close looks: at 640×480 a window of 104 cells of 2 px; at 1280×720 (6-px cells) cells of 2 px too (half, rounded
/// down to even); none where the frame's cells are 2 px (nothing smaller holds whole 4:2:0 chroma samples) or the
/// window does not fit.
@Test func closeLookGridsFollowTheFrameGrid() {
    func grid(_ w: Int, _ h: Int) -> SegmentationGrid? {
        CNNPrintSegmenter.closeLookGrid(for: FrameGeometry(widthPx: w, heightPx: h, chroma: .yuv420(.jpeg)))
    }
    #expect(grid(640, 480) == SegmentationGrid(cellPx: 2, widthCells: 104, heightCells: 104))
    #expect(grid(1280, 720) == SegmentationGrid(cellPx: 2, widthCells: 104, heightCells: 104))
    #expect(grid(1920, 1080) == SegmentationGrid(cellPx: 4, widthCells: 104, heightCells: 104))
    #expect(grid(320, 240) == nil)
    #expect(grid(960, 200) == nil)
}

/// A 1×1 convolution + sigmoid segmenter (`segmenterWeights`, `segmenterBias`) written as ONNX bytes into `dir`;
/// its path. Interior: 60 × (Y/255 − 0.5) + 19.4 crosses 0 at Y ≈ 45 (a table of 20, a picture ≥ 70); edge: never.
private func writeConv1x1Segmenter(in dir: String) throws -> String {
    let path = dir + "/segmenter.onnx"
    try write(TestONNX.conv1x1Sigmoid(weights: segmenterWeights, bias: segmenterBias), to: path)
    return path
}

private let segmenterWeights: [Float] = [60, 0, 0, 0, 0.5, -0.5], segmenterBias: [Float] = [19.4, -8]

/// The real engine end to end: a 1×1 convolution + sigmoid model written as ONNX bytes, loaded as a bare file,
/// prepared for a 320×240 frame's padded grid; its maps are sigmoid(W·input + b) of the grid input, and the
/// detector in `learned` mode places the print those maps show (interior = the cell is brighter than the table).
@Test func cnnSegmenterRunsTheEngineEndToEnd() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = try writeConv1x1Segmenter(in: dir)
    let model = try DetectModel.load(path)
    #expect(model.modelPath == path)
    let frame = sceneFrame(tableLuma: 20, quad: printQuad, picture: landscape)
    let segmenter = try CNNPrintSegmenter(model: model, geometry: frame.geometry)
    let grid = segmenter.grid
    #expect(segmenter.engine.inputShape == [1, 3, grid.paddedHeightCells, grid.paddedWidthCells])
    let maps = segmenter.segment(frame)
    let input = segmenter.inputTensor, plane = grid.paddedWidthCells * grid.paddedHeightCells
    #expect(maps.rowStride == grid.paddedWidthCells)
    var worst: Float = 0, inside = 0
    for k in 0..<plane {
        let j = k / maps.rowStride, i = k % maps.rowStride
        for channel in 0..<2 {
            var z = segmenterBias[channel]
            for c in 0..<3 { z += segmenterWeights[channel * 3 + c] * input[c * plane + k] }
            let got = channel == 0 ? maps.interior[j * maps.rowStride + i] : maps.edge[j * maps.rowStride + i]
            worst = max(worst, abs(got - sigmoid(z)))
        }
        if maps.interior[k] >= 0.5 { inside += 1 }
    }
    #expect(worst < 1e-5)
    // The print covers about 180 × 132 px = 90 × 66 cells of 2 px.
    #expect(abs(Double(inside) / (90 * 66) - 1) < 0.05, "\(inside) interior cells")
    let found = PhotoDetector(geometry: frame.geometry, segmenter: segmenter, mode: .learned).detect(frame)
    #expect(found.count == 1, "\(found)")
    if let o = found.first { #expect(cornerError(o.quad, printQuad) < 1.5, "\(o.quad)") }
}

/// The engine on a close look's window: the maps are sigmoid(W·input + b) of the window's own input (cells of 2 px
/// at 640×480 from the origin asked for), and a close look leaves the frame's maps as they were.
@Test func aCloseLookRunsTheModelOnItsWindow() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = try writeConv1x1Segmenter(in: dir)
    let frame = randomFrame(FrameGeometry(widthPx: 640, heightPx: 480, chroma: .yuv420(.jpeg)))
    let segmenter = try CNNPrintSegmenter(model: try DetectModel.load(path), geometry: frame.geometry)
    let window = try #require(segmenter.closeLookGrid)
    let whole = segmenter.segment(frame)
    let before = Array(UnsafeBufferPointer(start: whole.interior, count: 160 * 120))
    let maps = segmenter.segment(frame, windowOriginXPx: 300, windowOriginYPx: 180)
    #expect(Array(UnsafeBufferPointer(start: whole.interior, count: 160 * 120)) == before)
    let n = window.widthCells, plane = n * n
    let input = UnsafeMutablePointer<Float>.allocate(capacity: 3 * plane)
    defer { input.deallocate() }
    SegmenterInput.fill(from: frame, grid: window, originXPx: 300, originYPx: 180, into: input)
    var worst: Float = 0
    for k in 0..<plane {
        for channel in 0..<2 {
            var z = segmenterBias[channel]
            for c in 0..<3 { z += segmenterWeights[channel * 3 + c] * input[c * plane + k] }
            worst = max(worst, abs((channel == 0 ? maps.interior[k] : maps.edge[k]) - sigmoid(z)))
        }
    }
    #expect(maps.rowStride == n && worst < 1e-5, "worst \(worst)")
    let none = try CNNPrintSegmenter(model: try DetectModel.load(path), geometry: frame.geometry, closeLooks: false)
    #expect(none.closeLookGrid == nil)
}

/// A model with ten output planes: the last eight are the corner planes (`SegmentationMaps.corners`, one plane
/// apart), read in place from the engine's output; a two-plane model has none.
@Test func aTenPlaneModelGivesCornerPlanes() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let weights = (0..<30).map { Float($0 % 7) - 3 }, bias = (0..<10).map { Float($0) / 10 }
    let path = dir + "/corners.onnx"
    try write(TestONNX.conv1x1Sigmoid(weights: weights, bias: bias), to: path)
    let frame = sceneFrame(tableLuma: 20, quad: printQuad, picture: landscape)
    let segmenter = try CNNPrintSegmenter(model: try DetectModel.load(path), geometry: frame.geometry)
    let maps = segmenter.segment(frame)
    let corners = try #require(maps.corners)
    let grid = segmenter.grid, plane = grid.paddedWidthCells * grid.paddedHeightCells, input = segmenter.inputTensor
    #expect(maps.planeStride == plane)
    var worst: Float = 0
    for channel in 2..<10 {
        for k in stride(from: 0, to: plane, by: 97) {
            var z = bias[channel]
            for c in 0..<3 { z += weights[channel * 3 + c] * input[c * plane + k] }
            worst = max(worst, abs(corners[(channel - 2) * plane + k] - sigmoid(z)))
        }
    }
    #expect(worst < 1e-5)
    let twoPlanes = dir + "/maps.onnx"
    try write(TestONNX.conv1x1Sigmoid(weights: [Float](repeating: 1, count: 6), bias: [0, 0]), to: twoPlanes)
    let plain = try CNNPrintSegmenter(model: try DetectModel.load(twoPlanes), geometry: frame.geometry)
    #expect(plain.segment(frame).corners == nil)
}

/// A model whose output is not `[1, 2, H, W]` or `[1, 10, H, W]`, and a file that is not ONNX: one-line bad-data errors naming the file.
@Test func aModelThatIsNotASegmenterIsRefusedNamingItsFile() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
    let threeMaps = dir + "/three.onnx", garbage = dir + "/garbage.onnx"
    try write(TestONNX.conv1x1Sigmoid(weights: [Float](repeating: 1, count: 9), bias: [0, 0, 0]), to: threeMaps)
    try write(Array("not a model".utf8), to: garbage)
    for path in [threeMaps, garbage] {
        do {
            _ = try CNNPrintSegmenter(model: try DetectModel.load(path), geometry: geometry)
            Issue.record("\(path) was accepted")
        } catch let error as ColorcamError {
            #expect(error.kind == .badData)
            #expect(error.description.hasPrefix(path + ":"), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }
}

/// Bundles: extra manifest fields are ignored; a manifest of another kind, an unsupported grid, a missing model
/// file or path are refused with the right kind; `none` means no model.
@Test func detectModelBundlesAreReadStrictlyWhereTheContractIs() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    func bundle(_ name: String, manifest: String, model: Bool = true) throws -> String {
        let path = dir + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try write(Array(manifest.utf8), to: path + "/manifest.json")
        if model {
            try write(TestONNX.conv1x1Sigmoid(weights: [1, 0, 0, 0, 1, 0], bias: [0, 0]), to: path + "/model.onnx")
        }
        return path
    }
    func kind(_ body: () throws -> Any?) -> FailureKind? {
        do { _ = try body(); return nil } catch let error as ColorcamError { return error.kind } catch { return nil }
    }
    let good = try bundle(
        "good",
        manifest: """
            {"kind":"detect-segmenter","input":"frame","output":"maps","cell_px_per_coarse_factor":2,"multiple":8,
             "training":{"epochs":40,"data":["a","b"]},"heldout":{"f1":0.9}}
            """)
    #expect(try DetectModel.load(good).modelPath == good + "/model.onnx")
    #expect(try DetectModel.resolve(good)?.name == good)
    #expect(try DetectModel.resolve("none") == nil)
    #expect(
        kind { try DetectModel.load(bundle("colorizer", manifest: #"{"kind":"colorizer","file":"model.onnx"}"#)) }
            == .badData)
    #expect(kind { try DetectModel.load(bundle("grid3", manifest: #"{"cell_px_per_coarse_factor":3}"#)) } == .badData)
    #expect(kind { try DetectModel.load(bundle("multiple16", manifest: #"{"multiple":16}"#)) } == .badData)
    #expect(kind { try DetectModel.load(bundle("notjson", manifest: "[1, 2")) } == .badData)
    #expect(kind { try DetectModel.load(bundle("nomodel", manifest: "{}", model: false)) } == .missingInput)
    #expect(kind { try DetectModel.load(dir + "/absent") } == .missingInput)
    #expect(kind { try DetectModel.resolve(dir + "/absent.onnx") } == .missingInput)
}

/// The processor loads the segmenter when its options carry a detect model, in the mode asked for (default `both`),
/// and not at all in `classic` mode.
@Test func processorBuildsItsDetectorWithTheDetectModel() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/segmenter.onnx"
    try write(TestONNX.conv1x1Sigmoid(weights: [60, 0, 0, 0, 0, 0], bias: [19.4, -8]), to: path)
    let bundle = try ModelBundle.load(repositoryRoot + "/Models/colorcam-default")
    let geometry = FrameGeometry(widthPx: 320, heightPx: 240, chroma: .yuv420(.jpeg))
    var options = PhotoPipelineOptions()
    options.detectModel = try DetectModel.load(path)
    for (asked, expected) in [(nil, DetectorMode.both), (.learned, .learned), (.classic, .classic)]
        as [(DetectorMode?, DetectorMode)]
    {
        options.detectorMode = asked
        let processor = try PhotoColorProcessor(bundle: bundle, geometry: geometry, options: options)
        #expect(processor.session.detector.mode == expected)
        #expect((processor.session.detector.segmenter != nil) == (expected != .classic))
    }
    #expect(try PhotoColorProcessor(bundle: bundle, geometry: geometry).session.detector.mode == .classic)
}
