import ColorcamCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Latency statistics of repeated runs of one prepared engine.
public struct InferBenchmarkResult: Sendable {
    public var runs: Int
    public var p50Ms: Double
    public var p95Ms: Double
    public var minMs: Double
    /// Median CPU time of the calling thread per run (with 1 OpenBLAS thread, all the work; robust to other load).
    public var cpuP50Ms: Double
    /// FLOPs per run / p50 latency, in GFLOP/s.
    public var gflopsPerSecond: Double
}

extension InferenceEngine {
    /// Runs the engine `warmup + runs` times on `input` and reports latency percentiles.
    ///
    /// Allocates its buffers once up front; the timed loop allocates nothing. Blocks the calling thread.
    public func benchmark(input: [Float], runs: Int, warmup: Int = 1) -> InferBenchmarkResult {
        var output = [Float](repeating: 0, count: outputCount)
        var samplesMs = [Double](repeating: 0, count: max(1, runs))
        var cpuMs = [Double](repeating: 0, count: max(1, runs))
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                for _ in 0..<warmup { run(input: i, output: o) }
                for r in 0..<max(1, runs) {
                    let t0 = SystemClock.rawNs(), c0 = threadCPUNs()
                    run(input: i, output: o)
                    samplesMs[r] = Double(SystemClock.rawNs() - t0) / 1e6
                    cpuMs[r] = Double(threadCPUNs() - c0) / 1e6
                }
            }
        }
        let sorted = samplesMs.sorted()
        func pct(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))] }
        let p50 = pct(0.5)
        return InferBenchmarkResult(
            runs: sorted.count, p50Ms: p50, p95Ms: pct(0.95), minMs: sorted[0],
            cpuP50Ms: cpuMs.sorted()[cpuMs.count / 2],
            gflopsPerSecond: flops / (p50 / 1e3) / 1e9)
    }
}

/// Time per step label (e.g. `Conv 3x3`), summed over steps, per run.
public struct InferProfileRow: Sendable {
    public var label: String
    public var msPerRun: Double
    public var gflop: Double
    public var gflopsPerSecond: Double { msPerRun > 0 ? gflop / (msPerRun / 1e3) : 0 }
}

extension InferenceEngine {
    /// Runs `runs` profiled runs (after one warm-up) and returns per-label rows, slowest first.
    /// With `perStep`, one row per step (labelled with its shapes and the kernel chosen for it at load time, e.g.
    /// `[ConvWinograd]`) instead of one per op kind.
    public func profile(input: [Float], runs: Int, perStep: Bool = false) -> [InferProfileRow] {
        var output = [Float](repeating: 0, count: outputCount)
        var stepNs = [Int64](repeating: 0, count: stepCount)
        input.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                run(input: i, output: o)
                stepNs.withUnsafeMutableBufferPointer { s in
                    for _ in 0..<max(1, runs) { runProfiled(input: i, output: o, stepNs: s) }
                }
            }
        }
        var rows: [String: InferProfileRow] = [:]
        if perStep {
            let names = kernelTypeNames
            return stepSummary.enumerated().map { i, step in
                let kernel = names[i].hasSuffix("Kernel") ? String(names[i].dropLast(6)) : names[i]
                return InferProfileRow(
                    label: "\(i) \(step.label) \(stepShapes[i]) [\(kernel)]",
                    msPerRun: Double(stepNs[i]) / 1e6 / Double(max(1, runs)),
                    gflop: step.flops / 1e9)
            }
        }
        for (i, step) in stepSummary.enumerated() {
            rows[step.label, default: InferProfileRow(label: step.label, msPerRun: 0, gflop: 0)].msPerRun +=
                Double(stepNs[i]) / 1e6 / Double(max(1, runs))
            rows[step.label]!.gflop += step.flops / 1e9
        }
        return rows.values.sorted { $0.msPerRun > $1.msPerRun }
    }
}

/// Square-ish sgemm throughput of the loaded OpenBLAS, the peak the conv kernels are measured against.
public enum SgemmBenchmark {
    /// Best GFLOP/s over `runs` row-major sgemms of M×K by K×N (allocates its matrices once). Timed in CPU time
    /// of the calling thread when OpenBLAS runs one thread (like the conv profile), else in wall-clock time.
    public static func gflops(m: Int, n: Int, k: Int, runs: Int) throws -> Double {
        let blas = try OpenBLAS.shared()
        let a = [Float](repeating: 0.5, count: m * k), b = [Float](repeating: 0.25, count: k * n)
        var c = [Float](repeating: 0, count: m * n)
        var best = Double.infinity
        for _ in 0..<(runs + 1) {
            let clock = blas.threads == 1 ? threadCPUNs : monotonicNs
            let t0 = clock()
            blas.sgemm(
                transA: false, transB: false, m: m, n: n, k: k, alpha: 1, a: a, lda: k, b: b, ldb: n,
                beta: 0, c: &c, ldc: n)
            best = min(best, Double(clock() - t0))
        }
        return 2 * Double(m) * Double(n) * Double(k) / best
    }
}

/// Raw little-endian float32 files (the conformance suite's tensor exchange format, no header).
public enum RawFloatFile {
    /// Reads exactly `count` floats. Throws `.missingInput` if unreadable, `.badData` if the size differs.
    public static func read(_ path: String, count: Int) throws -> [Float] {
        let bytes = try readWholeFile(path, what: "file")
        guard bytes.count == count * 4 else {
            throw InferError(
                .badData, file: path, "has \(bytes.count) bytes, the input needs \(count * 4) (\(count) float32)")
        }
        return bytes.withUnsafeBytes { b in
            (0..<count).map { Float(bitPattern: b.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)) }
        }
    }

    /// Writes the floats; throws `.ioError` on failure.
    public static func write(_ values: [Float], to path: String) throws {
        guard let f = fopen(path, "wb") else { throw InferError(.ioError, file: path, "cannot create the file") }
        defer { fclose(f) }
        let n = values.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
        guard n == values.count * 4 else { throw InferError(.ioError, file: path, "short write") }
    }
}

/// Where colorcam looks for model files, in order.
public enum ModelSearchPath {
    public static func directories() -> [String] {
        var dirs: [String] = []
        if let env = getenv("COLORCAM_MODELS") { dirs += String(cString: env).split(separator: ":").map(String.init) }
        if let home = getenv("HOME") { dirs.append(String(cString: home) + "/.local/share/colorcam/models") }
        dirs += ["/usr/local/share/colorcam/models", "/usr/share/colorcam/models", "./models"]
        // Beside an installed binary (PREFIX/bin → PREFIX/share), and the source tree of a built one
        // (.build/<triple>/release/colorcam → Models/).
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let dir = FilePath.directory(of: exe)
            dirs += [dir + "/../share/colorcam/models", dir + "/../../../Models"]
        }
        return dirs
    }
}
