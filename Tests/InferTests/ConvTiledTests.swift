import Testing

@testable import Infer

/// The tiled direct conv kernel (`ConvTiledKernel`) against the naive reference on the shapes where it is chosen
/// (few channels) and on edge sizes: 1×1, 3×7, 17×31 inputs; channels 1/3/8/13/16; stride 1 and 2; asymmetric pads;
/// dilation; groups; 5×3 kernels; fused ReLU / Clip. Tolerance: |fast − reference| ≤ 1e-4·max(1, |reference|).
@Suite struct ConvTiledTests {
    struct Case: CustomStringConvertible, Sendable {
        var channels: Int, height: Int, width: Int, outChannels: Int
        var kernel: [Int64] = [3, 3], stride: Int64 = 1, dilation: Int64 = 1, group: Int64 = 1
        var pads: [Int64] = [1, 1, 1, 1]
        var activation = "Relu"
        /// The instruction sets that choose the tiled kernel for it (nil: all); the others run im2col + sgemm.
        var tiledOn: Set<InstructionSet>? = nil
        var description: String {
            "c\(channels)→\(outChannels) \(height)x\(width) k\(kernel) s\(stride) d\(dilation) g\(group) p\(pads) \(activation)"
        }
    }

    static let cases: [Case] = {
        var all: [Case] = []
        for (h, w) in [(1, 1), (3, 7), (17, 31)] {
            for c in [1, 3, 8, 13, 16] {
                all.append(Case(channels: c, height: h, width: w, outChannels: c == 13 ? 5 : 8))
                all.append(Case(channels: c, height: h, width: w, outChannels: 16, stride: 2, pads: [0, 1, 2, 1]))
                all.append(
                    Case(
                        channels: c, height: h, width: w, outChannels: 13, dilation: 2, pads: [2, 1, 2, 3],
                        activation: "Clip"))
            }
            all.append(Case(channels: 16, height: h, width: w, outChannels: 16, group: 2))
            if h >= 2 && w >= 2 {  // a 5×3 window needs at least 2×2 inputs with these pads
                all.append(
                    Case(
                        channels: 8, height: h, width: w, outChannels: 12, kernel: [5, 3], stride: 2,
                        pads: [2, 0, 1, 1], activation: "None"))
            }
            all.append(
                Case(
                    channels: 13, height: h, width: w, outChannels: 9, kernel: [1, 1], stride: 2,
                    pads: [1, 0, 0, 1]))
        }
        // 16-column rows (AVX-512's narrow tile), 20 output channels (a partial 8-channel block), 5×3 taps too.
        all.append(Case(channels: 48, height: 5, width: 16, outChannels: 20))
        all.append(Case(channels: 9, height: 6, width: 16, outChannels: 11, kernel: [5, 3], pads: [2, 1, 2, 1]))
        // Wide rows: several tiles (8, 16 or 32 columns by instruction set) plus a partial one, and bands of rows.
        all.append(Case(channels: 8, height: 40, width: 70, outChannels: 8))
        all.append(Case(channels: 16, height: 33, width: 65, outChannels: 8, stride: 2))
        // Rows that fill the tiles poorly, computed as flattened runs (`Layout.flat`, AVX2 and AVX-512): the
        // detector's 40-column rows; 20-column rows in three bands; a dilated conv's wider padding.
        all.append(Case(channels: 24, height: 30, width: 40, outChannels: 32))
        all.append(Case(channels: 64, height: 60, width: 20, outChannels: 12))
        all.append(Case(channels: 8, height: 20, width: 20, outChannels: 12, dilation: 2, pads: [2, 2, 2, 2]))
        // The detector's 80→32 conv (K = 720): tiled with AVX2's and AVX-512's tiles, not with baseline's.
        all.append(Case(channels: 80, height: 30, width: 40, outChannels: 32, tiledOn: [.avx2, .avx512]))
        return all
    }()

