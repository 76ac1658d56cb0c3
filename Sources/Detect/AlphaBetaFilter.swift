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
    /// Samples averaged by `filterStill` since the filter started (or snapped).
    private var stillSamples = 0
    /// The last interval between samples, seconds (`move(by:)` turns a move into a velocity with it).
    private var lastIntervalS = 1.0 / 30

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
        lastIntervalS = dtS
        let predicted = previous + velocityPerS * dtS
        let residual = x - predicted
        if abs(residual) > snapPx {
            value = x
            velocityPerS = 0
            stillSamples = 0
            return x
        }
        let next = predicted + alpha * residual
        velocityPerS += beta * residual / dtS
        value = next
        return next
    }

    /// Moves the estimate by `delta`, the coordinate's motion since the last sample measured another way (the
    /// photo's picture registered between frames), and makes that motion the velocity: `filterStill` then predicts
    /// no further motion, and a following `filter` or `coast` (motion not measured) carries it on. Call before
    /// `filterStill`.
    public mutating func move(by delta: Double) {
        guard let v = value else { return }
        value = v + delta
        velocityPerS = delta / lastIntervalS
    }

    /// Filters `x`, a sample of a coordinate whose motion was already applied (`move(by:)`): a running average with
    /// weight `alpha` per sample (far below `self.alpha`: nothing moves, so only noise is left to average), or
    /// 1/n while fewer samples than that have been averaged, so the average starts from what it has seen. A jump
    /// larger than `snapPx` resets it to the sample.
    ///
    /// No faster following of a persistent offset: the outline of a still print wanders slowly (the edge search
    /// settles on a shadow, then on the paper), and following that is exactly the jitter the averaging removes.
    public mutating func filterStill(_ x: Double, timestampNs: Int64, alpha stillAlpha: Double) -> Double {
        if value != nil { lastIntervalS = max(1e-6, Double(timestampNs - lastTimestampNs) / 1e9) }
        lastTimestampNs = timestampNs
        guard let previous = value, abs(x - previous) <= snapPx else {
            // The first sample, or a jump (the photo was picked up and put down): the average starts from it.
            value = x
            velocityPerS = 0
            stillSamples = 1
            return x
        }
        stillSamples += 1
        let next = previous + max(stillAlpha, 1 / Double(stillSamples)) * (x - previous)
        value = next
        return next
    }

    /// Moves the estimate to `x` at `timestampNs` keeping the velocity: a correction of where the coordinate is
    /// (another edge was being followed), not a measurement of motion, so no jump enters the velocity.
    /// `velocityChangePerSample`: a velocity correction measured another way (px per sample interval), added.
    public mutating func rebase(to x: Double, timestampNs: Int64, velocityChangePerSample: Double = 0) {
        value = x
        lastTimestampNs = timestampNs
        velocityPerS += velocityChangePerSample / lastIntervalS
    }

    /// Advances the prediction by one missed sample (no measurement) and returns it. `alreadyMoved`: this sample's
    /// motion was applied by `move(by:)`, so the estimate stays where that put it.
    public mutating func coast(timestampNs: Int64, alreadyMoved: Bool = false) -> Double? {
        guard let previous = value else { return nil }
        let dtS = max(0, Double(timestampNs - lastTimestampNs) / 1e9)
        lastTimestampNs = timestampNs
        if !alreadyMoved { value = previous + velocityPerS * dtS }
        return value
    }
}
