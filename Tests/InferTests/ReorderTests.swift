import Testing

@testable import Infer

/// Load-time reordering of nearest Resize → 1×1 Conv into Conv → Resize (`Engine+Reorder.swift`): it happens only
/// where the two commute, and the result matches the reference engine (which never reorders).
@Suite struct ReorderTests {
    func model(kernel: Int, scales: [Float], sizes: Bool = false, pads: [Int64] = [0, 0, 0, 0]) throws -> ONNXModel {
        var rng = SeededRandom(seed: 11)
        let c = 13, m = 6
        var inits: [(String, [Int], [Float])] = [
            ("roi", [0], []), ("scales", [4], scales),
            ("w", [m, c, kernel, kernel], rng.floats(m * c * kernel * kernel)),
            ("b", [m], rng.floats(m))
        ]
        var resizeInputs = ["x", "roi", "scales"]
        if sizes {
            inits[1] = ("scales", [0], [])
            inits.append(("sizes", [4], [1, 13, 10, 21]))
            resizeInputs.append("sizes")
        }
        let nodes = [
            TestModel.Node(op: "Resize", inputs: resizeInputs, outputs: ["r"]),
            TestModel.Node(op: "Conv", inputs: ["r", "w", "b"], outputs: ["y"], ints: ["pads": pads]),
            TestModel.Node(op: "Relu", inputs: ["y"], outputs: ["out"])
        ]
        return try ONNXModel.decode(
            TestModel.encode(
                nodes: nodes, initializers: inits, inputDims: [1, c, 5, 7],
                outputName: "out"), file: "reorder.onnx")
    }

    func check(_ model: ONNXModel, reordered: Bool) throws {
        let fast = try InferenceEngine(model: model, mode: .fast)
        let reference = try InferenceEngine(model: model, mode: .reference)
        let names = fast.kernelTypeNames
        #expect(names.count == 2)
        #expect((names.first?.hasPrefix("Conv") ?? false) == reordered, "\(names)")
        var rng = SeededRandom(seed: 5)
        let input = Tensor(shape: [1, 13, 5, 7], data: rng.floats(13 * 35))
        let got = fast.run(input), want = reference.run(input)
        #expect(got.shape == want.shape)
        let worst = worstRelativeError(got.data, want.data)
        #expect(worst <= 1e-4)
    }

    @Test func pointwiseConvMovesBeforeNearestResize() throws {
        try check(try model(kernel: 1, scales: [1, 1, 2, 3]), reordered: true)
    }

    @Test func otherConvsStayAfterTheResize() throws {
        try check(try model(kernel: 3, scales: [1, 1, 2, 2], pads: [1, 1, 1, 1]), reordered: false)
        try check(try model(kernel: 1, scales: [1, 1, 2, 2], pads: [1, 0, 0, 1]), reordered: false)
        try check(try model(kernel: 1, scales: [], sizes: true), reordered: false)
    }
}
