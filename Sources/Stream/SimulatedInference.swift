import ColorcamCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A DIAGNOSTIC stand-in for the model (`--simulate-inference-ms N[:JITTER]`): holds the inference slot for
/// N ± JITTER ms, busy-spinning a core (`spin`, like real inference) or sleeping (`sleep`). Never the product:
/// the trace's `config` and every `infer` event say `simulated: true`.
///
/// A `FrameProcessor` that detects nothing, asks for an inference on every frame, and lets each output frame carry
/// the scheduler's result. Durations are drawn from a seeded generator, so a run (and a `PipelineStepper` run, in
/// `.sleep` mode: spinning on a `SteppedClock` would never end) is reproducible.
public final class SimulatedInference: FrameProcessor, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `rng` is only touched under its Mutex; the rest is immutable.

    public enum Mode: String, Sendable { case spin, sleep }

    public let durationNs: Int64
    public let jitterNs: Int64
    public let mode: Mode
    private let clock: MonotonicClock
    private let rng: Locked<UInt64>

    public init(
        durationMs: Double, jitterMs: Double = 0, mode: Mode = .spin, clock: MonotonicClock,
        seed: UInt64 = 0x636f_6c6f_7263_616d
    ) {
        precondition(durationMs >= 0 && jitterMs >= 0, "simulated durations must be non-negative")
        durationNs = Int64(durationMs * 1e6)
        jitterNs = Int64(jitterMs * 1e6)
        self.mode = mode
        self.clock = clock
        rng = Locked(seed | 1)
    }

    public var isSimulated: Bool { true }
    public var label: String {
        let ms = Double(durationNs) / 1e6
        let jitter = Double(jitterNs) / 1e6
        return "SIMULATED \(ms) ms" + (jitterNs > 0 ? " ±\(jitter) ms" : "") + " (\(mode.rawValue))"
    }

    /// The next duration: uniform in [N − J, N + J], never negative.
    public func nextDurationNs() -> Int64 {
        guard jitterNs > 0 else { return durationNs }
        let r: UInt64 = rng.withLock { state in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        let span = UInt64(2 * jitterNs + 1)
        return max(0, durationNs - jitterNs + Int64(r % span))
    }

    public func prepare(framePoolSize: Int, inputSlotCount: Int) {}

    public func analyse(_ frame: FrameBuffer) -> Int? { nil }

    public func prepareInference(_ frame: FrameBuffer, slot: Int, inferenceIdle: Bool) -> InferenceRequest? {
        InferenceRequest(photo: -1, reason: .frame)
    }

    /// Holds the calling thread for the next duration (sleeping or spinning on the clock).
    public func infer(slot: Int, frame: Int, captureTsNs: Int64) -> InferenceOutcome {
        let endNs = clock.nowNs() + nextDurationNs()
        switch mode {
        case .sleep:
            clock.sleep(untilNs: endNs)
        case .spin:
            var spins = 0
            while clock.nowNs() < endNs { spins &+= 1 }
        }
        return .local
    }

    public func composite(_ frame: FrameBuffer, scheduled: CompositeStamp?) -> CompositeStamp? { scheduled }
}
