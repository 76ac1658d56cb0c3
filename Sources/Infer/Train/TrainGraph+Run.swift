/// Forward and backward passes of the trained part, one sample at a time.
extension TrainGraph {
    /// The trained part's tensors for one sample: the frontier's values, then every step's output.
    public struct Activations: Sendable {
        var values: [String: Tensor]
        /// The graph's output for this sample.
        public let output: Tensor

        /// A tensor of the trained part (or the frontier) for this sample.
        public func tensor(_ name: String) -> Tensor? { values[name] }
    }

    /// Runs the trained part forward from the frontier's values (`frontier[name]`, as the inference engine
    /// computes them) with the current `parameters`.
    /// - Throws: `InferError(.badData)` when a frontier tensor is missing or an op's shapes do not fit.
    public func forward(frontier values: [String: Tensor]) throws -> Activations {
        var values = values
        for name in frontier where values[name] == nil {
            throw InferError(.badData, file: file, "no value for the frontier tensor '\(name)'")
        }
        for node in steps {
            let inputs = node.inputs.map { name in name.isEmpty ? nil : value(name, values) }
            values[node.outputs[0]] = try TrainOps.forward(node, inputs, opset: opset, file: file)
        }
        guard let output = values[outputName] else {
            throw InferError(.badData, file: file, "the trained part does not compute '\(outputName)'")
        }
        return Activations(values: values, output: output)
    }

    /// Adds the gradient of the loss with respect to each trainable parameter to `gradients` (zero-initialised
    /// on first use), given the loss's gradient with respect to the graph's output.
    public func backward(
        _ activations: Activations, outputGradient: Tensor, into gradients: inout [String: Tensor]
    ) throws {
        try backward(activations, seeds: [outputName: outputGradient], into: &gradients)
    }

    /// As `backward(_:outputGradient:into:)`, for a loss on several tensors of the trained part: `seeds` gives the
    /// loss's gradient with respect to each (the output, an intermediate such as a classification head's logits).
    public func backward(
        _ activations: Activations, seeds: [String: Tensor], into gradients: inout [String: Tensor]
    ) throws {
        var grads = seeds
        let chosen = Set(trainable)
        let produced = Set(steps.flatMap(\.outputs))
        for node in steps.reversed() {
            guard let dy = grads.removeValue(forKey: node.outputs[0]) else { continue }
            let inputs = node.inputs.map { name in name.isEmpty ? nil : value(name, activations.values) }
            let wants = node.inputs.map { chosen.contains($0) || produced.contains($0) }
            guard let y = activations.values[node.outputs[0]] else { continue }
            let inputGrads = try TrainOps.backward(
                node, inputs, output: y, dy: dy, wants: wants, opset: opset, file: file)
            for (i, g) in inputGrads.enumerated() {
                guard let g else { continue }
                let name = node.inputs[i]
                if chosen.contains(name) {
                    accumulate(g, into: &gradients[name])
                } else {
                    accumulate(g, into: &grads[name])
                }
            }
        }
    }

    private func value(_ name: String, _ values: [String: Tensor]) -> Tensor? {
        values[name] ?? parameters[name] ?? constants[name]
    }

    private func accumulate(_ g: Tensor, into slot: inout Tensor?) {
        guard slot != nil else {
            slot = g
            return
        }
        precondition(slot!.shape == g.shape, "gradient shapes \(slot!.shape) and \(g.shape) differ")
        slot!.data.withUnsafeMutableBufferPointer { s in
            g.data.withUnsafeBufferPointer { v in for i in 0..<v.count { s[i] += v[i] } }
        }
    }
}
