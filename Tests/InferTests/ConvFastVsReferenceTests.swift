import Testing

@testable import Infer

/// The fast kernels (im2col strips + sgemm, fused epilogues, folded BatchNorm) against the naive reference loops on
/// odd shapes. Tolerance: max |fast − reference| ≤ 1e-4·max(1, |reference|).
@Suite struct ConvFastVsReferenceTests {
    struct Case: CustomStringConvertible, Sendable {
        var channels: Int, height: Int, width: Int, outChannels: Int, kernel: Int, stride: Int, dilation: Int
        var group: Int, pads: [Int64]
        var description: String {
            "c\(channels) \(height)x\(width) k\(kernel) s\(stride) d\(dilation) g\(group) p\(pads)"
        }
    }

    static let cases: [Case] = {
        var all: [Case] = []
        for (c, h, w) in [(1, 1, 1), (3, 3, 7), (13, 17, 31)] {
            all.append(
                Case(
                    channels: c, height: h, width: w, outChannels: 5, kernel: 3, stride: 1, dilation: 1, group: 1,
                    pads: [1, 1, 1, 1]))
            all.append(
                Case(
                    channels: c, height: h, width: w, outChannels: 4, kernel: 1, stride: 1, dilation: 1, group: 1,
                    pads: [0, 0, 0, 0]))
            all.append(
                Case(
                    channels: c, height: h, width: w, outChannels: 6, kernel: 3, stride: 2, dilation: 1, group: 1,
                    pads: [0, 1, 2, 1]))
            all.append(
                Case(
                    channels: c, height: h, width: w, outChannels: 3, kernel: 3, stride: 1, dilation: 2, group: 1,
                    pads: [2, 2, 2, 2]))
            all.append(
                Case(
                    channels: c, height: h, width: w, outChannels: c, kernel: 3, stride: 1, dilation: 1, group: c,
                    pads: [1, 1, 1, 1]))
        }
        return all
    }()

    func assertClose(_ fast: Tensor, _ reference: Tensor, _ label: String) {
        #expect(fast.shape == reference.shape, "\(label): shapes differ")
        let worst = worstRelativeError(fast.data, reference.data)
        #expect(worst <= 1e-4, "\(label): relative error \(worst)")
    }

    /// Every case on every instruction set this CPU runs.
    @Test(arguments: cases, InstructionSet.supportedHere)
    func convBatchNormReluMatchesReference(_ c: Case, _ isa: InstructionSet) throws {
        var rng = SeededRandom(seed: UInt64(c.channels * 1000 + c.height * 10 + c.kernel + c.group))
        let wCount = c.outChannels * (c.channels / c.group) * c.kernel * c.kernel
        let oc = c.outChannels
        let nodes = [
            TestModel.Node(
                op: "Conv", inputs: ["x", "w", "b"], outputs: ["y"],
                ints: [
                    "pads": c.pads, "strides": [Int64(c.stride), Int64(c.stride)],
                    "dilations": [Int64(c.dilation), Int64(c.dilation)]
                ],
                int: ["group": Int64(c.group)]),
            TestModel.Node(op: "BatchNormalization", inputs: ["y", "s", "bb", "m", "v"], outputs: ["z"]),
            TestModel.Node(op: "Relu", inputs: ["z"], outputs: ["out"])
        ]
        let inits: [(String, [Int], [Float])] = [
            ("w", [oc, c.channels / c.group, c.kernel, c.kernel], rng.floats(wCount)), ("b", [oc], rng.floats(oc)),
            ("s", [oc], rng.floats(oc)), ("bb", [oc], rng.floats(oc)), ("m", [oc], rng.floats(oc)),
            ("v", [oc], rng.floats(oc).map { abs($0) + 0.5 })
        ]
        let shape = [1, c.channels, c.height, c.width]
        let bytes = TestModel.encode(nodes: nodes, initializers: inits, inputDims: shape, outputName: "out")
        let model = try ONNXModel.decode(bytes, file: "test.onnx")
        let fast = try InferenceEngine(model: model, mode: .fast, instructionSet: isa)
        let reference = try InferenceEngine(model: model, mode: .reference)
        #expect(fast.stepCount == 1, "BatchNorm and Relu should fuse into the conv")
        #expect(reference.stepCount == 3)
        let input = Tensor(shape: shape, data: rng.floats(shape.reduce(1, *)))
        assertClose(fast.run(input), reference.run(input), "\(c) \(isa)")
    }

