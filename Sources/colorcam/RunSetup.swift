import ColorcamCore
import PhotoPipeline
import Stream

/// What `replay` and `live` set up the same way, written once so the two cannot drift: the scheduler options, the
/// inference (the model's photo processor, or the diagnostic simulation), its label, and the trace `config` and
/// `summary` fields both commands write.
struct RunSetup {
    /// The options read here; both commands accept them.
    static let valued: Set<String> = [
        "max-in-flight", "queue", "max-latency-ms", "output-delay-ms", "simulate-inference-ms", "simulate-mode"
    ]

    /// The diagnostic stand-in for the model (`--simulate-inference-ms`), or nil.
    let simulator: SimulatedInference?
    /// The product's processor; nil with `--passthrough` or the simulation.
    let processor: PhotoColorProcessor?
    private let simulation: Simulation?

    /// `--simulate-inference-ms N[:J]` and `--simulate-mode`.
    struct Simulation {
        var ms: Double
        var jitterMs: Double
        var mode: SimulatedInference.Mode
    }

    /// What the pipeline runs: the model, the simulation, or nothing.
    var inference: FrameProcessor? { simulator ?? processor }
    /// The trace `config`'s `model` and the preview's label: the model's name, the simulation, or "none".
    var modelLabel: String { simulator?.label ?? processor?.label ?? "none" }
    /// The closing summary line's model (nil: no inference ran).
    var summaryModel: String? { simulator != nil ? "SIMULATED" : processor?.label }

    /// Reads the scheduler options into `config`: in flight, queue, latency budget. Call before opening the source
    /// (a bad option fails without touching a device).
    static func readSchedulerOptions(_ a: Arguments, into config: inout PipelineConfig) throws {
        config.maxInFlight = try a.int("max-in-flight", default: 1, range: 1...64)!
        config.queueCapacity = try a.int("queue", default: 1, range: 0...64)!
        if let ms = try a.double("max-latency-ms", min: 0) { config.outputBudgetNs = Int64(ms * 1e6) }
    }

    /// Checks the simulation options (before the source is opened).
    static func readSimulation(_ a: Arguments, command: String) throws -> Simulation? {
        let mode = SimulatedInference.Mode(rawValue: try a.choice("simulate-mode", ["spin", "sleep"], default: "spin"))!
        guard let text = a.string("simulate-inference-ms") else {
            if a.string("simulate-mode") != nil {
                throw UsageError("\(command): --simulate-mode needs --simulate-inference-ms")
            }
            return nil
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let ms = Double(parts[0]), ms >= 0, ms.isFinite,
            let jitter = parts.count == 2 ? Double(parts[1]) : 0, jitter >= 0, jitter <= ms
        else {
            throw UsageError(
                "\(command): --simulate-inference-ms wants N or N:JITTER in ms (0 ≤ JITTER ≤ N), got '\(text)'")
        }
        return Simulation(ms: ms, jitterMs: jitter, mode: mode)
    }

    /// Builds the inference once the source is open (the processor needs its geometry and colour range), and sets
    /// the presentation delay in `config` (`--output-delay-ms`; default 40 ms with the model, else off).
    init(
        _ a: Arguments, command: String, simulation: Simulation?, clock: MonotonicClock, geometry: FrameGeometry,
        colorRange: Y4MColorRange, config: inout PipelineConfig
    ) throws {
        self.simulation = simulation
        simulator = simulation.map {
            SimulatedInference(durationMs: $0.ms, jitterMs: $0.jitterMs, mode: $0.mode, clock: clock)
        }
        processor = try ColorizeOptions.processor(
            a, command: command, geometry: geometry, colorRange: colorRange, simulated: simulation != nil)
        let delayMs = try a.double("output-delay-ms", default: processor != nil ? 40 : 0, min: 0)!
        if delayMs > 0 { config.presentationDelayNs = Int64(delayMs * 1e6) }
    }

    /// The trace `config` fields both commands write (each adds its own after them).
    /// - Parameters:
    ///   - sourceFps: the rate the source is paced at.
    ///   - sourceIntervalNs: the source's nominal frame interval (for the output deadline).
    func traceConfig(
        command: String, source: String, config: PipelineConfig, sourceFps: Double, sourceIntervalNs: Int64
    ) -> [(String, TraceValue)] {
        var fields: [(String, TraceValue)] = [
            ("command", .string(command)), ("source", .string(source)), ("pace", .string(config.pace.rawValue)),
            ("source_fps", .double(sourceFps)), ("max_in_flight", .int(config.maxInFlight)),
            ("queue", .int(config.queueCapacity)), ("model", .string(modelLabel)),
            ("simulated", .bool(simulator != nil))
        ]
        if let processor {
            fields += [
                ("background", .string(processor.options.background.rawValue)),
                ("detect_every", .int(processor.options.fullDetectionInterval))
            ]
        }
        if let simulation {
            fields += [
                ("simulate_inference_ms", .double(simulation.ms)), ("simulate_jitter_ms", .double(simulation.jitterMs)),
                ("simulate_mode", .string(simulation.mode.rawValue))
            ]
        }
        if let budgetNs = config.outputBudgetNs(
            frameIntervalNs: config.frameIntervalNs(sourceIntervalNs: sourceIntervalNs))
        {
            fields.append(("output_deadline_us", .int(Int(budgetNs / 1000))))
        }
        return fields
    }

    /// The trace `summary` fields both commands write: frames captured and output, and whether the run completed
    /// (`stats` nil: it ended on an error; `framesCaptured` then says how far it got).
    static func traceSummary(_ stats: PipelineStats?, framesCaptured: Int) -> [(String, TraceValue)] {
        [
            ("frames_captured", .int(stats?.framesCaptured ?? framesCaptured)),
            ("frames_output", .int(stats?.framesOutput ?? -1)), ("completed", .bool(stats != nil))
        ]
    }

    /// The closing line both commands print: frames, rate, inferences (with the model, or "SIMULATED"), drops.
    func summaryLine(_ stats: PipelineStats) -> String {
        let seconds = Double(stats.durationNs) / 1e9
        let fps = seconds > 0 ? Double(stats.framesOutput) / seconds : 0
        let drops = DropReason.allCases.compactMap { reason -> String? in
            let n = stats.drops[reason] ?? 0
            return n > 0 ? "\(reason.rawValue) \(n)" : nil
        }
        var line = "\(stats.framesCaptured) frames captured, \(stats.framesOutput) output"
        line += " in \(format(seconds, 2)) s (\(format(fps, 1)) fps)"
        if let model = summaryModel {
            line += "; \(stats.inferences) inferences (\(model))"
            line += ", max in flight \(stats.maxInFlightSeen)"
        }
        line += "; drops: " + (drops.isEmpty ? "none" : drops.joined(separator: ", "))
        return line
    }
}
