/// A constant-velocity (alpha-beta) smoother for one coordinate: it predicts with its velocity estimate, then moves
/// towards the measurement by `alpha` and corrects the velocity by `beta`. On steady motion it has no lag (unlike a
/// plain low-pass); on still input it averages noise (with the defaults the output's noise is about 0.65× the
/// input's) and under acceleration `a` (px/frame²) it trails by about `a·(1−alpha)/beta` (0.8 px for a 6-px, 1-Hz
/// camera shake). A jump larger than `snapPx` resets it to the measurement (a photo picked up and moved).
/// A value type; allocation-free.
public struct AlphaBetaFilter: Sendable, Hashable {
    public var alpha: Double
    public var beta: Double
    public var snapPx: Double
    private var value: Double?
    private var velocityPerS = 0.0
    private var lastTimestampNs: Int64 = 0

    public init(alpha: Double = 0.5, beta: Double = 0.15, snapPx: Double = 12) {
        self.alpha = alpha
        self.beta = beta
        self.snapPx = snapPx
    }

    /// Filters `x` sampled at `timestampNs` (must increase; an equal or older timestamp is treated as 1 µs later).
    public mutating func filter(_ x: Double, timestampNs: Int64) -> Double {
        guard let previous = value else {
            value = x
            lastTimestampNs = timestampNs
            return x
        }
        let dtS = max(1e-6, Double(timestampNs - lastTimestampNs) / 1e9)
        lastTimestampNs = timestampNs
        let predicted = previous + velocityPerS * dtS
        let residual = x - predicted
        if abs(residual) > snapPx {
            value = x
            velocityPerS = 0
            return x
        }
        let next = predicted + alpha * residual
        velocityPerS += beta * residual / dtS
        value = next
        return next
    }

    /// Moves the estimate to `x` at `timestampNs` keeping the velocity: a correction of where the coordinate is
    /// (another edge was being followed), not a measurement of motion, so no jump enters the velocity.
    public mutating func rebase(to x: Double, timestampNs: Int64) {
        value = x
        lastTimestampNs = timestampNs
    }

    /// Advances the prediction by one missed sample (no measurement) and returns it.
    public mutating func coast(timestampNs: Int64) -> Double? {
        guard let previous = value else { return nil }
        let dtS = max(0, Double(timestampNs - lastTimestampNs) / 1e9)
        lastTimestampNs = timestampNs
        value = previous + velocityPerS * dtS
        return value
    }
}
