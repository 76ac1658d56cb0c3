/// The losses the trainer minimises, each returning the mean loss and its gradient with respect to the prediction.
public enum TrainLoss {
    /// Smooth L1 (Huber with threshold `beta`, in the prediction's units) between `prediction` and `target`, the
    /// mean over elements weighted by `weight` (per element of a plane broadcast over the leading planes: an
    /// [N, C, H, W] prediction takes an H×W weight; nil: all 1). Shapes must match.
    public static func smoothL1(
        prediction: Tensor, target: Tensor, weight: [Float]? = nil, beta: Float = 1
    ) -> (loss: Float, gradient: Tensor) {
        precondition(prediction.shape == target.shape, "prediction \(prediction.shape) and target \(target.shape)")
        let count = prediction.count
        let plane = weight?.count ?? count
        precondition(count % plane == 0, "weight of \(plane) does not tile \(prediction.shape)")
        var total: Double = 0
        var weightSum: Double = 0
        var gradient = Tensor(zeros: prediction.shape)
        for i in 0..<count {
            let w = weight?[i % plane] ?? 1
            weightSum += Double(w)
            let d = prediction.data[i] - target.data[i]
            let a = abs(d)
            total += Double(w * (a < beta ? 0.5 * d * d / beta : a - 0.5 * beta))
            gradient.data[i] = w * (a < beta ? d / beta : (d > 0 ? 1 : -1))
        }
        let norm = Float(max(weightSum, 1e-12))
        for i in 0..<count { gradient.data[i] /= norm }
        return (Float(total) / norm, gradient)
    }
}
