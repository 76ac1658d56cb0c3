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

    /// Loads `model` for frames of `geometry`.
    /// - Throws: `InferError` naming the model file: `.missingInput` when it cannot be read, `.badData` when it is
    ///   not a valid model or its output is not `[1, 2, H, W]` for input `[1, 3, H, W]`.
    public init(model: DetectModel, geometry: FrameGeometry, mode: EngineMode = .fast) throws {
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
    }

    deinit {
        input.deallocate()
        output.deallocate()
    }

    public func segment(_ frame: FrameBuffer) -> SegmentationMaps {
        precondition(frame.geometry == geometry, "CNNPrintSegmenter made for \(geometry), given \(frame.geometry)")
        SegmenterInput.fill(from: frame, grid: grid, into: input.baseAddress!)
        engine.run(input: UnsafeBufferPointer(input), output: output)
        return maps
    }

    /// The last `segment`'s maps (zeros before the first).
    public var maps: SegmentationMaps {
        let base = UnsafePointer(output.baseAddress!)
        let plane = grid.paddedWidthCells * grid.paddedHeightCells
        return SegmentationMaps(
            interior: base, edge: base + plane, rowStride: grid.paddedWidthCells,
            corners: engine.outputShape[1] == 10 ? base + 2 * plane : nil,
            planeStride: plane)
    }

    /// The input tensor `segment` last filled (for tests and tools).
    public var inputTensor: UnsafeBufferPointer<Float> { UnsafeBufferPointer(input) }
}
