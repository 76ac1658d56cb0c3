import ColorcamCore
import Foundation
import PhotoPipeline
import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam replay`: runs a recorded clip through the pipeline.
enum ReplayCommand {
    static let command = Command(
        name: "replay", summary: "run a .y4m file, stdin or PNG folder through the pipeline", help: help,
        run: { try run($0) })

    static let help = """
        usage: colorcam replay INPUT [options]

        Runs a recorded clip through the pipeline: capture → detect photos → colorize one photo at a time (≤
        max-in-flight at once) → composite every photo's latest colours with the live frame → output, tracing every
        frame's fate.

        INPUT                       a .y4m file, '-' for stdin, or a folder of .png images (sorted by name)

        options:
          --output OUT.y4m|-        write the output frames (written as OUT.y4m only when the run completes; until
                                    then, and after a crash or kill, they are in .OUT.y4m.tmp-PID beside it: the
                                    header and every whole frame written, readable by ffmpeg, plus at most one cut
                                    frame at the end; never removed automatically)
          --trace TRACE.json        write the per-frame trace (Chrome Trace Event JSON; open in ui.perfetto.dev or
                                    summarise with 'colorcam trace-report'; after a crash or kill it loads up to its
                                    last whole event and says it is truncated)
          --on-write-error stop|continue
                                    when writing OUT or TRACE fails (e.g. No space left on device): stop (default)
                                    ends the run; continue abandons that file and runs on. Either way colorcam exits 74
                                    naming the file; a failed OUT.y4m is removed (never left looking whole), a failed
                                    trace is kept, truncated where the write failed
          --pace realtime|asap      realtime (default): frames arrive at their recorded timestamps (Y4M 'Xts_us'
                                    FRAME tags) or else at the header rate, as from a camera; a frame the pipeline
                                    cannot take is dropped, never buffered.
                                    asap: every frame is processed as fast as possible, each with its own inference
                                    (batch conversion; the output is the same run to run); shows progress on a
                                    terminal.
          --fps N                   pace at N frames/s instead of the file's rate and timestamps (PNG folders: 30)
          --loop N                  play the input N times (default 1; needs a file, not stdin)
          --max-in-flight N         inference runs at once (default 1)
          --queue N                 newest-wins waiting places for inference (default 1; 0 = a frame arriving while
                                    inference is busy is not admitted, reason 'busy'; a frame pushed out of the slot
                                    is dropped with reason 'superseded')
          --max-latency-ms X        realtime: drop a frame whose output would come more than X ms after its capture
                                    (reason 'late'; default two frame intervals)
          --output-delay-ms X       realtime: write each frame X ms after its capture (not as soon as it is ready), so
                                    the output is evenly paced whatever each frame's detection and compositing took
                                    (a jitter buffer; default 40 with the model, 0 = off; keep it below
                                    --max-latency-ms)
          --simulate-inference-ms N[:J]
                                    DIAGNOSTIC SIMULATION, not a model: hold the inference slot for N ms (± J ms
                                    jitter, seeded). The trace and report mark the run as simulated.
          --simulate-mode spin|sleep
                                    spin a core (default, like real inference) or sleep
        \(CPUPlacementOption.help)
        \(V4L2OutputOption.help)
        \(ColorizeOptions.help)
          --quiet                   no summary line on stderr

        examples:
          colorcam replay scene.y4m --output out.y4m --trace t.json --save-photos photos && colorcam trace-report t.json
          colorcam replay scene.y4m --pace asap --background original --output out.y4m
          colorcam replay clip.y4m --simulate-inference-ms 90 --trace t.json   (scheduler check, no model)
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, command: "replay",
            valued: Set(["output", "trace", "pace", "fps", "loop", "on-write-error"]).union(RunSetup.valued)
                .union(ColorizeOptions.valued).union(CPUPlacementOption.valued)
                .union(V4L2OutputOption.valued),
            boolean: Set(["quiet"]).union(ColorizeOptions.boolean))
        let input = try a.positionals(exactly: 1, usage: "replay INPUT [options] (see --help)")[0]
        var config = PipelineConfig()
        config.pace = PipelineConfig.Pace(rawValue: try a.choice("pace", ["realtime", "asap"], default: "realtime"))!
        try RunSetup.readSchedulerOptions(a, into: &config)
        config.loops = try a.int("loop", default: 1, range: 1...1_000_000)!
        if let fps = try a.double("fps", min: 0.001) { config.frameIntervalOverrideNs = Int64((1e9 / fps).rounded()) }
        let simulation = try RunSetup.readSimulation(a, command: "replay")
        let writeErrorPolicy = WriteErrorPolicy(
            rawValue: try a.choice(
                "on-write-error", ["stop", "continue"],
                default: "stop"))!

        let source = try openSource(input, fps: try a.double("fps", min: 0.001))
        let outputFps: (numerator: Int, denominator: Int)? = try a.double("fps", min: 0.001).map {
            $0 == $0.rounded() ? (Int($0), 1) : (Int(($0 * 1000).rounded()), 1000)
        }
        if config.loops > 1 && !source.canRewind {
            throw UsageError("replay: --loop needs a seekable file; \(source.name) cannot be rewound")
        }
        let clock = SystemClock()
        let setup = try RunSetup(
            a, command: "replay", simulation: simulation, clock: clock, geometry: source.geometry,
            colorRange: (source as? Y4MSource)?.header.colorRange ?? (source is PNGFolderSource ? .full : .unspecified),
            config: &config)
        let processor = setup.processor
        let sourceFps =
            config.frameIntervalOverrideNs == nil
            ? Double(source.frameRate.numerator) / Double(source.frameRate.denominator) : try a.double("fps")!
        var traceConfig = setup.traceConfig(
            command: "replay", source: source.name, config: config, sourceFps: sourceFps,
            sourceIntervalNs: source.nominalFrameIntervalNs)
        traceConfig += try CPUPlacementOption.apply(a, command: "replay", to: &config)
        let trace: TraceWriter? = try a.string("trace").map {
            try TraceWriter(path: $0, processName: "colorcam replay", config: traceConfig)
        }
        // Created last, so a failure above leaves no temporary output behind.
        let sink: WriteErrorPolicySink? = try a.string("output").map {
            // A .y4m input's header carries through (aspect, colour range); PNG-derived frames are full range.
            var header =
                (source as? Y4MSource)?.header
                ?? Y4MHeader(
                    geometry: source.geometry, frameRate: source.frameRate, pixelAspect: (1, 1),
                    colorRange: source is PNGFolderSource ? .full : .unspecified)
            if let fps = outputFps { header.frameRate = fps }  // --fps: the output plays at the rate it was paced
            return WriteErrorPolicySink(
                try Y4MSink(path: $0, header: header, writeTimestamps: true),
                policy: writeErrorPolicy)
        }
        if a.string("v4l2-output") != nil && config.pace != .realtime {
            throw UsageError("replay: --v4l2-output needs --pace realtime (a device shows frames at their rate)")
        }
        let virtualCamera: V4L2OutputSink?
        do {
            virtualCamera = try V4L2OutputOption.open(
                a, command: "replay", geometry: source.geometry, framesPerSecond: outputFps ?? source.frameRate,
                trace: trace ?? NullTraceSink(), clock: clock)
        } catch {
            sink?.abort()
            throw error
        }
        let outputs: FrameSink? = virtualCamera.map { camera in TeeSink((sink.map { [$0] } ?? []) + [camera]) } ?? sink
        if let simulator = setup.simulator, !a.flag("quiet") {
            printError("replay: inference is a DIAGNOSTIC SIMULATION (\(simulator.label)), not a model")
        }

        let pipeline = Pipeline(
            source: source, sink: outputs, processor: setup.inference,
            trace: trace ?? NullTraceSink(), clock: clock, config: config)
        trace?.setWriteErrorHandler { [sink] error in
            guard writeErrorPolicy == .stop else { return }
            sink?.fail(error)  // the run ends with this error (exit 74), the output not published
            pipeline.requestStop()
        }
        let signals = SignalStopper { pipeline.requestStop() }
        let progress =
            config.pace == .asap && isatty(2) == 1 && !a.flag("quiet")
            ? ProgressLine(pipeline: pipeline, totalFrames: estimatedFrames(input, source).map { $0 * config.loops })
            : nil
        var result = Result { try pipeline.run() }
        progress?.finish()
        if let processor, case .success = result {
            do { try processor.finish() } catch { result = .failure(error) }
        }
        signals.cancel()
        var traceError: Error?
        if let trace {
            let stats = try? result.get()
            var summary = RunSetup.traceSummary(stats, framesCaptured: pipeline.framesCaptured.load(ordering: .relaxed))
            if let abandoned = sink?.abandonment {
                summary += [
                    ("output_abandoned", .bool(true)), ("output_error", .string(abandoned.error.description)),
                    ("output_frames_written", .int(abandoned.framesWritten))
                ]
            }
            do { try trace.close(atNs: clock.nowNs(), summary: summary) } catch { traceError = error }
        }
        if let virtualCamera, !a.flag("quiet") { printError("replay: " + V4L2OutputOption.summary(virtualCamera)) }
        let stats = try result.get()
        if !a.flag("quiet") {
            printError("replay: " + setup.summaryLine(stats))
        }
        if let abandoned = sink?.abandonment {
            printError("replay: output abandoned after \(abandoned.framesWritten) frames (--on-write-error continue)")
        }
        if let traceError { throw traceError }
        if let abandoned = sink?.abandonment { throw abandoned.error }
        return 0
    }

    /// A folder of PNGs, stdin, or a .y4m file.
    static func openSource(_ input: String, fps: Double?) throws -> FrameSource {
        var isDirectory: ObjCBool = false
        if input != "-", FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory), isDirectory.boolValue
        {
            return try PNGFolderSource(directory: input, fps: fps ?? 30)
        }
        return try Y4MSource(path: input)
    }

    static func estimatedFrames(_ input: String, _ source: FrameSource) -> Int? {
        guard input != "-", let size = try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int else {
            return nil
        }
        return size / (source.geometry.frameBytes + 6)
    }
}

func format(_ value: Double, _ decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
}

/// Turns SIGINT/SIGTERM into a call (e.g. `Pipeline.requestStop`) while alive; `cancel()` restores the defaults.
final class SignalStopper: @unchecked Sendable {
    // Invariant: sources are created in init and only cancelled in cancel(), from the same thread.
    private var sources: [DispatchSourceSignal] = []

    init(_ onSignal: @escaping @Sendable () -> Void) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                printError("stopping on signal \(sig): finishing the current frame")
                onSignal()
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources = []
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

/// A one-line progress display on stderr (a terminal), refreshed every 200 ms from a timer thread.
final class ProgressLine: @unchecked Sendable {
    // Invariant: `timer` is only touched in init and finish() on the calling thread.
    private var timer: DispatchSourceTimer?
    private let startNs = SystemClock.rawNs()

    init(pipeline: Pipeline, totalFrames: Int?) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(200))
        let startNs = self.startNs
        timer.setEventHandler {
            let done = pipeline.framesCaptured.load(ordering: .relaxed)
            let seconds = Double(SystemClock.rawNs() - startNs) / 1e9
            var bar = ""
            if let totalFrames, totalFrames > 0 {
                let fraction = min(1, Double(done) / Double(totalFrames))
                let filled = Int(fraction * 30)
                bar =
                    "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
                    + "] \(Int(fraction * 100))% "
            }
            var line = "\r\u{1B}[K" + bar + "\(done) frames, \(format(Double(done) / max(seconds, 1e-3), 1)) fps"
            line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        }
        timer.resume()
        self.timer = timer
    }

    func finish() {
        timer?.cancel()
        timer = nil
        var clear = "\r\u{1B}[K"
        clear.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
