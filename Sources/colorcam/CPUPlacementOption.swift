import ColorcamCore
import Stream

/// `--cpu-placement split|shared` for `replay` and `live`: whether the inference thread gets a core of its own.
enum CPUPlacementOption {
    static let help = """
      --cpu-placement split|shared
                                split (default with a model in real time, on 2+ CPUs): the inference thread runs
                                alone on the highest CPU, everything else on the others, so a request starts at
                                once however busy the stream threads are; shared: every thread on every CPU
    """

    /// Applies the option (call before the pipeline's threads start): sets `config.inferenceCPU` and returns the
    /// trace `config` entries.
    /// - Parameter inference: whether the run has an inference thread and runs in real time (the default's condition).
    static func apply(_ a: Arguments, command: String, inference: Bool,
                      to config: inout PipelineConfig) throws -> [(String, TraceValue)] {
        let choice = try a.choice("cpu-placement", ["split", "shared"], default: inference ? "split" : "shared")
        guard choice == "split" else { return [("cpu_placement", .string("shared"))] }
        guard let split = CPUPlacement.split() else {
            Log.info("\(command): --cpu-placement split needs 2 or more usable CPUs; threads share them")
            return [("cpu_placement", .string("shared"))]
        }
        config.inferenceCPU = split.inferenceCPU
        return [("cpu_placement", .string("split")), ("inference_cpu", .int(split.inferenceCPU))]
    }
}
