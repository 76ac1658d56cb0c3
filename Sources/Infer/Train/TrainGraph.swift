/// A training view of an inference graph: which initializers learn, the part of the graph they influence (the
/// *trained part*, run forward and backward here), and the run-time tensors that feed it from the frozen rest (the
/// *frontier*, computed once per sample by the inference engine and cached: `FrozenCache`).
///
/// Built from the ONNX graph as loaded (`ONNXModel`): a node is in the trained part when any input depends on a
/// trainable initializer and its output reaches the graph's output. Every other input of a trained node is a
/// constant (initializer, `Constant` node) or a frontier tensor. Ops the trained part may contain are those of
/// `TrainOps` (others: `InferError.badData` naming the node).
///
/// Value type; `parameters` changes as training steps; everything else is fixed at build. Not thread-safe to
/// mutate; `forward`/`backward` read it only (one sample per call, any thread).
public struct TrainGraph: Sendable {
    /// Which initializers train.
    public enum Selection: Sendable, Equatable {
        /// On each path back from the output, the first Conv/ConvTranspose (the last layer of each head).
        case head
        /// Every Conv/ConvTranspose from the graph's first upsampling step (Resize, Upsample, ConvTranspose) on: a
        /// U-Net's decoder.
        case decoder
        /// The last N Conv/ConvTranspose nodes in graph order.
        case lastLayers(Int)
        /// These initializers by name.
        case initializers([String])
    }

    public let file: String
    public let outputName: String
    /// Trained initializers, in graph order.
    public let trainable: [String]
    /// The nodes owning the trained initializers (for manifests), in graph order.
    public let trainedNodes: [String]
    /// Tensors from the frozen part (or graph inputs) the trained part reads, in first-use order.
    public let frontier: [String]
    /// The trained part, in graph order.
    let steps: [ONNXNode]
    let opset: Int64
    /// Constant inputs of the trained part (frozen initializers, `Constant` outputs).
    let constants: [String: Tensor]
    /// Current values of the trainable initializers.
    public var parameters: [String: Tensor]

    /// - Parameters:
    ///   - model: the decoded inference graph (nodes in topological order, as ONNX requires).
    ///   - selection: which initializers train.
    ///   - fixed: Conv nodes never trained whatever the selection (by output tensor name), e.g. a colorizer's
    ///     fixed decode of its ab distribution, which holds the bins' ab rather than learned weights.
    /// - Throws: `InferError(.badData)` when nothing would train, an op is not trainable, or the graph is not in
    ///   topological order.
    public init(model: ONNXModel, file: String, selection: Selection, fixed: Set<String> = []) throws {
        let graph = model.graph
        self.file = file
        let opset = model.defaultOpset
        self.opset = opset
        guard let output = graph.outputs.first?.name else {
            throw InferError(.badData, file: file, "the graph has no output")
        }
        outputName = output
        var inits: [String: ONNXTensor] = [:]
        for t in graph.initializers { inits[t.name] = t }
        let chosen = try Self.select(
            selection, graph: graph, initializers: inits, fixed: fixed, file: file)
        // Constants: `Constant` nodes, and nodes computed from constants only (an exporter's scales for Resize).
        var constantValues: [String: Tensor] = [:]
        for t in graph.initializers where !chosen.contains(t.name) {
            constantValues[t.name] = Tensor(shape: t.dims, data: t.floats.isEmpty ? t.ints.map(Float.init) : t.floats)
        }
        for node in graph.nodes {
            if node.opType == "Constant" {
                if let value = Self.constantValue(node), let name = node.outputs.first { constantValues[name] = value }
            } else if TrainOps.supports(node.opType), node.outputs.count == 1,
                node.inputs.allSatisfy({ $0.isEmpty || constantValues[$0] != nil })
            {
                let inputs = node.inputs.map { $0.isEmpty ? nil : constantValues[$0] }
                constantValues[node.outputs[0]] = try TrainOps.forward(node, inputs, opset: opset, file: file)
            }
        }
        guard !chosen.isEmpty else {
            throw InferError(.badData, file: file, "the selection \(selection) trains no initializer")
        }
        // Nodes depending on a trained initializer, then those of them reaching the output.
        var depends = Set(chosen)
        var candidates: [ONNXNode] = []
        for node in graph.nodes where node.inputs.contains(where: { depends.contains($0) }) {
            candidates.append(node)
            depends.formUnion(node.outputs)
        }
        guard depends.contains(output) else {
            throw InferError(.badData, file: file, "the graph's output '\(output)' does not depend on \(chosen)")
        }
        var needed: Set<String> = [output]
        var kept: [ONNXNode] = []
        for node in candidates.reversed() where node.outputs.contains(where: needed.contains) {
            kept.append(node)
            needed.formUnion(node.inputs)
        }
        steps = kept.reversed()
        trainable = graph.initializers.map(\.name).filter { chosen.contains($0) }
        trainedNodes = steps.filter { $0.inputs.contains(where: chosen.contains) }.map {
            $0.name.isEmpty ? ($0.outputs.first ?? "?") : $0.name
        }
        var constants: [String: Tensor] = [:]
        var frontier: [String] = []
        let produced = Set(steps.flatMap(\.outputs))
        for node in steps {
            guard TrainOps.supports(node.opType) else {
                throw InferError(
                    .badData, file: file, node: node.name,
                    "\(node.opType) has no backward pass in colorcam's trainer; train fewer layers")
            }
            for name in node.inputs where !name.isEmpty && !produced.contains(name) && !chosen.contains(name) {
                if let c = constantValues[name] {
                    constants[name] = c
                } else if !frontier.contains(name) {
                    frontier.append(name)
                }
            }
        }
        self.constants = constants
        self.frontier = frontier
        var parameters: [String: Tensor] = [:]
        for name in chosen {
            let t = inits[name]!
            parameters[name] = Tensor(shape: t.dims, data: t.floats)
        }
        self.parameters = parameters
    }

