import ColorcamCore
import PhotoPipeline

/// `colorcam bench composite`: the per-frame cost of compositing cached colours (the output thread's work).
enum BenchCompositeCommand {
    static let help = """
        usage: colorcam bench composite [--photos N] [--runs N]

        Times the output thread's colour compositing on a 640x480 4:2:0 frame with N prints of about 190x175 px (photo-like shading)
        (default 3; ab from a 256x256 grid; live L* kept per pixel): thread CPU and wall time per frame, p50/p95, and a
        checksum of the composited frame.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args.dropFirst(), command: "bench composite", valued: ["photos", "runs"], boolean: [])
        _ = try a.positionals(exactly: 0, usage: "bench composite [--photos N] [--runs N]")
        let photos = try a.int("photos", default: 3, range: 1...6)!
        let runs = try a.int("runs", default: 50, range: 1...100_000)!
        let r = CompositeBenchmark.run(photos: photos, runs: runs)
        func pct(_ v: [Double], _ p: Double) -> Double { v.sorted()[min(v.count - 1, Int(Double(v.count) * p))] }
        print("composite \(photos) photos (\(r.photoPixels) px) on 640x480, \(runs) runs:")
        print(
            "  thread CPU  p50 \(format(pct(r.cpuMsPerFrame, 0.5), 2)) ms  p95 \(format(pct(r.cpuMsPerFrame, 0.95), 2)) ms"
                + "  (\(format(pct(r.cpuMsPerFrame, 0.5) * 1e6 / Double(r.photoPixels), 1)) ns per photo pixel)")
        print(
            "  wall        p50 \(format(pct(r.wallMsPerFrame, 0.5), 2)) ms  p95 \(format(pct(r.wallMsPerFrame, 0.95), 2)) ms"
        )
        print("  output      FNV-1a \(String(r.outputChecksum, radix: 16)) (equal across builds that composite alike)")
        return 0
    }
}
