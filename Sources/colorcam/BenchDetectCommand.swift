import ColorcamCore
import Detect
import Stream

/// `colorcam bench detect`: times detection + tracking per frame on a clip, one core, frames preloaded.
enum BenchDetectCommand {
    /// Registered as `bench`; only `bench detect` lives here (the lead merges it with the other `bench` targets).
    static let command = Command(
        name: "bench", summary: "benchmarks: 'bench detect INPUT.y4m' times detect + track per frame",
        help: help, run: { try run($0) })

    static let help = """
    usage: colorcam bench detect INPUT.y4m [--frames N] [--repeat R] [--json] [detector options as for detect]

    Loads up to N frames of INPUT (default 300) into memory, runs one untimed warm-up pass, then times
    PhotoDetector.detect + PhotoTracker.update on every frame R times (default 3) on the calling thread, and prints
    the per-frame p50 / p90 / p99 / max in milliseconds (with --json: one JSON object).
    """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        guard args.first == "detect" else {
            throw UsageError("usage: colorcam bench detect INPUT.y4m [options] (this build has only 'bench detect')")
        }
        let rest = args.dropFirst()
        let a = try Arguments(rest, command: "bench detect",
                              valued: ["frames", "repeat", "min-size", "min-aspect", "max-aspect",
                                       "quadrature-tolerance", "min-confidence", "max-observations"],
                              boolean: ["json"])
        let input = try a.positionals(exactly: 1, usage: "bench detect INPUT.y4m [--frames N] [--repeat R]")[0]
        let maxFrames = try a.int("frames", default: 300, range: 1...10_000)!
        let repeats = try a.int("repeat", default: 3, range: 1...1000)!
        let parameters = try DetectCommand.detectorParameters(a, command: "bench detect")
        let source = try Y4MSource(path: input)
        var frames: [FrameBuffer] = []
        while frames.count < maxFrames {
            let frame = FrameBuffer(geometry: source.geometry)
            guard try source.readFrame(into: frame) else { break }
            frames.append(frame)
        }
        guard !frames.isEmpty else { throw UsageError("bench detect: \(input) holds no frames") }
        let detector = PhotoDetector(geometry: source.geometry, parameters: parameters)
        let clock = SystemClock()
        var timesNs: [Int64] = []
        timesNs.reserveCapacity(frames.count * repeats)
        var detections = 0
        for pass in 0...repeats {
            let tracker = PhotoTracker()
            for (index, frame) in frames.enumerated() {
                let start = clock.nowNs()
                let observations = detector.detect(frame)
                let tracks = tracker.update(observations, timestampNs: Int64(index) * source.nominalFrameIntervalNs)
                let elapsed = clock.nowNs() - start
                if pass > 0 { timesNs.append(elapsed); detections += tracks.count }
            }
        }
        timesNs.sort()
        func percentileMs(_ q: Double) -> Double {
            let rank = min(timesNs.count - 1, max(0, Int((q * Double(timesNs.count)).rounded(.up)) - 1))
            return Double(timesNs[rank]) / 1e6
        }
        let p50 = percentileMs(0.5), p90 = percentileMs(0.9), p99 = percentileMs(0.99)
        let maxMs = Double(timesNs.last!) / 1e6
        let g = source.geometry
        if a.flag("json") {
            print("{\"frames\":\(frames.count),\"repeats\":\(repeats),\"width\":\(g.widthPx),\"height\":\(g.heightPx),"
                  + "\"p50_ms\":\(DetectCommand.number3(p50)),\"p90_ms\":\(DetectCommand.number3(p90)),"
                  + "\"p99_ms\":\(DetectCommand.number3(p99)),\"max_ms\":\(DetectCommand.number3(maxMs)),"
                  + "\"tracks_per_frame\":\(DetectCommand.number3(Double(detections) / Double(timesNs.count)))}")
        } else {
            print("bench detect: \(frames.count) frames \(g.widthPx)x\(g.heightPx) × \(repeats), detect + track per frame: "
                  + "p50 \(DetectCommand.number3(p50)) ms, p90 \(DetectCommand.number3(p90)) ms, "
                  + "p99 \(DetectCommand.number3(p99)) ms, max \(DetectCommand.number3(maxMs)) ms")
        }
        return 0
    }
}
