import Testing

@testable import Infer

/// The Winograd F(2×2, 3×3) conv (`ConvWinogradKernel`) against the naive reference kernel on the same arena: sizes
/// that leave partial tiles at the right and bottom edges (1×1, 2×3, 3×7, 17×31), dilation 1–3 (tiles in residue
/// classes), asymmetric and zero pads, batch 2, several blocks of tiles, no bias, fused ReLU / leaky ReLU / clip.
/// Tolerance: |winograd − reference| ≤ 1e-4·max(1, |reference|).
@Suite struct ConvWinogradTests {
    struct Case: CustomStringConvertible, Sendable {
        var batch = 1
        var channels: Int, height: Int, width: Int, outChannels: Int
        var dilation = 1
        var pads = [1, 1, 1, 1]  // top, left, bottom, right
        var bias = true
        var activation = FusedActivation.relu
        /// Tiles per block (nil: the kernel's default), to run several blocks and a partial last one.
        var tileBlock: Int? = nil
        var description: String {
            "n\(batch) c\(channels)→\(outChannels) \(height)x\(width) d\(dilation) p\(pads) bias \(bias) \(activation)"
                + (tileBlock.map { " blocks of \($0)" } ?? "")
        }

        var geometry: ConvGeometry {
            var g = ConvGeometry()
            g.batch = batch; g.inChannels = channels; g.inHeight = height; g.inWidth = width
            g.outChannels = outChannels; g.kernelHeight = 3; g.kernelWidth = 3
            g.dilationHeight = dilation; g.dilationWidth = dilation
            g.padTop = pads[0]; g.padLeft = pads[1]; g.padBottom = pads[2]; g.padRight = pads[3]
            g.outHeight = height + pads[0] + pads[2] - 2 * dilation
            g.outWidth = width + pads[1] + pads[3] - 2 * dilation
            return g
        }
    }

    static let cases: [Case] = {
        var all: [Case] = []
        for (h, w) in [(1, 1), (2, 3), (3, 7), (17, 31)] {
            for c in [1, 5, 16] {
                all.append(Case(channels: c, height: h, width: w, outChannels: c == 5 ? 7 : 8))
                all.append(
                    Case(
                        channels: c, height: h, width: w, outChannels: 6, pads: [0, 1, 2, 1], bias: false,
                        activation: .none))
            }
            all.append(
                Case(
                    channels: 9, height: h, width: w, outChannels: 4, dilation: 2, pads: [2, 1, 2, 3],
                    activation: .clip(-0.25, 0.5)))
            all.append(Case(batch: 2, channels: 3, height: h, width: w, outChannels: 5, activation: .leakyRelu(0.1)))
        }
        // No padding (the output smaller than the input), dilation 3 with odd sizes; tiles in several blocks of 32
        // (144 tiles: four whole blocks and a partial one; dilation 2: tiles of both residues in one block); a wide
        // layer (64 channels: planes whose sizes are powers of two, as on ECCV16; partial 8-channel blocks).
        all.append(Case(channels: 4, height: 9, width: 10, outChannels: 3, pads: [0, 0, 0, 0]))
        all.append(Case(channels: 6, height: 19, width: 23, outChannels: 5, dilation: 3, pads: [3, 3, 3, 3]))
        all.append(Case(channels: 16, height: 17, width: 31, outChannels: 12, tileBlock: 32))
        all.append(Case(channels: 7, height: 18, width: 21, outChannels: 9, dilation: 2, tileBlock: 64))
        all.append(Case(channels: 64, height: 16, width: 24, outChannels: 68))
        return all
    }()

