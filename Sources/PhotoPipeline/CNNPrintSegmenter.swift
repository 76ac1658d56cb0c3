import ColorcamCore
import Detect
import Infer

/// The detector's learned front-end: a small fully-convolutional network run by colorcam's `InferenceEngine` on the
/// frame's coarse grid (`SegmentationGrid`).
///
/// Model contract: one input, float32 `[1, 3, H, W]` (`SegmenterInput`: the cells' Y, Cb, Cr means, H and W the grid
/// padded to multiples of 8); one output, float32 `[1, 2, H, W]` or `[1, 10, H, W]`: channel 0 = probability that the
/// cell lies inside a print, channel 1 = that a print's visible paper edge passes through it (the sigmoid is in the
/// graph); channels 2–9, when present, the corners of the print the cell lies in (`SegmentationMaps.corners`).
///
/// Lifecycle: `init` loads and prepares the model for one frame geometry and allocates the input and output tensors
/// once; `segment` fills the input, runs the engine and returns maps that point into the output tensor (valid until
/// the next call). Threading: one thread at a time (the capture thread, through `PhotoDetector`); `segment` allocates
/// nothing and does no I/O.
public final class CNNPrintSegmenter: PrintSegmenter {
    public let grid: SegmentationGrid
    public let geometry: FrameGeometry
    public let model: DetectModel
    /// The prepared engine (its shapes and step summary, for profiles).
    public let engine: InferenceEngine
    private let input: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeMutableBufferPointer<Float>
    /// Close looks (`segment(_:windowOriginXPx:windowOriginYPx:)`): the same model prepared for the window's shape,
    /// with its own tensors (nil when the frame has no close-look grid).
    public let closeLookGrid: SegmentationGrid?
    private let closeEngine: InferenceEngine?
    private let closeInput: UnsafeMutableBufferPointer<Float>
    private let closeOutput: UnsafeMutableBufferPointer<Float>

    /// The close look's window, cells a side: 104 cells of 2 px at 640×480 (208 px: a print under a fifth of the
    /// frame's short side with room around it), at about 0.55 of a full frame's CNN time. Chosen on the
    /// training-split tuning scenes (seeds 21 / 22, recall / precision at Jaccard ≥ 0.9) and the tracking benchmark:
    /// 104 cells 84.6 / 90.8 and 82.1 / 89.5 %; 128 cells 86.1 / 92.9 and 83.0 / 90.8 %, but the tracking benchmark's
    /// seed 12 dark print (black on a black table, outlined differently by every full search) then fits a window
    /// too and its jitter rose from 1.5 to 9.7 px; 152 cells 86.6 / 92.2 and 83.8 / 91.5 %, and the demo scene's large
    /// prints fit too (`bench detect`'s mean per frame there 3.5 → 8.0 ms).
    public static let closeLookWindowCells = 104

    /// The close-look grid for frames of `geometry`: cells half the frame grid's (rounded down to even, at least
    /// 2 px, so a 4:2:0 cell holds whole chroma samples), `closeLookWindowCells` a side; nil when the frame grid's
    /// cells are too small to halve or the window does not fit in the frame.
    public static func closeLookGrid(for geometry: FrameGeometry) -> SegmentationGrid? {
        let cellPx = SegmentationGrid(geometry: geometry).cellPx / 2 / 2 * 2
        let n = closeLookWindowCells
        guard cellPx >= 2, n * cellPx <= geometry.widthPx, n * cellPx <= geometry.heightPx else { return nil }
        return SegmentationGrid(cellPx: cellPx, widthCells: n, heightCells: n)
    }

