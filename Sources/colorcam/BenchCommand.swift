#if canImport(Glibc)
import Glibc
#endif
import ColorcamCore
import Infer

/// `colorcam bench infer MODEL.onnx`: prepares the model and reports p50/p95 latency and GFLOP/s.
enum BenchCommand {
    static let help = """
    usage: colorcam bench infer MODEL.onnx [--size 256] [--shape NxCxHxW] [--threads N] [--runs N]
                                           [--mode fast|reference] [--profile [--steps]] [--input IN.f32 --output OUT.f32]
           colorcam bench sgemm [--size 1024] [--threads N] [--runs N]
           colorcam bench lab [--runs N] | --mode rgb2lab|lab2rgb|rgb8-roundtrip --input IN.f32 --output OUT.f32

    Prepares MODEL for one input (--shape, or the model's declared shape with H and W set to --size) and times
    --runs runs (default 20) after one warm-up run on --threads OpenBLAS threads (default 1).
    With --input, runs once on that raw little-endian float32 file and writes the result to --output
    (the conformance suite's interface). --profile adds time and GFLOP/s per op kind (e.g. `Conv 3x3`).
    `bench sgemm` prints OpenBLAS's sgemm GFLOP/s on square matrices (the peak the convs are compared with).
    """

    static let command = Command(name: "bench", summary: "benchmarks: inference engine, sgemm, detect + track",
                                 help: help + "\n" + BenchDetectCommand.help + "\n" + BenchCompositeCommand.help,
                                 run: run)

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        if args.first == "detect" { return try BenchDetectCommand.run(args) }
        if args.first != "composite" && !args.contains("--help") { try CPUSupport.requireInference("bench") }
        if args.first == "composite" { return try BenchCompositeCommand.run(args) }
        let a = try Arguments(args, command: "bench",
                              valued: ["size", "shape", "threads", "runs", "mode", "input", "output"],
                              boolean: ["profile", "steps"])
        if a.positionals == ["lab"] { return try BenchLab.run(a) }
        if a.positionals == ["sgemm"] {
            let size = try a.int("size", default: 1024, range: 16...8192)!
            let blas = try OpenBLAS.shared()
            blas.setThreads(try a.int("threads", default: 1, range: 1...256)!)
            let gflops = try SgemmBenchmark.gflops(m: size, n: size, k: size, runs: try a.int("runs", default: 5, range: 1...1000)!)
            print("sgemm \(size)x\(size)x\(size): \(fmt(gflops)) GFLOP/s (core \(blas.coreName), threads \(blas.threads))")
            return 0
        }
        let positionals = try a.positionals(exactly: 2, usage: "bench infer MODEL.onnx [options]")
        guard positionals[0] == "infer" else { throw UsageError("bench: unknown benchmark '\(positionals[0])' (try 'infer')") }
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
            guard let bytes = readBinaryFile(path) else { throw InferError(.missingInput, file: path, "cannot read the model file") }
            let model = try ONNXModel.decode(bytes, file: path)
            let declared = model.graph.inputs.first { input in !model.graph.initializers.contains { $0.name == input.name } }
            var dims = (declared?.dims ?? [1, 1, nil, nil]).map { $0 ?? 1 }
            if dims.count >= 2 { dims[dims.count - 2] = size; dims[dims.count - 1] = size }
            shape = dims
        }
        let engine = try InferenceEngine(path: path, inputShape: shape, mode: mode)
        if let inputPath = a.string("input") {
            guard let outputPath = a.string("output") else { throw UsageError("bench: --input needs --output") }
            let input = try RawFloatFile.read(inputPath, count: engine.inputCount)
            let output = engine.run(Tensor(shape: engine.inputShape, data: input))
            try RawFloatFile.write(output.data, to: outputPath)
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
        print("input      \(shapeText) → \(engine.outputShape.map(String.init).joined(separator: "x")), mode \(mode.rawValue), \(engine.stepCount) steps")
        print("openblas   core \(blas.coreName), threads \(blas.threads)")
        print("work       \(fmt(engine.flops / 1e9)) GFLOP per run (multiply-add = 2 FLOP)")
        print("latency    p50 \(fmt(result.p50Ms)) ms, p95 \(fmt(result.p95Ms)) ms, min \(fmt(result.minMs)) ms over \(result.runs) runs; cpu p50 \(fmt(result.cpuP50Ms)) ms")
        print("throughput \(fmt(result.gflopsPerSecond)) GFLOP/s at p50")
        if a.flag("profile") {
            print("profile    per run, by op kind:")
            for row in engine.profile(input: input, runs: runs, perStep: a.flag("steps")) {
                let label = row.label.padding(16)
                print("  \(label)\(fmt(row.msPerRun)) ms  \(fmt(row.gflop)) GFLOP  \(fmt(row.gflopsPerSecond)) GFLOP/s")
            }
        }
        return 0
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
