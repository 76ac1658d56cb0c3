import ColorcamCore
import Detect
import PhotoPipeline
import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam bench detect`: times detection + tracking per frame on a clip, one core, frames preloaded.
enum BenchDetectCommand {
    // Reached through `colorcam bench detect` (BenchCommand dispatches here).

    static let help = """
        usage: colorcam bench detect INPUT.y4m [--frames N] [--repeat R] [--full-detection-interval K] [--json]
                                     [detector options as for detect]

        Loads up to N frames of INPUT (default 300) into memory, runs one untimed warm-up pass, then times
        PhotoTrackingSession.process (detect + track; the full search every K-th frame, default 3, tracks re-found
        from their predicted corners in between; K = 1 searches every frame) on every frame R times (default 3) on the
        calling thread, and prints
        the per-frame p50 / p90 / p99 / max in milliseconds (with --json: one JSON object): wall-clock time, and the
        thread's CPU time (CLOCK_THREAD_CPUTIME_ID), which is the cost on one core even when other processes share it.
        The per-frame figures include the learned segmenter on full-search frames; with a detect model a second line
        (JSON: cnn_* fields) gives the segmenter's own time per run (grid input, engine run), each run with the close
        looks its frame took at small prints (cnn_close_looks: how many in all).
        \(DetectModelOptions.help)
        \(DetectModelOptions.closeLookHelp)
        """

    /// This thread's CPU time, nanoseconds.
    static func threadCPUNs() -> Int64 { SystemClock.threadCPUNs() }

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        guard args.first == "detect" else {
            throw UsageError("usage: colorcam bench detect INPUT.y4m [options] (this build has only 'bench detect')")
        }
        let rest = args.dropFirst()
        let a = try Arguments(
            rest, command: "bench detect",
            valued: Set([
                "frames", "repeat", "full-detection-interval", "min-size", "min-aspect",
                "max-aspect", "quadrature-tolerance", "min-confidence", "max-observations"
            ])
            .union(DetectModelOptions.valued),
            boolean: ["json", "no-close-look"])
        let input = try a.positionals(exactly: 1, usage: "bench detect INPUT.y4m [--frames N] [--repeat R]")[0]
        let maxFrames = try a.int("frames", default: 300, range: 1...10_000)!
        let repeats = try a.int("repeat", default: 3, range: 1...1000)!
        let parameters = try DetectCommand.detectorParameters(a, command: "bench detect")
        let (model, mode) = try DetectModelOptions.resolve(a, command: "bench detect")
        let source = try Y4MSource(path: input)
        var frames: [FrameBuffer] = []
        while frames.count < maxFrames {
            let frame = FrameBuffer(geometry: source.geometry)
            guard try source.readFrame(into: frame) else { break }
            frames.append(frame)
        }
        guard !frames.isEmpty else { throw UsageError("bench detect: \(input) holds no frames") }
        let interval = try a.int("full-detection-interval", default: 3, range: 1...1000)!
        let clock = SystemClock()
        var timesNs: [Int64] = [], cpuNs: [Int64] = []
        timesNs.reserveCapacity(frames.count * repeats)
        cpuNs.reserveCapacity(frames.count * repeats)
        var detections = 0
        // One segmenter for every pass's session (they run one after another), timed on its own.
        let segmenter = try DetectModelOptions.segmenter(
            model, geometry: source.geometry, closeLooks: !a.flag("no-close-look")
        )
        .map { TimedSegmenter($0, capacity: frames.count * repeats) }
        for pass in 0...repeats {
            segmenter?.recording = pass > 0
            let session = PhotoTrackingSession(
                geometry: source.geometry, parameters: parameters,
                fullDetectionInterval: interval, segmenter: segmenter,
                detectorMode: mode)
            for (index, frame) in frames.enumerated() {
                let start = clock.nowNs(), cpuStart = threadCPUNs()
                let tracks = session.process(frame, timestampNs: Int64(index) * source.nominalFrameIntervalNs)
                let elapsed = clock.nowNs() - start, cpu = threadCPUNs() - cpuStart
                if pass > 0 { timesNs.append(elapsed); cpuNs.append(cpu); detections += tracks.count }
            }
        }
        segmenter?.flushCloseLooks()
        timesNs.sort()
        cpuNs.sort()
        func percentileMs(_ q: Double, _ values: [Int64]) -> Double {
            let rank = min(values.count - 1, max(0, Int((q * Double(values.count)).rounded(.up)) - 1))
            return Double(values[rank]) / 1e6
        }
        let p50 = percentileMs(0.5, timesNs), p90 = percentileMs(0.9, timesNs), p99 = percentileMs(0.99, timesNs)
        let maxMs = Double(timesNs.last!) / 1e6
        let cpu50 = percentileMs(0.5, cpuNs), cpu90 = percentileMs(0.9, cpuNs)
        let cpuMean = Double(cpuNs.reduce(0, +)) / Double(cpuNs.count) / 1e6
        let g = source.geometry
        if a.flag("json") {
            print(
                "{\"frames\":\(frames.count),\"repeats\":\(repeats),\"width\":\(g.widthPx),\"height\":\(g.heightPx),"
                    + "\"p50_ms\":\(DetectCommand.number3(p50)),\"p90_ms\":\(DetectCommand.number3(p90)),"
                    + "\"p99_ms\":\(DetectCommand.number3(p99)),\"max_ms\":\(DetectCommand.number3(maxMs)),"
                    + "\"cpu_p50_ms\":\(DetectCommand.number3(cpu50)),\"cpu_p90_ms\":\(DetectCommand.number3(cpu90)),"
                    + "\"cpu_mean_ms\":\(DetectCommand.number3(cpuMean)),"
                    + "\"tracks_per_frame\":\(DetectCommand.number3(Double(detections) / Double(timesNs.count)))"
                    + (segmenter.map { s in
                        ",\"cnn_runs\":\(s.wallNs.count),\"cnn_p50_ms\":\(DetectCommand.number3(s.p50Ms(s.wallNs))),"
                            + "\"cnn_cpu_p50_ms\":\(DetectCommand.number3(s.p50Ms(s.cpuNs))),\"cnn_close_looks\":\(s.closeLooks)"
                    } ?? "") + "}")
        } else {
            print(
                "bench detect: \(frames.count) frames \(g.widthPx)x\(g.heightPx) × \(repeats), detect + track per frame: "
                    + "p50 \(DetectCommand.number3(p50)) ms, p90 \(DetectCommand.number3(p90)) ms, "
                    + "p99 \(DetectCommand.number3(p99)) ms, max \(DetectCommand.number3(maxMs)) ms; "
                    + "thread CPU p50 \(DetectCommand.number3(cpu50)) ms, p90 \(DetectCommand.number3(cpu90)) ms, mean \(DetectCommand.number3(cpuMean)) ms"
            )
            if let segmenter, let model {
                print(
                    "bench detect: detector \(mode), segmenter \(model.modelPath) on \(segmenter.grid): "
                        + "\(segmenter.wallNs.count) runs, p50 \(DetectCommand.number3(segmenter.p50Ms(segmenter.wallNs))) ms, "
                        + "thread CPU p50 \(DetectCommand.number3(segmenter.p50Ms(segmenter.cpuNs))) ms "
                        + "(each run with the close looks of its frame: \(segmenter.closeLooks) in all)")
            }
        }
        return 0
    }
}

/// Times each `segment` call of the segmenter it wraps (bench detect's CNN figure): wall and thread CPU time, kept
/// while `recording`. One thread; the lists are reserved for `capacity` calls (no allocation while timing).
final class TimedSegmenter: PrintSegmenter {
    let inner: PrintSegmenter
    var recording = false
    private(set) var wallNs: [Int64] = []
    private(set) var cpuNs: [Int64] = []
    private let clock = SystemClock()

    init(_ inner: PrintSegmenter, capacity: Int) {
        self.inner = inner
        wallNs.reserveCapacity(capacity)
        cpuNs.reserveCapacity(capacity)
    }

    var grid: SegmentationGrid { inner.grid }
    var closeLookGrid: SegmentationGrid? { inner.closeLookGrid }
    /// Close looks taken while recording, and their share of the times (a frame's close looks are added to its
    /// `segment` call's time).
    private(set) var closeLooks = 0
    private var closeWallNs: Int64 = 0
    private var closeCPUNs: Int64 = 0

    func segment(_ frame: FrameBuffer) -> SegmentationMaps {
        flushCloseLooks()
        let start = clock.nowNs(), cpuStart = SystemClock.threadCPUNs()
        let maps = inner.segment(frame)
        if recording {
            wallNs.append(clock.nowNs() - start)
            cpuNs.append(SystemClock.threadCPUNs() - cpuStart)
        }
        return maps
    }

    func segment(_ frame: FrameBuffer, windowOriginXPx: Int, windowOriginYPx: Int) -> SegmentationMaps {
        let start = clock.nowNs(), cpuStart = SystemClock.threadCPUNs()
        let maps = inner.segment(frame, windowOriginXPx: windowOriginXPx, windowOriginYPx: windowOriginYPx)
        if recording, !wallNs.isEmpty {
            closeLooks += 1
            closeWallNs += clock.nowNs() - start
            closeCPUNs += SystemClock.threadCPUNs() - cpuStart
        }
        return maps
    }

    /// Adds the close looks since the last `segment(_:)` to that call's times (before the next one, or the report).
    func flushCloseLooks() {
        guard !wallNs.isEmpty else { return }
        wallNs[wallNs.count - 1] += closeWallNs
        cpuNs[cpuNs.count - 1] += closeCPUNs
        closeWallNs = 0
        closeCPUNs = 0
    }

    /// The median of `values`, milliseconds (0 when empty).
    func p50Ms(_ values: [Int64]) -> Double {
        guard !values.isEmpty else { return 0 }
        return Double(values.sorted()[(values.count - 1) / 2]) / 1e6
    }
}
