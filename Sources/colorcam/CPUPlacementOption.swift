import ColorcamCore
import Stream

/// `--cpu-placement split|shared` and `--inference-spin-ms` for `replay` and `live`: whether the inference thread gets
/// a core of its own, and how long it polls for work there before sleeping.
enum CPUPlacementOption {
    /// The options' names, for the command's `Arguments`.
    static let valued: Set<String> = ["cpu-placement", "inference-spin-ms"]

    static let help = """
          --cpu-placement shared|split
                                    shared (default): every thread on every CPU. split (2+ CPUs): the inference thread
                                    runs alone on the highest CPU and everything else on the others, so a request is
                                    not held back by a busy core when inference runs most of the time (a slow model);
                                    with a fast model the idle inference core's wake-up can cost more than it saves
          --inference-spin-ms X|always
                                    how long the inference thread polls for its next request before it sleeps, so a
                                    request starts within microseconds instead of waiting for a sleeping core to wake
                                    (0.1 ms typically, 1-4 ms when the other cores are busy). Default: 1.25 frame
                                    intervals with split (the core is colorcam's; a slow model's next request comes
                                    within one interval), 0 with shared. The poll keeps that core busy meanwhile;
                                    'always' (with split: the lowest request->start lag) keeps it busy all the time
        """

    /// Applies the option (call before the pipeline's threads start): sets `config.inferenceCPU` and returns the
    /// trace `config` entries.
    static func apply(
        _ a: Arguments, command: String,
        to config: inout PipelineConfig
    ) throws -> [(String, TraceValue)] {
        var entries: [(String, TraceValue)] = []
        if a.string("inference-spin-ms") == "always" {
            config.inferenceSpinNs = .max
            entries.append(("inference_spin", .string("always")))
        } else if let spinMs = try a.double("inference-spin-ms", min: 0) {
            guard spinMs <= 60_000 else { throw UsageError("--inference-spin-ms: at most 60000 ms, or 'always'") }
            config.inferenceSpinNs = Int64((spinMs * 1e6).rounded())
            entries.append(("inference_spin_ms", .double(spinMs)))
        }
        let choice = try a.choice("cpu-placement", ["shared", "split"], default: "shared")
        guard choice == "split" else { return [("cpu_placement", .string("shared"))] + entries }
        guard let split = CPUPlacement.split() else {
            Log.info("\(command): --cpu-placement split needs 2 or more usable CPUs; threads share them")
            return [("cpu_placement", .string("shared"))] + entries
        }
        config.inferenceCPU = split.inferenceCPU
        return [("cpu_placement", .string("split")), ("inference_cpu", .int(split.inferenceCPU))] + entries
    }
}
