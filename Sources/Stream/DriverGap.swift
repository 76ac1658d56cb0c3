/// The frames a camera would have delivered while it was away (a device loss): the frame slots between the last
/// capture before the loss and a later instant — the resumed stream's first frame, or the moment the daemon stopped
/// waiting — counted to the nearest whole interval, less the one that ends at that instant. Traced as `driver_gap`
/// drops numbered on from the sequence the stream had reached and stamped one interval apart. One rule for the
/// pipeline (at the first frame after a loss) and the live daemon (stopped before a frame came back).
public struct DriverGap: Equatable, Sendable {
    /// The last capture before the loss (pipeline clock, ns).
    public let afterNs: Int64
    public let intervalNs: Int64
    /// Frames missed (at most 100 000; 0 when the interval is unknown or no time passed).
    public let count: Int

    public init(afterNs: Int64, untilNs: Int64, intervalNs: Int64) {
        self.afterNs = afterNs
        self.intervalNs = intervalNs
        guard intervalNs > 0, untilNs > afterNs else {
            count = 0
            return
        }
        let slots = (untilNs - afterNs + intervalNs / 2) / intervalNs
        count = Int(min(100_000, max(0, slots - 1)))
    }

    /// Calls `body` with each missed frame's number (from `firstSequence`) and time (one interval apart from
    /// `afterNs`), in order.
    public func forEachFrame(firstSequence: Int, _ body: (_ frame: Int, _ atNs: Int64) -> Void) {
        for i in 0..<count { body(firstSequence + i, afterNs + Int64(i + 1) * intervalNs) }
    }
}