    @Test(arguments: [(1, 1, 1), (3, 3, 7), (13, 17, 31)], InstructionSet.supportedHere)
    func convTransposeMatchesReference(_ dims: (Int, Int, Int), _ isa: InstructionSet) throws {
        let (c, h, w) = dims
        var rng = SeededRandom(seed: UInt64(c * 31 + h))
        let nodes = [
            TestModel.Node(
                op: "ConvTranspose", inputs: ["x", "w", "b"], outputs: ["out"],
                ints: ["strides": [2, 2], "pads": [1, 0, 1, 2], "output_padding": [1, 0]])
        ]
        let inits: [(String, [Int], [Float])] = [("w", [c, 5, 4, 3], rng.floats(c * 60)), ("b", [5], rng.floats(5))]
        let bytes = TestModel.encode(nodes: nodes, initializers: inits, inputDims: [1, c, h, w], outputName: "out")
        let model = try ONNXModel.decode(bytes, file: "t.onnx")
        let fast = try InferenceEngine(model: model, mode: .fast, instructionSet: isa)
        let reference = try InferenceEngine(model: model, mode: .reference)
        #expect(fast.outputShape == [1, 5, (h - 1) * 2 + 4 - 2 + 1, (w - 1) * 2 + 3 - 2])
        let input = Tensor(shape: [1, c, h, w], data: rng.floats(c * h * w))
        assertClose(fast.run(input), reference.run(input), "convT \(dims) \(isa)")
    }

    @Test func gemmMatchesReference() throws {
        var rng = SeededRandom(seed: 7)
        let nodes = [
            TestModel.Node(op: "Flatten", inputs: ["x"], outputs: ["f"]),
            TestModel.Node(
                op: "Gemm", inputs: ["f", "w", "b"], outputs: ["out"], int: ["transB": 1],
                floats: ["alpha": 0.5])
        ]
        let inits: [(String, [Int], [Float])] = [("w", [7, 39], rng.floats(273)), ("b", [7], rng.floats(7))]
        let model = try ONNXModel.decode(
            TestModel.encode(
                nodes: nodes, initializers: inits, inputDims: [2, 13, 3, 1],
                outputName: "out"), file: "t.onnx")
        let input = Tensor(shape: [2, 13, 3, 1], data: rng.floats(78))
        assertClose(
            try InferenceEngine(model: model, mode: .fast).run(input),
            try InferenceEngine(model: model, mode: .reference).run(input), "gemm")
    }

    @Test func steadyStateRunsAreRepeatable() throws {
        var rng = SeededRandom(seed: 9)
        let nodes = [
            TestModel.Node(op: "Conv", inputs: ["x", "w"], outputs: ["y"], ints: ["pads": [1, 1, 1, 1]]),
            TestModel.Node(op: "Softmax", inputs: ["y"], outputs: ["out"], int: ["axis": 1])
        ]
        let model = try ONNXModel.decode(
            TestModel.encode(
                nodes: nodes, initializers: [("w", [4, 3, 3, 3], rng.floats(108))],
                inputDims: [1, 3, 9, 5], outputName: "out"), file: "t.onnx")
        let engine = try InferenceEngine(model: model)
        let input = Tensor(shape: [1, 3, 9, 5], data: rng.floats(135))
        let first = engine.run(input)
        #expect(engine.run(input) == first)
        // Softmax over channels sums to 1 at every pixel.
        for p in 0..<45 {
            let sum = (0..<4).reduce(Float(0)) { $0 + first.data[$1 * 45 + p] }
            #expect(abs(sum - 1) < 1e-5)
        }
    }
}
