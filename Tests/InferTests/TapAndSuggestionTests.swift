import Foundation
import Testing

@testable import Infer

/// Tapped tensors (`InferenceEngine(tapping:)`): an intermediate tensor read after `run` holds the values a graph
/// with it as its output computes, even where fusion would have folded it into the next step; and the picker's
/// suggestions (`ABSuggestions`) from a distribution.
@Suite struct TapAndSuggestionTests {
    /// x → Conv 1×1 (c → m) → Relu → Softmax over channels (`p`) → Conv 1×1 → out.
    func model(output: String) throws -> ONNXModel {
        var rng = SeededRandom(seed: 3)
        let c = 5, m = 7
        let nodes = [
            TestModel.Node(op: "Conv", inputs: ["x", "w", "b"], outputs: ["y"]),
            TestModel.Node(op: "Relu", inputs: ["y"], outputs: ["r"]),
            TestModel.Node(op: "Softmax", inputs: ["r"], outputs: ["p"], int: ["axis": 1]),
            TestModel.Node(op: "Conv", inputs: ["p", "d"], outputs: ["out"])
        ]
        return try ONNXModel.decode(
            TestModel.encode(
                nodes: output == "out"
                    ? nodes
                    : Array(nodes.prefix { $0.outputs[0] != output }) + [
                        nodes.first { $0.outputs[0] == output }!
                    ],
                initializers: [
                    ("w", [m, c, 1, 1], rng.floats(m * c)), ("b", [m], rng.floats(m)),
                    ("d", [2, m, 1, 1], rng.floats(2 * m))
                ], inputDims: [1, c, 6, 9], outputName: output), file: "tap.onnx")
    }

    @Test(arguments: ["y", "p"])
    func aTappedTensorHoldsWhatTheGraphComputesThere(name: String) throws {
        var rng = SeededRandom(seed: 8)
        let input = Tensor(shape: [1, 5, 6, 9], data: rng.floats(5 * 54))
        let full = try model(output: "out")
        let engine = try InferenceEngine(model: full, mode: .fast, tapping: [name])
        let out = engine.run(input)
        let tapped = try #require(engine.tapped(name))
        // The same graph cut at `name`, run by the reference engine.
        let want = try InferenceEngine(model: try model(output: name), mode: .reference).run(input)
        #expect(tapped.shape == want.shape)
        var worst: Float = 0
        for (g, w) in zip(tapped.values, want.data) { worst = max(worst, abs(g - w) / max(1, abs(w))) }
        #expect(worst <= 1e-5, "\(name): \(worst)")
        // Tapping changes nothing else.
        let plain = try InferenceEngine(model: full, mode: .fast).run(input)
        #expect(out.data == plain.data)
        #expect(engine.tapped("nope") == nil)
    }

    @Test func tappingWhatNoStepComputesIsRefused() throws {
        let full = try model(output: "out")
        for name in ["w", "x", "out", "missing"] {
            #expect(throws: InferError.self, "\(name)") { try InferenceEngine(model: full, tapping: [name]) }
        }
    }

    @Test func keepsTheMostLikelyBinsPerCellAndMergesNeighboursIntoOneColour() {
        // 3 cells, 12 bins on a line of a (b = 0) 10 apart; cell 0 peaks at bins 2-3 (a 20, 30) and 9 (a 90).
        let bins = 12, cells = 3
        var p = [Float](repeating: 0, count: bins * cells)
        func set(_ bin: Int, _ cell: Int, _ v: Float) { p[bin * cells + cell] = v }
        set(2, 0, 0.3); set(3, 0, 0.25); set(9, 0, 0.35); set(5, 1, 0.9); set(0, 2, 0.5)
        var kept = [UInt16](repeating: 0, count: cells * ABSuggestions.keptPerCell)
        var probabilities = [Float](repeating: 0, count: cells * ABSuggestions.keptPerCell)
        p.withUnsafeBufferPointer { d in
            ABSuggestions.keep(d, bins: bins, cells: cells, binIndices: &kept, probabilities: &probabilities)
        }
        #expect(Array(kept[0..<3]) == [9, 2, 3] && Array(probabilities[0..<3]) == [0.35, 0.3, 0.25])
        #expect(kept[8] == 5 && probabilities[8] == 0.9 && kept[16] == 0)
        let distribution = ModelBundle.Distribution(
            tensor: "p", shape: [1, bins, 1, cells], binA: (0..<bins).map { Float($0 * 10) },
            binB: [Float](repeating: 0, count: bins))
        let modes = ABSuggestions.modes(
            binIndices: kept, probabilities: probabilities, cell: 0, distribution: distribution, count: 2)
        // Bins 2 and 3 (10 apart) are one colour of 0.55, more likely than bin 9's 0.35.
        #expect(modes.count == 2 && abs(modes[0].probability - 0.55) < 1e-6 && abs(modes[1].probability - 0.35) < 1e-6)
        #expect(abs(modes[0].a - (20 * 0.3 + 30 * 0.25) / 0.55) < 1e-4 && modes[1].a == 90)
        // Bins kept under another model (more bins than this one has) are skipped.
        let smaller = ModelBundle.Distribution(
            tensor: "p", shape: [1, 4, 1, cells], binA: [0, 10, 20, 30], binB: [0, 0, 0, 0])
        let left = ABSuggestions.modes(
            binIndices: kept, probabilities: probabilities, cell: 0, distribution: smaller, count: 3)
        #expect(left.count == 1 && left[0].a > 20 && left[0].a < 30)
    }

    @Test func aManifestDeclaresItsDistribution() throws {
        func parse(_ distribution: String) throws -> ModelBundle {
            try ModelBundle.parseManifest(
                Data(
                    """
                    {"file": "model.onnx", "input": {"shape": [1, 1, 64, 64]}, "output": {"shape": [1, 2, 64, 64]},
                     "distribution": \(distribution)}
                    """.utf8), directory: "/m", manifestPath: "/m/manifest.json")
        }
        let bundle = try parse(#"{"tensor": "p", "shape": [1, 2, 4, 4], "bins_ab": [[-10, 20], [30, 0]]}"#)
        #expect(
            bundle.distribution
                == ModelBundle.Distribution(tensor: "p", shape: [1, 2, 4, 4], binA: [-10, 30], binB: [20, 0]))
        for bad in [
            "{}", #"{"tensor": "p", "shape": [1, 2, 4], "bins_ab": [[0, 0], [1, 1]]}"#,
            #"{"tensor": "p", "shape": [1, 3, 4, 4], "bins_ab": [[0, 0], [1, 1]]}"#,
            #"{"tensor": "p", "shape": [1, 2, 4, 4], "bins_ab": [[0, 0], [1]]}"#,
            #"{"shape": [1, 2, 4, 4], "bins_ab": [[0, 0], [1, 1]]}"#
        ] {
            #expect(throws: ModelBundleError.self, "\(bad)") { try parse(bad) }
        }
    }
}
