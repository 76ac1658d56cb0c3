/// The frozen part's output per training sample, computed once by the inference engine and kept (as float16 unless
/// `halfPrecision` is false) for every later step: training then runs only the trained part (`TrainGraph`).
///
/// The engine is prepared with the graph's frontier tensors tapped and every further graph input fed (zeros unless
/// `add` is given values: a colorizer's hint inputs). A frontier tensor that is a graph input is stored from the
/// sample itself. Not thread-safe: one thread adds and reads.
public final class FrozenCache {
    public let frontier: [String]
    public let inputName: String
    public let inputShape: [Int]
    private let engine: InferenceEngine
    private let fedNames: [String]
    private var shapes: [String: [Int]] = [:]
    private var samples: [[String: [Float16]]] = []
    private var singleSamples: [[String: [Float]]] = []
    /// Whether values are stored as float16 (half the memory; ~3 significant digits) or float32.
    public let halfPrecision: Bool
    private var output: [Float]

    public var count: Int { halfPrecision ? samples.count : singleSamples.count }
    /// Bytes the cached values take.
    public private(set) var bytes = 0

    /// - Parameters:
    ///   - model: the inference graph (the same the `TrainGraph` was built from).
    ///   - inputShape: the primary input's shape (e.g. [1, 1, 256, 256]).
    /// - Throws: `InferError` when the engine cannot prepare the graph or tap a frontier tensor.
    public init(
        model: ONNXModel, file: String, frontier: [String], inputShape: [Int], halfPrecision: Bool = true
    ) throws {
        self.halfPrecision = halfPrecision
        let graph = model.graph
        let initialised = Set(graph.initializers.map(\.name))
        let inputs = graph.inputs.map(\.name).filter { !initialised.contains($0) }
        guard let first = inputs.first ?? graph.inputs.first?.name else {
            throw InferError(.badData, file: file, "the graph has no input")
        }
        inputName = first
        let optional = graph.inputs.map(\.name).filter { initialised.contains($0) }
        fedNames = Array(inputs.dropFirst()) + optional
        self.frontier = frontier
        self.inputShape = inputShape
        let graphInputs = Set(graph.inputs.map(\.name))
        engine = try InferenceEngine(
            model: model, file: file, inputShape: inputShape, mode: .fast, feeding: fedNames,
            tapping: frontier.filter { !graphInputs.contains($0) })
        output = [Float](repeating: 0, count: engine.outputShape.reduce(1, *))
    }

    /// Runs the frozen part on one sample and keeps its frontier values. `fed`: values for further graph inputs
    /// (by name; others stay as last written, zeros at first).
    public func add(input: [Float], fed: [String: [Float]] = [:]) {
        precondition(input.count == inputShape.reduce(1, *), "input has \(input.count) values for \(inputShape)")
        for (name, values) in fed {
            guard let buffer = engine.fedInput(name) else { continue }
            precondition(buffer.count == values.count, "fed input \(name) has \(values.count) values")
            for i in 0..<values.count { buffer[i] = values[i] }
        }
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in engine.run(input: i, output: o) }
        }
        var sample: [String: [Float]] = [:]
        for name in frontier {
            if name == inputName {
                shapes[name] = inputShape
                sample[name] = input
            } else if let buffer = engine.fedInput(name) {
                shapes[name] = engine.fedShape(name)
                sample[name] = Array(buffer)
            } else if let (shape, values) = engine.tapped(name) {
                shapes[name] = shape
                sample[name] = Array(values)
            }
            bytes += (sample[name]?.count ?? 0) * (halfPrecision ? 2 : 4)
        }
        if halfPrecision {
            samples.append(sample.mapValues { $0.map { Float16($0) } })
        } else {
            singleSamples.append(sample)
        }
    }

    /// Sample `index`'s frontier values, as the trained part's `forward` takes them.
    public func frontierValues(_ index: Int) -> [String: Tensor] {
        if !halfPrecision {
            var values: [String: Tensor] = [:]
            for (name, data) in singleSamples[index] { values[name] = Tensor(shape: shapes[name]!, data: data) }
            return values
        }
        var values: [String: Tensor] = [:]
        for (name, data) in samples[index] {
            values[name] = Tensor(shape: shapes[name]!, data: data.map { Float($0) })
        }
        return values
    }
}
