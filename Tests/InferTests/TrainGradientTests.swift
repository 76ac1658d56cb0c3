import Foundation
import Testing

@testable import Infer

/// Gradient conformance of the trainer (`TrainGraph`, `TrainOps`): against PyTorch's gradients on the same graphs,
/// inputs and targets (fixtures made by tools/personalize/grad_fixtures.py), and against finite differences.
@Suite struct TrainGradientTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/grad")

    struct Fixture: Decodable {
        var input: [Float]
        var input_shape: [Int]
        var target: [Float]
        var output_shape: [Int]
        var output: [Float]
        var loss: Float
        var gradients: [String: [Float]]
    }

    func load(_ name: String) throws -> (ONNXModel, String, Fixture) {
        let path = Self.fixtures.appendingPathComponent(name + ".onnx").path
        let model = try ONNXModel.decode(readWholeFile(path, what: "model file"), file: path)
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent(name + ".json"))
        return (model, path, try JSONDecoder().decode(Fixture.self, from: data))
    }

    /// Loss and gradients of every parameter the fixture lists, through the frozen cache and the trained part.
    func lossAndGradients(
        _ graph: TrainGraph, _ cache: FrozenCache, _ f: Fixture
    ) throws -> (Float, Tensor, [String: Tensor]) {
        let acts = try graph.forward(frontier: cache.frontierValues(0))
        let (loss, dy) = TrainLoss.smoothL1(
            prediction: acts.output, target: Tensor(shape: f.output_shape, data: f.target))
        var grads: [String: Tensor] = [:]
        try graph.backward(acts, outputGradient: dy, into: &grads)
        return (loss, acts.output, grads)
    }

    @Test func gradientsMatchPyTorch() throws {
        var worst: Float = 0
        defer { print("trainer vs PyTorch: worst max relative gradient error \(worst) (limit 1e-3)") }
        for name in ["conv_stack", "up_merge", "softmax_decode"] {
            let (model, path, f) = try load(name)
            let graph = try TrainGraph(
                model: model, file: path, selection: .initializers(f.gradients.keys.sorted()))
            #expect(Set(graph.trainable) == Set(f.gradients.keys), "\(name)")
            let cache = try FrozenCache(
                model: model, file: path, frontier: graph.frontier, inputShape: f.input_shape, halfPrecision: false)
            cache.add(input: f.input)
            let (loss, output, grads) = try lossAndGradients(graph, cache, f)
            let outErr = zip(output.data, f.output).map { abs($0 - $1) }.max() ?? .infinity
            #expect(outErr < 1e-3 * max(1, f.output.map(abs).max()!), "\(name): forward output")
            #expect(abs((loss) - (f.loss)) <= 1e-4 * max(1, f.loss), "\(name): loss")
            for (param, expected) in f.gradients {
                let got = try #require(grads[param], "\(name): no gradient for \(param)").data
                #expect(got.count == expected.count)
                let scale = max(expected.map(abs).max()!, 1e-6)
                let err = zip(got, expected).map { abs($0 - $1) }.max()! / scale
                #expect(err <= 1e-3, "\(name): \(param) max rel. error \(err)")
                worst = max(worst, err)
            }
        }
    }

    /// Central differences on three fixed (seeded) coordinates of every parameter (float32: step 1e-3, tolerance
    /// 2 % + 5e-4 absolute).
    @Test func gradientsMatchFiniteDifferences() throws {
        for name in ["conv_stack", "up_merge", "softmax_decode"] {
            let (model, path, f) = try load(name)
            var graph = try TrainGraph(model: model, file: path, selection: .initializers(f.gradients.keys.sorted()))
            let cache = try FrozenCache(
                model: model, file: path, frontier: graph.frontier, inputShape: f.input_shape, halfPrecision: false)
            cache.add(input: f.input)
            let (_, _, grads) = try lossAndGradients(graph, cache, f)
            var rng = SeededGenerator(seed: 11)
            var checked = 0
            for param in graph.trainable {
                let count = graph.parameters[param]!.count
                for _ in 0..<3 {
                    let i = Int.random(in: 0..<count, using: &rng)
                    let base = graph.parameters[param]!.data[i]
                    let h: Float = 1e-3
                    graph.parameters[param]!.data[i] = base + h
                    let up = try lossAndGradients(graph, cache, f).0
                    graph.parameters[param]!.data[i] = base - h
                    let down = try lossAndGradients(graph, cache, f).0
                    graph.parameters[param]!.data[i] = base
                    let numeric = (up - down) / (2 * h)
                    let analytic = grads[param]!.data[i]
                    #expect(
                        abs((analytic) - (numeric)) <= 0.02 * max(abs(numeric), abs(analytic)) + 5e-4,
                        "\(name): \(param)[\(i)]")
                    checked += 1
                }
            }
            #expect(checked > 0)
        }
    }
}
