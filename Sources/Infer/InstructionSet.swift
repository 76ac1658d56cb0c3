import InferKernelSet
import InferKernelsAVX2
import InferKernelsAVX512
import InferKernelsBaseline

#if canImport(Glibc)
    import Glibc
#endif

/// The x86-64 instruction sets the engine's hot kernels are built for (`Sources/InferKernels`), slowest first.
public enum InstructionSet: String, CaseIterable, Sendable {
    /// SSE2, which every x86-64 CPU has: 4-float vectors, no FMA.
    case baseline
    /// AVX2 + FMA (Haswell, Zen 1 and later): 8-float vectors.
    case avx2
    /// AVX-512 F/BW/VL/DQ (Skylake-SP, Ice Lake, Zen 4 and later): 16-float vectors.
    case avx512

    /// The CPU flags (as `/proc/cpuinfo` spells them) the set's code uses.
    public var requiredFlags: [String] {
        switch self {
        case .baseline: return []
        case .avx2: return ["avx2", "fma"]
        case .avx512: return ["avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"]
        }
    }

    /// The set's compiled kernels.
    var kernels: any KernelSet.Type {
        switch self {
        case .baseline: return InferKernelsBaseline.Kernels.self
        case .avx2: return InferKernelsAVX2.Kernels.self
        case .avx512: return InferKernelsAVX512.Kernels.self
        }
    }

    /// The sets whose flags are all in `flags`, slowest first (always at least `.baseline`).
    public static func supported(byFlags flags: Set<String>) -> [InstructionSet] {
        allCases.filter { $0.requiredFlags.allSatisfy(flags.contains) }
    }

    /// The sets this CPU runs (from `/proc/cpuinfo`), slowest first.
    public static var supportedHere: [InstructionSet] { supported(byFlags: OpenBLASCoreSelection.cpuFlags()) }

    /// The fastest set whose flags are all in `flags`.
    public static func best(forFlags flags: Set<String>) -> InstructionSet {
        allCases.last { $0.requiredFlags.allSatisfy(flags.contains) } ?? .baseline
    }
}

/// The instruction set this process's engines run, and why: the fastest the CPU flags allow, or the one
/// `COLORCAM_ISA` names (so that tests and benchmarks can run every path on one machine).
public struct InstructionSetChoice: Equatable, Sendable {
    public let set: InstructionSet
    /// One line for `colorcam doctor`: where the choice came from.
    public let reason: String

    /// Chooses from an override (the value of `COLORCAM_ISA`, nil when unset) and the CPU flags.
    /// - Throws: `InferError` `.usage` for a name that is not a set; `.unavailable` for a set whose flags the CPU
    ///   lacks (running it would die on an illegal instruction).
    public static func choose(override: String?, flags: Set<String>) throws(InferError) -> InstructionSetChoice {
        let best = InstructionSet.best(forFlags: flags)
        guard let override, !override.isEmpty else {
            let why =
                best == .baseline
                ? "the CPU flags list neither AVX2+FMA nor AVX-512"
                : "the CPU flags list \(best.requiredFlags.joined(separator: " "))"
            return InstructionSetChoice(set: best, reason: "chosen from CPU flags (\(why))")
        }
        guard let set = InstructionSet(rawValue: override.lowercased()) else {
            throw InferError(
                .usage, file: "COLORCAM_ISA",
                "'\(override)' is not an instruction set; use \(InstructionSet.allCases.map(\.rawValue).joined(separator: ", ")) or leave it unset"
            )
        }
        let missing = set.requiredFlags.filter { !flags.contains($0) }
        guard missing.isEmpty else {
            throw InferError(
                .unavailable, file: "COLORCAM_ISA",
                "\(set.rawValue) needs CPU flags this CPU lacks: \(missing.joined(separator: ", ")) (this CPU runs up to \(best.rawValue))"
            )
        }
        return InstructionSetChoice(
            set: set, reason: "COLORCAM_ISA=\(override) from the environment (the CPU allows up to \(best.rawValue))")
    }

    /// This process's choice, made once from `COLORCAM_ISA` and `/proc/cpuinfo`.
    public static let process: Result<InstructionSetChoice, InferError> = Result {
        () throws(InferError) -> InstructionSetChoice in
        try choose(
            override: getenv("COLORCAM_ISA").map { String(cString: $0) }, flags: OpenBLASCoreSelection.cpuFlags())
    }

    /// This process's choice. - Throws: its `InferError` when `COLORCAM_ISA` is unusable.
    public static func forProcess() throws(InferError) -> InstructionSetChoice { try process.get() }
}
