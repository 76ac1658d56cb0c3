import ColorcamCore
import Detect
import Dispatch
import Infer
import Live
import PhotoPipeline
import Preview
import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam live`: the long-running daemon with the browser preview.
enum LiveCommand {
    static let command = Command(
        name: "live", summary: "run continuously with a browser preview, metrics and recovery", help: help,
        run: { try run($0) })

    static let help = """
        usage: colorcam live (--device /dev/videoN | --source FILE.y4m) [options]

        Runs the pipeline until SIGINT/SIGTERM, serving a live preview: photos under the camera are found, colorized
        and shown in colour. SIGINT/SIGTERM stop capture, let the in-flight inference finish, flush the trace, outputs
        and saved photos, and exit 0. SIGHUP reloads the model (the --model path, re-read) without stopping the stream;
        a model that fails to load is logged and the running one kept.

        source:
          --device /dev/videoN      a V4L2 camera (default when no --source: /dev/video0)
          --size WxH                camera frame size (default 640x480)
          --fps N                   camera rate to set (default 30; a faster device is decimated, and says so);
                                    for --source, pace the file at N frames/s instead of its own rate
          --source FILE.y4m         replay a file in a loop at real time through the daemon (demos, tests)

        options:
        \(PreviewAccessOption.help)
          --output OUT.y4m          also record the output frames (a valid file however the daemon ends)
          --trace FILE.json         write the per-frame trace, bounded: when it reaches --trace-max-mb it is ended
                                    (a whole trace) and renamed FILE.000001.json, .000002, ...; a new FILE.json
                                    starts; only the newest --trace-keep finished files are kept (disk use below
                                    (keep + 1) x max). Each file loads in trace-report on its own.
          --trace-max-mb N          size at which the trace starts a new file (default 64; 0 = never, unbounded)
          --trace-keep K            finished trace files kept besides the current one (default 4)
          --max-in-flight N, --queue N, --max-latency-ms X, --output-delay-ms X
                                    scheduler and pacing settings, as for 'colorcam replay'
          --simulate-inference-ms N[:J], --simulate-mode spin|sleep
                                    DIAGNOSTIC SIMULATION of the model, as for 'colorcam replay'
        \(CPUPlacementOption.help)
        \(V4L2OutputOption.help)
        \(ColorizeOptions.help)
          --exit-on-device-loss     exit 69 when the source is lost instead of retrying with backoff
          --log-level error|warning|info|debug
                                    stderr verbosity (default info)

        endpoints: /  /stream.mjpg  /snapshot.jpg  /stats.json  /metrics (Prometheus)  /healthz
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, command: "live",
            valued: Set([
                "source", "device", "size", "fps", "listen", "output", "trace", "trace-max-mb", "trace-keep",
                "log-level"
            ])
            .union(RunSetup.valued).union(ColorizeOptions.valued).union(CPUPlacementOption.valued)
            .union(V4L2OutputOption.valued).union(PreviewAccessOption.valued),
            boolean: Set(["exit-on-device-loss"]).union(ColorizeOptions.boolean))
        _ = try a.positionals(exactly: 0, usage: "live --source FILE.y4m [options] (see --help)")
        if let level = a.string("log-level") {
            guard let parsed = Log.Level(name: level) else {
                throw UsageError("live: --log-level must be one of error, warning, info, debug, got '\(level)'")
            }
            Log.level = parsed
        }
        if a.string("source") != nil && a.string("device") != nil {
            throw UsageError("live: give either --device or --source, not both")
        }
        let sourcePath = a.string("source") ?? a.string("device") ?? "/dev/video0"
        let isDevice = a.string("source") == nil
        let (width, height) = try parseSize(a.string("size") ?? "640x480", command: "live")
        if !isDevice && a.string("size") != nil { throw UsageError("live: --size applies to --device only") }
        var options = LiveOptions()
        options.exitOnDeviceLoss = a.flag("exit-on-device-loss")
        options.pipeline.pace = .realtime
        options.pipeline.loops = Int.max / 2
        try RunSetup.readSchedulerOptions(a, into: &options.pipeline)
        let fps = try a.double("fps", min: 0.001)
        if let fps, !isDevice { options.pipeline.frameIntervalOverrideNs = Int64((1e9 / fps).rounded()) }
        let simulation = try RunSetup.readSimulation(a, command: "live")
        let listenText = a.string("listen") ?? "127.0.0.1:8080"
        guard let listen = SocketAddress(listenText) else {
            throw UsageError("live: --listen wants ADDR:PORT (e.g. 127.0.0.1:8080 or [::1]:8080), got '\(listenText)'")
        }
        let access = try PreviewAccessOption.resolve(a, command: "live", listen: listen)

        let clock = SystemClock()
        let makeSource: () throws -> FrameSource = {
            if isDevice {
                return try V4L2Source(
                    path: sourcePath,
                    request: V4L2CaptureRequest(
                        widthPx: width, heightPx: height,
                        framesPerSecond: fps ?? 30),
                    clock: clock)
            }
            return try Y4MSource(path: sourcePath)
        }
        // Fail fast on a missing device or a bad file. The daemon gets this very source; no other reference is
        // kept (`probe` is cleared below), so a lost device's handle closes when the daemon drops it — vivid and
        // real drivers only come back once every handle is closed.
        var probe: FrameSource! = try makeSource()
        if !isDevice && !probe.canRewind { throw UsageError("live: --source must be a seekable file (it is looped)") }
        if isDevice { options.pipeline.loops = 1 }
        let firstSource = SourceHandOff(probe)
        let openSource: () throws -> FrameSource = { try firstSource.take() ?? makeSource() }

        let setup = try RunSetup(
            a, command: "live", simulation: simulation, clock: clock, geometry: probe.geometry,
            colorRange: (probe as? Y4MSource)?.header.colorRange ?? .unspecified, config: &options.pipeline)
        let processor = setup.processor, modelLabel = setup.modelLabel
        let metrics = PreviewMetrics(dropReasons: DropReason.allCases.map(\.rawValue))
        let server = try PreviewServer(
            config: PreviewServerConfig(listenAddress: listen, accessToken: access.token), metrics: metrics)
        if let processor { server.serveAPI(PhotoHintsAPI(processor: processor)) }
        let preview = PreviewSink(
            server: server, clock: clock, model: modelLabel,
            overlays: processor.map(Self.outlines(of:)))
        var traceConfig = setup.traceConfig(
            command: "live", source: sourcePath, config: options.pipeline,
            sourceFps: Double(probe.frameRate.numerator) / Double(probe.frameRate.denominator),
            sourceIntervalNs: probe.nominalFrameIntervalNs)
        traceConfig += try CPUPlacementOption.apply(a, command: "live", to: &options.pipeline)
        let traceMaxMb = try a.double("trace-max-mb", default: 64, min: 0)!
        let traceKeep = try a.int("trace-keep", default: 4, range: 0...1_000_000)!
        let rotation =
            traceMaxMb > 0
            ? TraceWriter.Rotation(maxBytes: max(4096, Int(traceMaxMb * 1_048_576)), keepSegments: traceKeep) : nil
        if rotation != nil { traceConfig.append(("trace_max_mb", .double(traceMaxMb))) }
        let traceFile = try a.string("trace").map {
            try TraceWriter(path: $0, processName: "colorcam live", config: traceConfig, rotation: rotation)
        }
        let trace = MetricsTraceSink(forwardingTo: traceFile ?? NullTraceSink(), metrics: metrics, preview: preview)
        let record: FrameSink? = try a.string("output").map {
            try Y4MSink(
                path: $0,
                header: (probe as? Y4MSource)?.header
                    ?? Y4MHeader(geometry: probe.geometry, frameRate: probe.frameRate), writeTimestamps: true)
        }
        let virtualCamera = try V4L2OutputOption.open(
            a, command: "live", geometry: probe.geometry,
            framesPerSecond: fps.map { (Int(($0 * 1000).rounded()), 1000) } ?? probe.frameRate, trace: trace,
            clock: clock)
        let sink = TeeSink([preview] + (record.map { [$0] } ?? []) + (virtualCamera.map { [$0] } ?? []))
        probe = nil

        try server.start()
        Log.info("preview at http://\(listen)/ (metrics /metrics, health /healthz)")
        PreviewAccessOption.announce(access, bound: server.boundAddress ?? listen)
        if setup.simulator != nil { Log.warning("inference is a DIAGNOSTIC SIMULATION (\(modelLabel)), not a model") }

        let daemon = LiveDaemon(
            options: options, openSource: openSource, processor: setup.inference,
            sink: sink, trace: trace, server: server, clock: clock)
        let modelPath = a.string("model"), presetName = a.string("preset")
        let signals = DaemonSignals(
            stop: { daemon.requestStop() },
            reload: {
                guard let processor else {
                    Log.info("SIGHUP: no model to reload (\(modelLabel)); the stream continues")
                    return
                }
                do {
                    let path = try modelPath ?? ColorizeCommand.defaultModel()
                    let bundle = try ModelBundle.load(
                        path, preset: presetName.flatMap(ModelBundle.Preset.init(rawValue:)))
                    try processor.reload(bundle)
                    preview.setModel(bundle.name)
                    Log.info("SIGHUP: model reloaded from \(path) (\(bundle.name)); photos are re-colorized")
                } catch {
                    Log.error("SIGHUP: model not reloaded, the running one stays: \(error)")
                }
            })
        var result = Result { try daemon.run() }
        signals.cancel()
        if let processor, case .success = result {
            do { try processor.finish() } catch { result = .failure(error) }
        }
        server.stop()
        if let traceFile {
            let stats = try? result.get()
            try traceFile.close(
                atNs: clock.nowNs(),
                summary: RunSetup.traceSummary(stats, framesCaptured: -1)
                    + [("driver_gap_frames", .int(stats.map { $0.drops[.driverGap] ?? 0 } ?? -1))])
        }
        if let virtualCamera { Log.info(V4L2OutputOption.summary(virtualCamera)) }
        let stats = try result.get()
        Log.info("stopped: " + setup.summaryLine(stats))
        return 0
    }

    /// The preview's outlines: the photos the processor composited colour for in a frame.
    static func outlines(of processor: PhotoColorProcessor)
        -> @Sendable (FrameBuffer, UnsafeMutableBufferPointer<PreviewQuad>) -> Int
    {
        return { frame, out in
            var n = 0
            processor.forEachPhoto(in: frame) { id, q in
                guard n < out.count else { return }
                @inline(__always) func p(_ i: Int) -> PreviewPoint {
                    PreviewPoint(xPx: Float(q[i].x), yPx: Float(q[i].y))
                }
                out[n] = PreviewQuad(p(0), p(1), p(2), p(3), trackId: id)
                n += 1
            }
            return n
        }
    }
}

/// SIGINT/SIGTERM → stop, SIGHUP → reload (when given), delivered on a dispatch queue (never in a signal handler).
final class DaemonSignals: @unchecked Sendable {
    // Invariant: `sources` is written in init and cancel() only, on the main thread.
    private var sources: [DispatchSourceSignal] = []

    private let signals: [Int32]

    /// - Parameter stopNote: what stopping does, for the log line.
    init(
        stop: @escaping @Sendable () -> Void, reload: (@Sendable () -> Void)? = nil,
        stopNote: String = "finishing the in-flight inference, flushing outputs"
    ) {
        signals = reload == nil ? [SIGINT, SIGTERM] : [SIGINT, SIGTERM, SIGHUP]
        for sig in signals {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                if sig == SIGHUP {
                    reload?()
                } else {
                    Log.info("signal \(sig): stopping (\(stopNote))")
                    stop()
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources = []
        for sig in signals { signal(sig, SIG_DFL) }
    }
}

/// Hands the already-opened first source to the daemon once; later opens make a new one.
final class SourceHandOff: @unchecked Sendable {
    // Invariant: used from the daemon's run thread only.
    private var source: FrameSource?
    init(_ source: FrameSource) { self.source = source }
    func take() -> FrameSource? {
        defer { source = nil }
        return source
    }
}
