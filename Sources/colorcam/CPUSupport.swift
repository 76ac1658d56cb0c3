import ColorcamCore
import Foundation

/// The inference engine (Sources/Infer) is compiled for AVX2 and FMA; on a CPU without them its code would die with
/// SIGILL. Commands that run it check first and exit 69 with a clear line instead. This file is compiled without
/// those flags (the colorcam target), so the check itself runs anywhere.
enum CPUSupport {
    /// The x86 flags the engine needs that `/proc/cpuinfo` does not list (empty: all present, or not x86 Linux).
    static let missingInferenceFlags: [String] = {
        #if arch(x86_64)
            guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
            else { return [] }
            let flags = Set(line.split(separator: " ").map(String.init))
            return ["avx2", "fma"].filter { !flags.contains($0) }
        #else
            return []
        #endif
    }()

    /// Throws (exit 69) when the engine cannot run on this CPU.
    static func requireInference(_ command: String) throws {
        guard missingInferenceFlags.isEmpty else {
            throw UnavailableError(
                message: "\(command): this CPU lacks \(missingInferenceFlags.joined(separator: ", ")), "
                    + "which this build's inference engine uses (rebuild without -mavx2 -mfma in "
                    + "Package.swift); --passthrough and --simulate-inference-ms still work")
        }
    }
}

/// A one-line error with exit code 69 (unavailable).
struct UnavailableError: ColorcamError {
    let message: String
    var kind: FailureKind { .unavailable }
    var description: String { message }
}