    /// The values of a `Constant` node, or nil when it holds none colorcam reads.
    static func constantValue(_ node: ONNXNode) -> Tensor? {
        switch node.attributes["value"] ?? node.attributes["value_float"] ?? node.attributes["value_floats"]
            ?? node.attributes["value_int"] ?? node.attributes["value_ints"]
        {
        case .tensor(let t)?:
            return Tensor(shape: t.dims, data: t.floats.isEmpty ? t.ints.map(Float.init) : t.floats)
        case .float(let v)?: return Tensor(shape: [], data: [v])
        case .floats(let v)?: return Tensor(shape: [v.count], data: v)
        case .int(let v)?: return Tensor(shape: [], data: [Float(v)])
        case .ints(let v)?: return Tensor(shape: [v.count], data: v.map(Float.init))
        default: return nil
        }
    }

    /// The trainable initializers (weight and bias) a selection names.
    static func select(
        _ selection: Selection, graph: ONNXGraph, initializers: [String: ONNXTensor], fixed: Set<String>,
        file: String
    ) throws -> Set<String> {
        let isFloat = { (name: String) in
            initializers[name].map { $0.dataType == ONNXDataType.float.rawValue } ?? false
        }
        let layers = graph.nodes.filter {
            ($0.opType == "Conv" || $0.opType == "ConvTranspose") && $0.inputs.count >= 2 && isFloat($0.inputs[1])
                && !$0.outputs.contains(where: fixed.contains)
        }
        func params(_ nodes: [ONNXNode]) -> Set<String> {
            Set(nodes.flatMap { $0.inputs.dropFirst().filter(isFloat) })
        }
        switch selection {
        case .initializers(let names):
            for name in names where !isFloat(name) {
                throw InferError(.badData, file: file, "'\(name)' is not a float initializer of the graph")
            }
            return Set(names)
        case .lastLayers(let n):
            guard n >= 1 else { throw InferError(.badData, file: file, "the number of layers must be at least 1") }
            return params(Array(layers.suffix(n)))
        case .head:
            var producer: [String: ONNXNode] = [:]
            for node in graph.nodes { for o in node.outputs { producer[o] = node } }
            let layerOutputs = Set(layers.flatMap(\.outputs))
            var found: [ONNXNode] = []
            var seen: Set<String> = []
            var stack = graph.outputs.map(\.name)
            while let name = stack.popLast() {
                guard seen.insert(name).inserted, let node = producer[name] else { continue }
                if node.outputs.contains(where: layerOutputs.contains) {
                    found.append(node)
                } else {
                    stack.append(contentsOf: node.inputs.filter { !$0.isEmpty })
                }
            }
            return params(found)
        case .decoder:
            let upsampling: Set<String> = ["Resize", "Upsample", "ConvTranspose"]
            guard let first = graph.nodes.firstIndex(where: { upsampling.contains($0.opType) }) else {
                throw InferError(.badData, file: file, "the graph has no upsampling step, so no decoder")
            }
            let after = Set(graph.nodes[first...].flatMap(\.outputs))
            return params(layers.filter { after.contains($0.outputs[0]) })
        }
    }
}
