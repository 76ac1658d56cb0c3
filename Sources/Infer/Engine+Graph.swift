/// Graph checks done before planning: one run-time input, known ops and opsets, every input defined, no cycles.
extension InferenceEngine {
    /// The graph's nodes in a topological order.
    /// - Throws: `InferError` naming the node with a missing input, an unknown op, or a node on a cycle.
    static func topologicalOrder(_ model: ONNXModel, file: String, defined: Set<String>) throws -> [ONNXNode] {
        let nodes = model.graph.nodes
        let opset = model.defaultOpset
        func label(_ n: ONNXNode) -> String {
            "'\(n.name.isEmpty ? n.outputs.first ?? "?" : n.name)' (\(n.opType), opset \(opset))"
        }
        var producer: [String: Int] = [:]
        for (i, node) in nodes.enumerated() {
            guard node.domain.isEmpty || node.domain == "ai.onnx" else {
                throw InferError(
                    .badData, file: file, node: label(node), "operator domain '\(node.domain)' is not supported")
            }
            guard OpRegistry.isSupported(node.opType) else {
                throw InferError(.badData, file: file, node: label(node), "unsupported operator type \(node.opType)")
            }
            for output in node.outputs where !output.isEmpty {
                guard producer[output] == nil, !defined.contains(output) else {
                    throw InferError(.badData, file: file, node: label(node), "output '\(output)' is defined twice")
                }
                producer[output] = i
            }
        }
        var pending = [Int](repeating: 0, count: nodes.count)
        var consumers = [[Int]](repeating: [], count: nodes.count)
        for (i, node) in nodes.enumerated() {
            for input in node.inputs where !input.isEmpty && !defined.contains(input) {
                guard let p = producer[input] else {
                    throw InferError(
                        .badData, file: file, node: label(node),
                        "input '\(input)' is not a graph input, initializer or node output (missing initializer?)")
                }
                pending[i] += 1
                consumers[p].append(i)
            }
        }
        var ready = (0..<nodes.count).filter { pending[$0] == 0 }.reversed().map { $0 }
        var order: [ONNXNode] = []
        while let i = ready.popLast() {
            order.append(nodes[i])
            for c in consumers[i] {
                pending[c] -= 1
                if pending[c] == 0 { ready.append(c) }
            }
        }
        if order.count < nodes.count, let stuck = (0..<nodes.count).first(where: { pending[$0] > 0 }) {
            throw InferError(.badData, file: file, node: label(nodes[stuck]), "the graph has a cycle through this node")
        }
        return order
    }
}
