import ColorcamCore
import Infer
import Remote

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam bench infer MODEL.onnx`: prepares the model and reports p50/p95 latency and GFLOP/s.
enum BenchCommand {
    static let help = """
        usage: colorcam bench infer MODEL.onnx [--size 256] [--shape NxCxHxW] [--threads N] [--runs N]
                                               [--mode fast|reference] [--profile [--steps]] [--input IN.f32 --output OUT.f32]
                                               [--feed NAME=VALUES.f32 …]
                                               [--infer-url http://HOST:PORT/v2/models/NAME [--infer-timeout-ms N]
                                                [--infer-encoding binary|json]]
               colorcam bench sgemm [--size 1024] [--threads N] [--runs N]
               colorcam bench lab [--runs N] | --mode rgb2lab|lab2rgb|rgb8-roundtrip --input IN.f32 --output OUT.f32

        Prepares MODEL for one input (--shape, or the model's declared shape with H and W set to --size) and times
        --runs runs (default 20) after one warm-up run on --threads OpenBLAS threads (default 1).
        With --input, runs once on that raw little-endian float32 file and writes the result to --output
        (the conformance suite's interface); --feed sets a further input of the graph (an optional one, with an
        initialiser, or one of static shape: a colorizer's hints) from a raw float32 file, once per input.
        --profile adds time and GFLOP/s per op kind (e.g. `Conv 3x3`, `Conv 3x3 F(2x2,3x3)` for the Winograd conv,
        whose GFLOP/s count direct-conv FLOPs); --steps makes it one row per step, with the kernel chosen for it.
        With --infer-url the same model runs on that Open Inference Protocol v2 server (its metadata checked against
        MODEL): --input/--output run it there once; otherwise its round trip is timed beside the local engine and the
        largest difference between the two outputs is printed.
        `bench sgemm` prints OpenBLAS's sgemm GFLOP/s on square matrices (the peak the convs are compared with).
        """

    static let command = Command(
        name: "bench", summary: "benchmarks: inference engine, sgemm, detect + track",
        help: help + "\n" + BenchDetectCommand.help + "\n" + BenchCompositeCommand.help,
        run: run)

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        if args.first == "detect" { return try BenchDetectCommand.run(args) }
        if args.first != "composite" && !args.contains("--help") { try CPUSupport.requireInference("bench") }
        if args.first == "composite" { return try BenchCompositeCommand.run(args) }
        let a = try Arguments(
            args, command: "bench",
            valued: [
                "size", "shape", "threads", "runs", "mode", "input", "output", "infer-url",
                "infer-timeout-ms", "infer-encoding", "feed"
            ],
            boolean: ["profile", "steps"])
        if a.positionals == ["lab"] { return try BenchLab.run(a) }
        if a.positionals == ["sgemm"] {
            let size = try a.int("size", default: 1024, range: 16...8192)!
            let blas = try OpenBLAS.shared()
            blas.setThreads(try a.int("threads", default: 1, range: 1...256)!)
            let gflops = try SgemmBenchmark.gflops(
                m: size, n: size, k: size, runs: try a.int("runs", default: 5, range: 1...1000)!)
            print(
                "sgemm \(size)x\(size)x\(size): \(fmt(gflops)) GFLOP/s (core \(blas.coreName), threads \(blas.threads))"
            )
            return 0
        }
        let positionals = try a.positionals(exactly: 2, usage: "bench infer MODEL.onnx [options]")
        guard positionals[0] == "infer" else {
            throw UsageError("bench: unknown benchmark '\(positionals[0])' (try 'infer')")
        }
        let path = positionals[1]
        let threads = try a.int("threads", default: 1, range: 1...256)!
        let runs = try a.int("runs", default: 20, range: 1...100_000)!
        let mode = EngineMode(rawValue: try a.choice("mode", ["fast", "reference"], default: "fast"))!
        var shape: [Int]?
        if let text = a.string("shape") {
            let dims = text.split(separator: "x").map { Int($0) }
            guard !dims.isEmpty, dims.allSatisfy({ ($0 ?? 0) >= 1 }) else {
                throw UsageError("bench: --shape wants dims like 1x3x17x31, got '\(text)'")
            }
            shape = dims.map { $0! }
        }
        let blas = try OpenBLAS.shared()
        blas.setThreads(threads)
        if shape == nil, let size = try a.int("size", range: 1...8192) {
            let bytes = try readWholeFile(path, what: "model file")
            let model = try ONNXModel.decode(bytes, file: path)
            let declared = model.graph.inputs.first { input in
                !model.graph.initializers.contains { $0.name == input.name }
            }
            var dims = (declared?.dims ?? [1, 1, nil, nil]).map { $0 ?? 1 }
            if dims.count >= 2 { dims[dims.count - 2] = size; dims[dims.count - 1] = size }
            shape = dims
        }
        var feeds: [(name: String, file: String)] = []
        for text in a.strings("feed") {
            guard let eq = text.firstIndex(of: "="), eq != text.startIndex, text.index(after: eq) != text.endIndex
            else {
                throw UsageError("bench: --feed wants NAME=VALUES.f32, got '\(text)'")
            }
            feeds.append((String(text[..<eq]), String(text[text.index(after: eq)...])))
        }
        let engine = try InferenceEngine(path: path, inputShape: shape, mode: mode, feeding: feeds.map(\.name))
        for (name, file) in feeds {
            let values = try RawFloatFile.read(file, count: engine.fedInput(name)!.count)
            _ = engine.fedInput(name)!.update(fromContentsOf: values)
        }
        var remote: RemoteModel?
        if let text = a.string("infer-url") {
            guard feeds.isEmpty else {
                throw UsageError("bench: --feed runs on the local engine only, not with --infer-url")
            }
            let encoding = try a.choice("infer-encoding", ["binary", "json"], default: "binary")
            remote = try RemoteModel(
                url: try InferenceURL(text), matching: engine,
                timeoutMs: try a.int("infer-timeout-ms", default: 5000, range: 10...600_000)!,
                encoding: RemoteModel.TensorEncoding(rawValue: encoding)!)
        } else if let other = ["infer-timeout-ms", "infer-encoding"].first(where: { a.string($0) != nil }) {
            throw UsageError("bench: --\(other) needs --infer-url")
        }
        if let inputPath = a.string("input") {
            guard let outputPath = a.string("output") else { throw UsageError("bench: --input needs --output") }
            let input = try RawFloatFile.read(inputPath, count: engine.inputCount)
            if let remote {
                var output = [Float](repeating: 0, count: engine.outputCount)
                let outcome = input.withUnsafeBufferPointer { i in
                    output.withUnsafeMutableBufferPointer { o in remote.runModel(input: i, output: o) }
                }
                guard outcome.succeeded else { throw ModelRunFailed(reason: outcome.failure) }
                try RawFloatFile.write(output, to: outputPath)
            } else {
                let output = engine.run(Tensor(shape: engine.inputShape, data: input))
                try RawFloatFile.write(output.data, to: outputPath)
            }
            return 0
        }
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let input = (0..<engine.inputCount).map { _ -> Float in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(seed >> 40) / Float(1 << 24)
        }
        let result = engine.benchmark(input: input, runs: runs)
        let shapeText = engine.inputShape.map(String.init).joined(separator: "x")
        print("model      \(path)")
        print(
            "input      \(shapeText) → \(engine.outputShape.map(String.init).joined(separator: "x")), mode \(mode.rawValue), \(engine.stepCount) steps"
        )
        print("openblas   core \(blas.coreName), threads \(blas.threads)")
        print(
            "kernels    \(engine.instructionSet.rawValue) (\((try? InstructionSetChoice.forProcess().reason) ?? "?"))")
        print("work       \(fmt(engine.flops / 1e9)) GFLOP per run (multiply-add = 2 FLOP)")
        print(
            "latency    p50 \(fmt(result.p50Ms)) ms, p95 \(fmt(result.p95Ms)) ms, min \(fmt(result.minMs)) ms over \(result.runs) runs; cpu p50 \(fmt(result.cpuP50Ms)) ms"
        )
        print("throughput \(fmt(result.gflopsPerSecond)) GFLOP/s at p50")
        if let remote { try printRemote(remote, engine: engine, input: input, runs: runs) }
        if a.flag("profile") {
            print("profile    per run, by op kind:")
            for row in engine.profile(input: input, runs: runs, perStep: a.flag("steps")) {
                let label = row.label.padding(16)
                print("  \(label)\(fmt(row.msPerRun)) ms  \(fmt(row.gflop)) GFLOP  \(fmt(row.gflopsPerSecond)) GFLOP/s")
            }
        }
        return 0
    }

    /// Times `runs` round trips to the server (after one warm-up) and compares its output with the local engine's.
    static func printRemote(_ remote: RemoteModel, engine: InferenceEngine, input: [Float], runs: Int) throws {
        var local = [Float](repeating: 0, count: engine.outputCount)
        var served = local
        input.withUnsafeBufferPointer { i in local.withUnsafeMutableBufferPointer { engine.run(input: i, output: $0) } }
        var totalsMs: [Double] = [], waitsMs: [Double] = []
        for run in 0...runs {
            let startNs = SystemClock.rawNs()
            let outcome = input.withUnsafeBufferPointer { i in
                served.withUnsafeMutableBufferPointer { remote.runModel(input: i, output: $0) }
            }
            guard outcome.succeeded else { throw ModelRunFailed(reason: outcome.failure) }
            if run > 0 {
                totalsMs.append(Double(SystemClock.rawNs() - startNs) / 1e6)
                waitsMs.append(Double(outcome.waitNs) / 1e6)
            }
        }
        totalsMs.sort()
        waitsMs.sort()
        let maxDiff = zip(local, served).map { abs($0 - $1) }.max() ?? 0
        let scale = local.map(abs).max() ?? 0
        print(
            "remote     \(remote.url): round trip p50 \(fmt(totalsMs[totalsMs.count / 2])) ms, "
                + "p95 \(fmt(totalsMs[min(totalsMs.count - 1, totalsMs.count * 95 / 100)])) ms "
                + "(wait for the answer p50 \(fmt(waitsMs[waitsMs.count / 2])) ms) over \(runs) runs")
        print("agreement  max |remote - local| \(maxDiff) over \(local.count) outputs (largest |local| \(scale))")
    }

    static func fmt(_ v: Double) -> String {
        guard v.isFinite else { return "-" }
        let scaled = (v * 100).rounded() / 100
        return String(scaled)
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(1, width - count)) }
}
