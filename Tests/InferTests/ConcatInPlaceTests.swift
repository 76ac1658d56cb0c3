import Testing

@testable import Infer

/// Concat elimination (`Engine+ConcatInPlace.swift`): producers write into their slice of the Concat output when
/// the slices are contiguous; results match the reference engine (which never eliminates) and repeat run to run.
@Suite struct ConcatInPlaceTests {
    enum Variant: Sendable { case plain, batchTwo, laterReader, concatOfConcat }

    /// x → conv a (3→5), conv b (3→4) → c = Concat(a, b) → Relu, with variations:
    /// - `batchTwo`: batch 2, so the slices are not contiguous (kept);
    /// - `laterReader`: `a` is also read after the Concat output's last use (Relu(c) → 1×1 conv → Add a), so the
    ///   Concat buffer must outlive its own readers (eliminated);
    /// - `concatOfConcat`: out = Concat(c, a): `c` is an eliminated Concat's output, so the outer Concat is kept and
    ///   reads `a` from its slice.
    func check(_ variant: Variant, eliminated: Bool) throws {
        var rng = SeededRandom(seed: 23)
        var nodes = [
            TestModel.Node(op: "Conv", inputs: ["x", "wa", "ba"], outputs: ["a"], ints: ["pads": [1, 1, 1, 1]]),
            TestModel.Node(op: "Conv", inputs: ["x", "wb"], outputs: ["b"], ints: ["pads": [0, 0, 0, 0]]),
            TestModel.Node(op: "Concat", inputs: ["a", "b"], outputs: ["c"], int: ["axis": 1])
        ]
        switch variant {
        case .plain, .batchTwo: nodes.append(TestModel.Node(op: "Relu", inputs: ["c"], outputs: ["out"]))
        case .laterReader:
            nodes += [
                TestModel.Node(op: "Relu", inputs: ["c"], outputs: ["d"]),
                TestModel.Node(op: "Conv", inputs: ["d", "wf"], outputs: ["f"]),
                TestModel.Node(op: "Add", inputs: ["f", "a"], outputs: ["out"])
            ]
        case .concatOfConcat:
            nodes.append(TestModel.Node(op: "Concat", inputs: ["c", "a"], outputs: ["out"], int: ["axis": 1]))
        }
        let inits: [(String, [Int], [Float])] = [
            ("wa", [5, 3, 3, 3], rng.floats(135)), ("ba", [5], rng.floats(5)),
            ("wb", [4, 3, 1, 1], rng.floats(12)),
            ("wf", [5, 9, 1, 1], rng.floats(45))
        ]
        let shape = [variant == .batchTwo ? 2 : 1, 3, 7, 9]
        let model = try ONNXModel.decode(
            TestModel.encode(
                nodes: nodes, initializers: inits, inputDims: shape,
                outputName: "out"), file: "concat.onnx")
        let fast = try InferenceEngine(model: model, mode: .fast)
        let reference = try InferenceEngine(model: model, mode: .reference)
        let concats = fast.kernelTypeNames.filter { $0 == "ConcatKernel" }.count
        #expect(concats == (eliminated ? 0 : 1), "\(fast.kernelTypeNames)")
        let input = Tensor(shape: shape, data: rng.floats(shape.reduce(1, *)))
        let got = fast.run(input), want = reference.run(input)
        #expect(got.shape == want.shape)
        let worst = worstRelativeError(got.data, want.data)
        #expect(worst <= 1e-4, "\(variant): relative error \(worst)")
        #expect(fast.run(input) == got, "a second run gives the same result")
    }

    @Test func channelConcatAtBatchOneIsWrittenInPlace() throws { try check(.plain, eliminated: true) }

    @Test func slicesOutliveTheConcatOutputsLastReader() throws { try check(.laterReader, eliminated: true) }

    @Test func concatOfAnEliminatedConcatIsKept() throws { try check(.concatOfConcat, eliminated: false) }

    @Test func nonContiguousSlicesAreKept() throws { try check(.batchTwo, eliminated: false) }
}