    /// Loads `model` for frames of `geometry` (and for close looks, unless `closeLooks` is false).
    /// - Throws: `InferError` naming the model file: `.missingInput` when it cannot be read, `.badData` when it is
    ///   not a valid model or its output is not `[1, 2, H, W]` for input `[1, 3, H, W]`.
    public init(model: DetectModel, geometry: FrameGeometry, mode: EngineMode = .fast, closeLooks: Bool = true) throws {
        self.grid = SegmentationGrid(geometry: geometry)
        self.geometry = geometry
        self.model = model
        let h = grid.paddedHeightCells, w = grid.paddedWidthCells
        engine = try InferenceEngine(path: model.modelPath, inputShape: [1, 3, h, w], mode: mode)
        guard engine.outputShape == [1, 2, h, w] || engine.outputShape == [1, 10, h, w] else {
            throw InferError(
                .badData, file: model.modelPath,
                "output '\(engine.outputName)' has shape \(engine.outputShape) for input [1, 3, \(h), \(w)]; "
                    + "a detect segmenter gives [1, 2, \(h), \(w)] or [1, 10, \(h), \(w)]")
        }
        input = .allocate(capacity: engine.inputCount)
        input.initialize(repeating: 0)
        output = .allocate(capacity: engine.outputCount)
        output.initialize(repeating: 0)
        closeLookGrid = closeLooks ? CNNPrintSegmenter.closeLookGrid(for: geometry) : nil
        if let window = closeLookGrid {
            let n = window.widthCells
            let close = try InferenceEngine(path: model.modelPath, inputShape: [1, 3, n, n], mode: mode)
            guard close.outputShape[0...1] == engine.outputShape[0...1], close.outputShape[2...] == [n, n] else {
                throw InferError(
                    .badData, file: model.modelPath,
                    "output '\(close.outputName)' has shape \(close.outputShape) for input [1, 3, \(n), \(n)]")
            }
            closeEngine = close
        } else {
            closeEngine = nil
        }
        closeInput = .allocate(capacity: closeEngine?.inputCount ?? 0)
        closeInput.initialize(repeating: 0)
        closeOutput = .allocate(capacity: closeEngine?.outputCount ?? 0)
        closeOutput.initialize(repeating: 0)
    }

    deinit {
        input.deallocate()
        output.deallocate()
        closeInput.deallocate()
        closeOutput.deallocate()
    }

    public func segment(_ frame: FrameBuffer, windowOriginXPx: Int, windowOriginYPx: Int) -> SegmentationMaps {
        guard let window = closeLookGrid, let closeEngine else {
            preconditionFailure("CNNPrintSegmenter made without close looks")
        }
        precondition(frame.geometry == geometry, "CNNPrintSegmenter made for \(geometry), given \(frame.geometry)")
        SegmenterInput.fill(
            from: frame, grid: window, originXPx: windowOriginXPx, originYPx: windowOriginYPx,
            into: closeInput.baseAddress!)
        closeEngine.run(input: UnsafeBufferPointer(closeInput), output: closeOutput)
        return CNNPrintSegmenter.maps(of: closeOutput, engine: closeEngine, grid: window)
    }

    public func segment(_ frame: FrameBuffer) -> SegmentationMaps {
        precondition(frame.geometry == geometry, "CNNPrintSegmenter made for \(geometry), given \(frame.geometry)")
        SegmenterInput.fill(from: frame, grid: grid, into: input.baseAddress!)
        engine.run(input: UnsafeBufferPointer(input), output: output)
        return maps
    }

    /// The last `segment`'s maps (zeros before the first).
    public var maps: SegmentationMaps { CNNPrintSegmenter.maps(of: output, engine: engine, grid: grid) }

    /// The maps in `output`, the output tensor `engine` writes for `grid`'s padded size: interior and edge planes,
    /// and the corner planes when the model gives ten.
    private static func maps(
        of output: UnsafeMutableBufferPointer<Float>, engine: InferenceEngine, grid: SegmentationGrid
    ) -> SegmentationMaps {
        let base = UnsafePointer(output.baseAddress!)
        let plane = grid.paddedWidthCells * grid.paddedHeightCells
        return SegmentationMaps(
            interior: base, edge: base + plane, rowStride: grid.paddedWidthCells,
            corners: engine.outputShape[1] == 10 ? base + 2 * plane : nil, planeStride: plane)
    }

    /// The input tensor `segment` last filled (for tests and tools).
    public var inputTensor: UnsafeBufferPointer<Float> { UnsafeBufferPointer(input) }
}
