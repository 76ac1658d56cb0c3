/// A model cut at one of its tensors: the part of the graph that computes it, with it as the graph's one output.
extension ONNXModel {
    /// This model with `tensor` as its only output and only the nodes and initializers that `tensor` depends on
    /// (an orientation head read off a colorizer's bottleneck runs without the decoder). Graph inputs are kept, with
    /// their initialisers (defaults), so a caller's feeding names still resolve. Nil when no node
    /// computes `tensor`. Pure; the model's tensors are shared, not copied (value types).
    public func truncated(at tensor: String) -> ONNXModel? {
        var producer: [String: Int] = [:]
        for (i, node) in graph.nodes.enumerated() {
            for output in node.outputs where !output.isEmpty { producer[output] = i }
        }
        guard producer[tensor] != nil else { return nil }
        var needed = Set<Int>(), read = Set<String>(), pending = [tensor]
        while let name = pending.popLast() {
            guard !read.contains(name) else { continue }
            read.insert(name)
            guard let i = producer[name], needed.insert(i).inserted else { continue }
            pending.append(contentsOf: graph.nodes[i].inputs.filter { !$0.isEmpty })
        }
        var cut = self
        cut.graph.nodes = graph.nodes.indices.filter(needed.contains).map { graph.nodes[$0] }
        let inputs = Set(graph.inputs.map(\.name))
        cut.graph.initializers = graph.initializers.filter { read.contains($0.name) || inputs.contains($0.name) }
        cut.graph.outputs = [ONNXValueInfo(name: tensor, elementType: ONNXDataType.float.rawValue)]
        return cut
    }
}
