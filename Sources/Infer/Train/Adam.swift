/// Adam (Kingma & Ba 2015) with decoupled weight decay towards an anchor: each step
/// `w −= lr · (m̂ / (√v̂ + ε) + decay · (w − anchor))`. With the anchor at the starting weights this is the
/// "stay close to the pretrained model" regulariser of transfer learning (L2-SP); with zeros it is AdamW.
///
/// Value type: moments per parameter, keyed by name; `step` mutates the parameters in place. One thread.
public struct Adam: Sendable {
    public var learningRate: Float
    public var beta1: Float = 0.9
    public var beta2: Float = 0.999
    public var epsilon: Float = 1e-8
    public var decay: Float
    public private(set) var steps = 0
    private var anchor: [String: Tensor]
    private var m: [String: [Float]] = [:]
    private var v: [String: [Float]] = [:]

    /// - Parameters:
    ///   - anchor: the weights decay pulls towards (by name); a parameter without one decays towards zero.
    public init(learningRate: Float, decay: Float = 0, anchor: [String: Tensor] = [:]) {
        self.learningRate = learningRate
        self.decay = decay
        self.anchor = anchor
    }

    /// One update of every parameter that has a gradient (`gradients[name]`, same shape), scaled by `scale`
    /// (e.g. 1 / samples for a sum over a batch).
    public mutating func step(_ parameters: inout [String: Tensor], gradients: [String: Tensor], scale: Float = 1) {
        steps += 1
        let c1 = 1 - pow(beta1, steps), c2 = 1 - pow(beta2, steps)
        for (name, g) in gradients {
            guard parameters[name] != nil else { continue }
            var mv = m[name] ?? [Float](repeating: 0, count: g.count)
            var vv = v[name] ?? [Float](repeating: 0, count: g.count)
            let anchorData = anchor[name]?.data
            parameters[name]!.data.withUnsafeMutableBufferPointer { w in
                for i in 0..<g.count {
                    let gi = g.data[i] * scale
                    mv[i] = beta1 * mv[i] + (1 - beta1) * gi
                    vv[i] = beta2 * vv[i] + (1 - beta2) * gi * gi
                    let update = (mv[i] / c1) / ((vv[i] / c2).squareRoot() + epsilon)
                    let pull = decay * (w[i] - (anchorData?[i] ?? 0))
                    w[i] -= learningRate * (update + pull)
                }
            }
            m[name] = mv
            v[name] = vv
        }
    }

    private func pow(_ base: Float, _ n: Int) -> Float {
        var r: Float = 1
        for _ in 0..<n { r *= base }
        return r
    }
}