    /// Every case on every instruction set this CPU runs (the AVX-512 build only where the CPU has it).
    @Test(arguments: cases, InstructionSet.supportedHere)
    func tiledConvMatchesReference(_ c: Case, _ isa: InstructionSet) throws {
        var rng = SeededRandom(seed: UInt64(c.channels * 7919 + c.height * 31 + c.width + c.outChannels))
        let cg = c.channels / Int(c.group)
        let area = Int(c.kernel[0] * c.kernel[1])
        let convOut = c.activation == "None" ? "out" : "y"
        var nodes = [
            TestModel.Node(
                op: "Conv", inputs: ["x", "w", "b"], outputs: [convOut],
                ints: [
                    "pads": c.pads, "strides": [c.stride, c.stride],
                    "dilations": [c.dilation, c.dilation], "kernel_shape": c.kernel
                ],
                int: ["group": c.group])
        ]
        var inits: [(String, [Int], [Float])] = [
            ("w", [c.outChannels, cg, Int(c.kernel[0]), Int(c.kernel[1])], rng.floats(c.outChannels * cg * area)),
            ("b", [c.outChannels], rng.floats(c.outChannels))
        ]
        if c.activation == "Relu" { nodes.append(TestModel.Node(op: "Relu", inputs: ["y"], outputs: ["out"])) }
        if c.activation == "Clip" {
            nodes.append(TestModel.Node(op: "Clip", inputs: ["y", "lo", "hi"], outputs: ["out"]))
            inits += [("lo", [], [-0.25]), ("hi", [], [0.5])]
        }
        let shape = [1, c.channels, c.height, c.width]
        let model = try ONNXModel.decode(
            TestModel.encode(
                nodes: nodes, initializers: inits, inputDims: shape,
                outputName: "out"), file: "tiled.onnx")
        let fast = try InferenceEngine(model: model, mode: .fast, instructionSet: isa)
        let reference = try InferenceEngine(model: model, mode: .reference)
        if c.tiledOn?.contains(isa) ?? true {
            #expect(fast.kernelTypeNames == ["ConvTiledKernel"], "the activation should fuse into a tiled conv")
        } else {
            #expect(fast.kernelTypeNames == ["ConvGemmKernel"], "\(c) \(isa): im2col + sgemm")
        }
        #expect(fast.instructionSet == isa)
        let input = Tensor(shape: shape, data: rng.floats(shape.reduce(1, *)))
        let got = fast.run(input), want = reference.run(input)
        #expect(got.shape == want.shape)
        let worst = worstRelativeError(got.data, want.data)
        #expect(worst <= 1e-4, "\(c) \(isa): relative error \(worst)")
    }

    @Test func selectionFollowsTheMeasuredCostPerInstructionSet() {
        var thin = ConvGeometry()
        thin.inChannels = 16; thin.outChannels = 8; thin.kernelHeight = 3; thin.kernelWidth = 3
        thin.outHeight = 16; thin.outWidth = 16
        var wide = thin
        wide.inChannels = 256; wide.outChannels = 256; wide.outWidth = 20  // 20 columns: 62 % of either tile
        var longK = thin
        longK.inChannels = 80; longK.outChannels = 32  // K = 720: the detector's widest 3×3 conv
        var wideRows = wide
        wideRows.outWidth = 32  // ECCV16's narrowest rows: one full AVX-512 tile
        var narrowRows = wide
        narrowRows.outWidth = 16  // the colorizer's 128-channel rows: one full AVX-512 narrow tile
        var longK64 = longK
        longK64.outChannels = 64  // K = 720 at 64 channels: sgemm with AVX2 (the tile measured slower past K = 576)
        var fortyColumns = longK
        fortyColumns.outWidth = 40  // the detector's 80→32 conv at 30×40: 62 % of a 32-column tile
        var strided = fortyColumns
        strided.strideWidth = 2; strided.strideHeight = 2
        for set in InstructionSet.allCases {
            #expect(ConvTiledKernel.usesFlatRows(fortyColumns, kernels: set.kernels) == (set != .baseline))
            #expect(!ConvTiledKernel.usesFlatRows(strided, kernels: set.kernels))
            #expect(!ConvTiledKernel.usesFlatRows(wideRows, kernels: set.kernels))
            #expect(!ConvTiledKernel.usesFlatRows(narrowRows, kernels: set.kernels))
            #expect(ConvTiledKernel.isPreferred(thin, kernels: set.kernels, override: nil))
            #expect(!ConvTiledKernel.isPreferred(wide, kernels: set.kernels, override: nil))
            #expect(ConvTiledKernel.isPreferred(wide, kernels: set.kernels, override: true))
            #expect(!ConvTiledKernel.isPreferred(thin, kernels: set.kernels, override: false))
            #expect(ConvTiledKernel.isPreferred(longK, kernels: set.kernels, override: nil) == (set != .baseline))
            if set != .avx512 { #expect(!ConvTiledKernel.isPreferred(longK64, kernels: set.kernels, override: nil)) }
            #expect(ConvTiledKernel.isPreferred(wideRows, kernels: set.kernels, override: nil) == (set == .avx512))
            #expect(ConvTiledKernel.isPreferred(narrowRows, kernels: set.kernels, override: nil) == (set == .avx512))
            #expect(ConvTiledKernel.usesNarrowTile(narrowRows, kernels: set.kernels) == (set == .avx512))
            #expect(!ConvTiledKernel.usesNarrowTile(wideRows, kernels: set.kernels))
        }
    }
}
