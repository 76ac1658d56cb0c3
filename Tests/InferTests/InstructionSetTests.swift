import ColorcamCore
import Foundation
import Testing

@testable import Infer

/// Runtime kernel dispatch: which instruction set the CPU flags choose, what `COLORCAM_ISA` may override, and that
/// every set this CPU runs computes what the reference loops compute.
@Suite struct InstructionSetTests {
    static let avx2Flags: Set<String> = ["sse2", "avx", "avx2", "fma"]
    static let avx512Flags = avx2Flags.union(["avx512f", "avx512bw", "avx512vl", "avx512dq"])

    @Test func theFastestSetTheFlagsAllowIsChosen() throws {
        #expect(try InstructionSetChoice.choose(override: nil, flags: Self.avx512Flags).set == .avx512)
        #expect(try InstructionSetChoice.choose(override: nil, flags: Self.avx2Flags).set == .avx2)
        // AVX-512 F alone (no BW/VL/DQ) is not enough for the AVX-512 build; AVX2 without FMA is not AVX2 here.
        #expect(try InstructionSetChoice.choose(override: nil, flags: Self.avx2Flags.union(["avx512f"])).set == .avx2)
        #expect(try InstructionSetChoice.choose(override: nil, flags: ["sse2", "avx", "avx2"]).set == .baseline)
        let old = try InstructionSetChoice.choose(override: nil, flags: ["sse2", "sse3"])
        #expect(old.set == .baseline)
        #expect(old.reason.contains("neither AVX2+FMA nor AVX-512"), "\(old.reason)")
        #expect(try InstructionSetChoice.choose(override: "", flags: Self.avx2Flags).set == .avx2)
    }

    @Test func theOverrideCanPickAnySlowerSet() throws {
        for set in InstructionSet.allCases {
            let choice = try InstructionSetChoice.choose(override: set.rawValue, flags: Self.avx512Flags)
            #expect(choice.set == set)
            #expect(choice.reason.contains("COLORCAM_ISA=\(set.rawValue)"))
        }
        #expect(try InstructionSetChoice.choose(override: "AVX2", flags: Self.avx2Flags).set == .avx2)
    }

    @Test func anUnknownOrUnsupportedOverrideIsAnErrorNotACrash() {
        do {
            _ = try InstructionSetChoice.choose(override: "avx9", flags: Self.avx512Flags)
            Issue.record("avx9 was accepted")
        } catch {
            #expect(error.kind == .usage)
            #expect(error.description.contains("COLORCAM_ISA") && error.description.contains("'avx9'"))
        }
        do {
            _ = try InstructionSetChoice.choose(override: "avx512", flags: Self.avx2Flags)
            Issue.record("avx512 was accepted on an AVX2 CPU")
        } catch {
            #expect(error.kind == .unavailable)
            #expect(error.description.contains("avx512f, avx512bw, avx512vl, avx512dq"), "\(error.description)")
        }
    }

    @Test func eachSetHasItsVectorWidth() {
        #expect(InstructionSet.baseline.kernels.vectorFloats == 4)
        #expect(InstructionSet.avx2.kernels.vectorFloats == 8)
        #expect(InstructionSet.avx512.kernels.vectorFloats == 16)
        for set in InstructionSet.allCases {
            #expect(set.kernels.name == set.rawValue)
            #expect(set.kernels.tiledConvColumns == 2 * set.kernels.vectorFloats)
        }
        #expect(InstructionSet.supportedHere.first == .baseline)
    }

    /// Max pooling 2×2 (the per-set row kernel) and a depthwise conv with Clip (the per-set direct conv and its
    /// epilogue), on widths that leave tails for every vector width.
    @Test(arguments: [7, 37, 70], InstructionSet.supportedHere)
    func poolAndDepthwiseMatchTheReference(_ width: Int, _ isa: InstructionSet) throws {
        var rng = SeededRandom(seed: UInt64(width))
        let nodes = [
            TestModel.Node(
                op: "MaxPool", inputs: ["x"], outputs: ["p"], ints: ["kernel_shape": [2, 2], "strides": [2, 2]]),
            TestModel.Node(
                op: "Conv", inputs: ["p", "w", "b"], outputs: ["y"],
                ints: ["pads": [1, 2, 1, 2], "kernel_shape": [3, 5]],
                int: ["group": 3]),
            TestModel.Node(op: "Clip", inputs: ["y", "lo", "hi"], outputs: ["out"])
        ]
        let inits: [(String, [Int], [Float])] = [
            ("w", [3, 1, 3, 5], rng.floats(45)), ("b", [3], rng.floats(3)), ("lo", [], [-0.3]), ("hi", [], [0.4])
        ]
        let shape = [1, 3, 9, 2 * width + 1]
        let model = try ONNXModel.decode(
            TestModel.encode(nodes: nodes, initializers: inits, inputDims: shape, outputName: "out"), file: "p.onnx")
        let fast = try InferenceEngine(model: model, mode: .fast, instructionSet: isa)
        #expect(fast.kernelTypeNames == ["PoolKernel", "ConvDirectKernel"])
        let reference = try InferenceEngine(model: model, mode: .reference)
        let input = Tensor(shape: shape, data: rng.floats(shape.reduce(1, *)))
        let got = fast.run(input), want = reference.run(input)
        #expect(got.shape == want.shape)
        var worst: Float = 0
        for (f, r) in zip(got.data, want.data) { worst = max(worst, abs(f - r)) }
        #expect(worst <= 1e-5, "width \(width) \(isa): error \(worst)")
    }

    /// Softmax down the columns of a `length × inner` block (the per-set kernel) against a double-precision
    /// reference, on inner widths that leave tails for every vector width, on ECCV16's 313 rows and on contiguous rows
    /// (a softmax over the last axis: inner 1, 3 and 1000 long); large logits
    /// (±40) must not overflow.
    @Test(arguments: [(5, 37), (313, 16), (3, 1), (1000, 1)], InstructionSet.supportedHere)
    func softmaxColumnsMatchesADoubleReference(_ size: (length: Int, inner: Int), _ isa: InstructionSet) {
        var rng = SeededRandom(seed: UInt64(size.length * 100 + size.inner))
        let count = size.length * size.inner
        let x = rng.floats(count).map { $0 * 40 }
        var y = [Float](repeating: 0, count: count)
        var scratch = [Float](repeating: 0, count: 2 * size.inner)
        x.withUnsafeBufferPointer { xp in
            y.withUnsafeMutableBufferPointer { yp in
                scratch.withUnsafeMutableBufferPointer { s in
                    isa.kernels.softmaxColumns(
                        xp.baseAddress!, yp.baseAddress!, length: size.length, inner: size.inner,
                        peak: s.baseAddress!, sum: s.baseAddress! + size.inner)
                }
            }
        }
        var worst = 0.0
        for i in 0..<size.inner {
            let column = (0..<size.length).map { Double(x[$0 * size.inner + i]) }
            let peak = column.max()!, total = column.map { exp($0 - peak) }.reduce(0, +)
            for l in 0..<size.length {
                worst = max(worst, abs(Double(y[l * size.inner + i]) - exp(column[l] - peak) / total))
            }
        }
        #expect(worst <= 1e-6, "\(size) \(isa): error \(worst)")
    }
}
