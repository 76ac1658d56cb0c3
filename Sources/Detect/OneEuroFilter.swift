/// The One-Euro filter (Casiez, Roussel & Vogel, CHI 2012) for one scalar signal: a low-pass whose cutoff rises with
/// the signal's speed, so still signals are smoothed hard and moving ones follow with little lag.
///
/// `lagCompensation` adds the filtered velocity times the filter's time constant back to the output, cancelling the
/// first-order lag of the low-pass on steady motion (0 = the textbook filter, 1 = full compensation).
/// A value type; allocation-free.
public struct OneEuroFilter: Sendable, Hashable {
    /// Cutoff at rest, Hz.
    public var minCutoffHz: Double
    /// How much the cutoff rises per unit of speed (Hz per unit/s).
    public var beta: Double
    /// Cutoff of the velocity estimate, Hz.
    public var derivativeCutoffHz: Double
    public var lagCompensation: Double
    private var value: Double?
    private var velocity = 0.0
    private var lastTimestampNs: Int64 = 0

    public init(minCutoffHz: Double, beta: Double, derivativeCutoffHz: Double = 1.0, lagCompensation: Double = 0) {
        self.minCutoffHz = minCutoffHz
        self.beta = beta
        self.derivativeCutoffHz = derivativeCutoffHz
        self.lagCompensation = lagCompensation
    }

    @inline(__always) private static func alpha(cutoffHz: Double, dtS: Double) -> Double {
        let tau = 1 / (2 * Double.pi * cutoffHz)
        return 1 / (1 + tau / dtS)
    }

    /// Filters `x` sampled at `timestampNs` (must increase; an equal or older timestamp is treated as 1 µs later).
    /// - Returns: the smoothed value.
    public mutating func filter(_ x: Double, timestampNs: Int64) -> Double {
        guard let previous = value else {
            value = x
            lastTimestampNs = timestampNs
            return x
        }
        let dtS = max(1e-6, Double(timestampNs - lastTimestampNs) / 1e9)
        lastTimestampNs = timestampNs
        let rawVelocity = (x - previous) / dtS
        velocity += OneEuroFilter.alpha(cutoffHz: derivativeCutoffHz, dtS: dtS) * (rawVelocity - velocity)
        let cutoff = minCutoffHz + beta * abs(velocity)
        let smoothed = previous + OneEuroFilter.alpha(cutoffHz: cutoff, dtS: dtS) * (x - previous)
        value = smoothed
        let tau = 1 / (2 * Double.pi * cutoff)
        return smoothed + lagCompensation * velocity * tau
    }

    /// Forgets the history (the next sample passes through unchanged).
    public mutating func reset() { value = nil; velocity = 0 }
}
