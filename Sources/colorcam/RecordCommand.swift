import ColorcamCore
import Stream
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam record`: captures from a V4L2 camera into a `.y4m` with per-frame capture timestamps.
enum RecordCommand {
    static let command = Command(
        name: "record", summary: "capture from a V4L2 camera into a .y4m (with capture timestamps)", help: help,
        run: { try run($0) })

    static let help = """
        usage: colorcam record [--device D] [--size WxH] [--fps N] (--frames N | --seconds S) OUT.y4m|-

        Captures from a V4L2 camera and writes YUV4MPEG2 with an 'Xts_us=<capture µs>' tag per frame (driver
        timestamps, µs since the start of the recording), which 'colorcam replay' paces by. YUYV-type cameras give
        4:2:2 files, NV12/YU12 4:2:0, GREY mono, RGB 4:4:4, MJPEG 4:2:2 (pixels kept exactly as the camera sent
        them, only re-arranged into planes). The file appears under OUT.y4m only when the recording ends; if the
        camera fails or vanishes mid-way, what was captured is kept and colorcam exits 69.

        options:
          --device D          device node (default /dev/video0)
          --size WxH          frame size to ask for (default 640x360; the driver may adjust it and colorcam says so)
          --fps N             frames per second to record (default 30). The device is set to the slowest rate it
                              offers that is at least N, and verified; if it runs faster, frames are decimated to N
                              (said once on stderr and in the trace).
          --format FOURCC     pixel format to ask for (e.g. YUYV, NV12, GREY, MJPG; default: the best offered)
          --device-fps N      run the device at N fps regardless of --fps (to test decimation)
          --buffers N         mmap buffers, 2..8 (default 3; each queued buffer is a frame of lag)
          --frames N          stop after N frames
          --seconds S         stop after S seconds of capture time
          --trace FILE.json   write 'capture' spans and 'driver_gap' / 'decode_error' drops (see TRACE-FORMAT.md)
          --on-write-error stop|continue
                              when writing OUT or the trace fails (e.g. No space left on device): stop (default) ends
                              the recording; continue abandons that file and records on. Either way exit 74 naming the
                              file; a failed OUT.y4m is removed, a failed trace kept truncated where the write failed.
                              After a crash or kill the frames are in .OUT.y4m.tmp-PID (header + whole frames, at
                              most one cut frame at the end; ffmpeg reads it), never removed automatically
          --quiet             no summary line on stderr

        exit codes: 0 done, 64 usage, 69 device missing, busy, refusing the format, or lost mid-way, 74 output failed
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(
            args, command: "record",
            valued: [
                "device", "size", "fps", "format", "device-fps", "buffers", "frames",
                "seconds", "trace", "on-write-error"
            ],
            boolean: ["quiet"])
        let out = try a.positionals(exactly: 1, usage: "record [options] (--frames N | --seconds S) OUT.y4m")[0]
        let device = a.string("device") ?? "/dev/video0"
        let (width, height) = try parseSize(a.string("size") ?? "640x360", command: "record")
        let fps = try a.double("fps", default: 30, min: 0.01)!
        let deviceFps = try a.double("device-fps", min: 0.01)
        let bufferCount = try a.int("buffers", default: 3, range: 2...8)!
        let frameLimit = try a.int("frames", range: 1...Int(Int32.max))
        let secondsLimit = try a.double("seconds", min: 0.001)
        guard (frameLimit == nil) != (secondsLimit == nil) else {
            throw UsageError("record: give exactly one of --frames N or --seconds S")
        }
        var format: V4L2PixelFormat?
        if let text = a.string("format") {
            guard
                let f = V4L2PixelFormat(
                    fourCC: text.count < 4
                        ? text.padding(
                            toLength: 4, withPad: " ",
                            startingAt: 0) : text)
            else {
                throw UsageError("record: --format wants a four-character code such as YUYV, got '\(text)'")
            }
            format = f
        }

        let writeErrorPolicy = WriteErrorPolicy(
            rawValue: try a.choice(
                "on-write-error", ["stop", "continue"],
                default: "stop"))!
        let clock = SystemClock()
        let source = try V4L2Source(
            path: device,
            request: V4L2CaptureRequest(
                widthPx: width, heightPx: height, pixelFormat: format, framesPerSecond: fps,
                deviceFramesPerSecond: deviceFps),
            clock: clock, bufferCount: bufferCount)
        defer { source.close() }
        let trace: TraceWriter? = try a.string("trace").map {
            try TraceWriter(path: $0, processName: "colorcam record", config: traceConfig(source))
        }
        // Created last, so a failure above leaves no temporary output behind.
        let sink = WriteErrorPolicySink(
            try Y4MSink(
                path: out, header: Y4MHeader(geometry: source.geometry, frameRate: source.frameRate),
                writeTimestamps: true),
            policy: writeErrorPolicy)
        let recorder = Recorder(source: source, sink: sink, trace: trace, clock: clock)
        trace?.setWriteErrorHandler { [stop = recorder.stopRequested] error in
            guard writeErrorPolicy == .stop else { return }
            sink.fail(error)  // the recording ends with this error (exit 74), the output not published
            stop.set()
        }
        let stopper = SignalStopper { [stop = recorder.stopRequested] in stop.set() }
        let result = Result { try recorder.run(frameLimit: frameLimit, secondsLimit: secondsLimit) }
        stopper.cancel()

        var firstError: Error?
        if case .failure(let error) = result { firstError = error }
        let deviceLost = (firstError as? StreamError)?.kind == .unavailable
        if firstError == nil || deviceLost {
            // A complete recording, or the prefix captured before the device failed: publish it.
            do { try sink.finish() } catch { firstError = firstError ?? error }
        } else {
            sink.abort()
        }
        if let trace {
            var summary: [(String, TraceValue)] = [
                ("frames_captured", .int(recorder.framesWritten)), ("frames_output", .int(recorder.framesWritten)),
                ("driver_gap_frames", .int(recorder.driverGapFrames)),
                ("decode_errors", .int(recorder.decodeErrors)), ("completed", .bool(firstError == nil))
            ]
            if let abandoned = sink.abandonment {
                summary += [
                    ("output_abandoned", .bool(true)), ("output_error", .string(abandoned.error.description)),
                    ("output_frames_written", .int(abandoned.framesWritten))
                ]
            }
            do { try trace.close(atNs: clock.nowNs(), summary: summary) } catch { firstError = firstError ?? error }
        }
        if let abandoned = sink.abandonment {
            printError("record: output abandoned after \(abandoned.framesWritten) frames (--on-write-error continue)")
            firstError = firstError ?? abandoned.error
        }
        if deviceLost && out != "-" {
            printError("record: kept the \(recorder.framesWritten) frames captured before the failure in \(out)")
        }
        if let firstError { throw firstError }
        if !a.flag("quiet") {
            var line = "record: \(recorder.framesWritten) frames \(source.geometry) from \(device)"
            line += " (\(source.configuration.pixelFormat)"
            if let dfps = source.deviceFramesPerSecond { line += ", device \(formatRate(dfps)) fps" }
            line +=
                ", delivered \(formatRate(Double(source.frameRate.numerator) / Double(source.frameRate.denominator))) fps"
            line += source.configuration.isDecimating || source.lastFrameInfo.isDecimating ? ", decimated" : ""
            line += "), driver gaps \(recorder.driverGapFrames), decode errors \(recorder.decodeErrors) → \(out)"
            printError(line)
        }
        return 0
    }

    static func traceConfig(_ source: V4L2Source) -> [(String, TraceValue)] {
        let delivered = Double(source.frameRate.numerator) / Double(source.frameRate.denominator)
        var config: [(String, TraceValue)] = [
            ("command", .string("record")), ("source", .string(source.name)), ("pace", .string("realtime")),
            ("source_fps", .double(delivered)), ("pixel_format", .string(source.configuration.pixelFormat.fourCC)),
            ("device_fps", .double(source.deviceFramesPerSecond ?? 0)),
            ("decimating", .bool(source.configuration.isDecimating)), ("simulated", .bool(false))
        ]
        if !source.notes.isEmpty { config.append(("notes", .string(source.notes.joined(separator: "; ")))) }
        return config
    }

    static func formatRate(_ fps: Double) -> String {
        fps == fps.rounded() ? String(Int(fps)) : format(fps, 2)
    }
}

/// The record loop: read a frame, trace it, write it.
///
/// Threading: `run` on the calling thread; `stopRequested` may be set from any thread (signal handler).
final class Recorder: @unchecked Sendable {
    // Invariant for @unchecked Sendable: only `stopRequested` (an Atomic) is touched from other threads;
    // everything else is used by the thread that calls `run`.
    let stopRequested = StopFlag()
    private let source: V4L2Source
    private let sink: FrameSink
    private let trace: TraceWriter?
    private let clock: SystemClock
    private(set) var framesWritten = 0
    private(set) var driverGapFrames = 0
    private(set) var decodeErrors = 0

    init(source: V4L2Source, sink: FrameSink, trace: TraceWriter?, clock: SystemClock) {
        self.source = source
        self.sink = sink
        self.trace = trace
        self.clock = clock
    }

    func run(frameLimit: Int?, secondsLimit: Double?) throws {
        let frame = FrameBuffer(geometry: source.geometry)
        let limitNs = secondsLimit.map { Int64($0 * 1e9) }
        var firstCaptureNs: Int64?
        var previousEndNs: Int64 = 0
        try source.start()
        while !stopRequested.isSet {
            if let frameLimit, framesWritten >= frameLimit { break }
            _ = try source.readFrame(into: frame)
            let endNs = clock.nowNs()
            let captureNs = frame.captureTimestampNs
            if firstCaptureNs == nil { firstCaptureNs = captureNs }
            if let limitNs, captureNs - firstCaptureNs! >= limitNs { break }
            let info = source.lastFrameInfo
            if let trace {
                for missing in 0..<info.skippedSequenceCount {
                    trace.record(
                        .drop(
                            frame: frame.sequence - info.skippedSequenceCount + missing,
                            reason: .driverGap, atNs: captureNs, track: .capture))
                }
                for _ in 0..<info.decodeErrorCount {
                    trace.record(.drop(frame: -1, reason: .decodeError, atNs: captureNs, track: .capture))
                }
                // Spans on one track must not overlap: start at the capture time or the previous span's end.
                var span = TraceEvent.span(
                    .capture, frame: frame.sequence, startNs: max(captureNs, previousEndNs),
                    endNs: max(endNs, previousEndNs))
                span.captureTsNs = captureNs
                trace.record(span)
            }
            previousEndNs = max(endNs, previousEndNs)
            driverGapFrames += info.skippedSequenceCount
            decodeErrors += info.decodeErrorCount
            try sink.write(frame)
            framesWritten += 1
        }
    }
}

/// A flag set from a signal handler thread and polled by the record loop.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
