import ColorcamCore
import Stream

/// `--cpu-placement split|shared` for `replay` and `live`: whether the inference thread gets a core of its own.
enum CPUPlacementOption {
    static let help = """
      --cpu-placement shared|split
                                shared (default): every thread on every CPU. split (2+ CPUs): the inference thread
                                runs alone on the highest CPU and everything else on the others, so a request is
                                not held back by a busy core when inference runs most of the time (a slow model);
                                with a fast model the idle inference core's wake-up can cost more than it saves
    """

    /// Applies the option (call before the pipeline's threads start): sets `config.inferenceCPU` and returns the
    /// trace `config` entries.
    static func apply(_ a: Arguments, command: String,
                      to config: inout PipelineConfig) throws -> [(String, TraceValue)] {
        let choice = try a.choice("cpu-placement", ["shared", "split"], default: "shared")
        guard choice == "split" else { return [("cpu_placement", .string("shared"))] }
        guard let split = CPUPlacement.split() else {
            Log.info("\(command): --cpu-placement split needs 2 or more usable CPUs; threads share them")
            return [("cpu_placement", .string("shared"))]
        }
        config.inferenceCPU = split.inferenceCPU
        return [("cpu_placement", .string("split")), ("inference_cpu", .int(split.inferenceCPU))]
    }
}