    /// Every case on every instruction set this CPU runs (the GEMMs on the AVX-512 tile, else OpenBLAS).
    @Test(arguments: cases, InstructionSet.supportedHere)
    func winogradMatchesReference(_ c: Case, _ isa: InstructionSet) throws {
        let g = c.geometry
        try #require(g.outHeight >= 1 && g.outWidth >= 1, "\(c): no output")
        #expect(ConvWinogradKernel.canRun(g))
        var rng = SeededRandom(seed: UInt64(c.channels * 7919 + c.height * 31 + c.width + c.outChannels * 3))
        let weights = rng.floats(c.outChannels * c.channels * 9)
        let bias = c.bias ? rng.floats(c.outChannels) : nil
        let inCount = g.batch * g.inChannels * g.inHeight * g.inWidth
        let outCount = g.batch * g.outChannels * g.outHeight * g.outWidth
        let scratch = ConvWinogradKernel.scratchFloats(g, tileBlock: c.tileBlock)
        // Arena: input, the Winograd output, the reference output, scratch; output and scratch start poisoned.
        let arena = UnsafeMutablePointer<Float>.allocate(capacity: inCount + 2 * outCount + scratch)
        defer { arena.deallocate() }
        arena.initialize(repeating: .nan, count: inCount + 2 * outCount + scratch)
        for (i, v) in rng.floats(inCount).enumerated() { arena[i] = v }
        let winograd = ConvWinogradKernel(
            g, weights: weights, bias: bias, activation: c.activation, input: 0, output: inCount,
            scratch: inCount + 2 * outCount, blas: try OpenBLAS.shared(), kernels: isa.kernels, tileBlock: c.tileBlock)
        #expect(winograd.ownGemm == (isa == .avx512))
        let reference = ConvReferenceKernel(
            g, weights: weights, bias: bias, activation: c.activation, input: 0, output: inCount + outCount)
        winograd.run(arena)
        reference.run(arena)
        var worst: Float = 0
        for i in 0..<outCount {
            let f = arena[inCount + i], r = arena[inCount + outCount + i]
            #expect(r.isFinite)
            worst = max(worst, f.isFinite ? abs(f - r) / max(1, abs(r)) : .infinity)
        }
        #expect(worst <= 1e-4, "\(c) \(isa): relative error \(worst)")
    }

    @Test func tileStartsCoverEveryOutputOnce() {
        for size in 1...13 {
            for dilation in 1...4 {
                let starts = ConvWinogradKernel.tileStarts(size: size, dilation: dilation)
                var covered = [Int](repeating: 0, count: size)
                for s in starts {
                    covered[s] += 1
                    if s + dilation < size { covered[s + dilation] += 1 }
                }
                #expect(covered == [Int](repeating: 1, count: size), "size \(size), dilation \(dilation)")
            }
        }
    }

    @Test func selection() throws {
        var wide = ConvGeometry()
        wide.inChannels = 64; wide.outChannels = 128; wide.kernelHeight = 3; wide.kernelWidth = 3
        wide.outHeight = 32; wide.outWidth = 32
        var narrow = wide
        narrow.inChannels = 48
        var strided = wide
        strided.strideHeight = 2; strided.strideWidth = 2
        var grouped = wide
        grouped.group = 2
        var fiveByThree = wide
        fiveByThree.kernelHeight = 5
        var dilated = wide
        dilated.dilationHeight = 2; dilated.dilationWidth = 2
        #expect(ConvWinogradKernel.isPreferred(wide, override: nil))
        #expect(ConvWinogradKernel.isPreferred(dilated, override: nil))
        #expect(!ConvWinogradKernel.isPreferred(narrow, override: nil))
        #expect(ConvWinogradKernel.isPreferred(narrow, override: true))
        #expect(!ConvWinogradKernel.isPreferred(wide, override: false))
        for g in [strided, grouped, fiveByThree] {
            #expect(!ConvWinogradKernel.canRun(g))
            #expect(!ConvWinogradKernel.isPreferred(g, override: true))
        }
    }

    /// Through the engine: a wide 3×3 conv runs this way in fast mode (with its ReLU fused) and matches the
    /// reference mode, which never does.
    @Test func engineChoosesItForWideConvs() throws {
        var rng = SeededRandom(seed: 77)
        let (cin, cout, h, w) = (64, 72, 9, 11)
        let nodes = [
            TestModel.Node(
                op: "Conv", inputs: ["x", "w", "b"], outputs: ["y"],
                ints: ["pads": [1, 1, 1, 1], "kernel_shape": [3, 3]]),
            TestModel.Node(op: "Relu", inputs: ["y"], outputs: ["out"])
        ]
        let inits: [(String, [Int], [Float])] = [
            ("w", [cout, cin, 3, 3], rng.floats(cout * cin * 9)), ("b", [cout], rng.floats(cout))
        ]
        let shape = [1, cin, h, w]
        let model = try ONNXModel.decode(
            TestModel.encode(nodes: nodes, initializers: inits, inputDims: shape, outputName: "out"),
            file: "winograd.onnx")
        let fast = try InferenceEngine(model: model, mode: .fast)
        let reference = try InferenceEngine(model: model, mode: .reference)
        // Unless the environment turns the method off (COLORCAM_CONV_WINOGRAD=0), when it must not be chosen.
        #expect((fast.kernelTypeNames == ["ConvWinogradKernel"]) == (ConvWinogradKernel.winogradOverride != false))
        #expect(reference.kernelTypeNames.first == "ConvReferenceKernel")
        let input = Tensor(shape: shape, data: rng.floats(shape.reduce(1, *)))
        let got = fast.run(input), want = reference.run(input)
        #expect(got.shape == want.shape)
        let worst = worstRelativeError(got.data, want.data)
        #expect(worst <= 1e-4, "relative error \(worst)")
    }
}
