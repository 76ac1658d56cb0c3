import Testing

@testable import Infer

/// Inputs tools/fuzz found that trapped (Swift runtime error) instead of throwing, kept as regression tests.
/// Each must now fail preparation with an `InferError` naming what is wrong.
@Suite struct FuzzRegressionTests {
    /// fuzz-onnx, 2026-11-30: a 1-D `Conv` on a rank-1 input (`x[1]`, weights `w2[4]`) read `x[1]` before checking
    /// the rank: index out of range in `ConvOp.plan`. The model as the fuzzer left it (331 bytes).
    static let convRank1 = bytes(
        fromHex:
            "08083ac0020a550a01780a0277320a0277321205636f6e76331a076e5f436f6e76342204436f6e762a130a0c6b65726e656c5f73"
            + "686170654003a001072a0d0a047061647340014002a001072a0e0a07737472696465734002a001071201672a9f01080408030803"
            + "1001420277314a90016cbf003e7f4607bebdf2233fdfd5d63da12109bffd22b93e79e9a63fe673723ffe2734bf55f9a1bfea8e1f"
            + "bf6e45293d4ecd14c0ec0a60be037a9fbfe0753bbf8f540bbf18f2a1be3dc1d23e1471853f979e03be46e8ae3f334a2abf21f9b3"
            + "3ed249673f8589c03df8553ebf32f66bbf0a5beabed57a613e2b3b81bf1f3256bee20b23bedb740a3f9acf5b3e69f3b53e2a1a08"
            + "041001420277324a10506127bf70b904be9eb2483fc028bf3f5a170a017812120a10080112040a0208010a0208030a02081f620d"
            + "0a05636f6e763412040a02080142040a001011")

    static func bytes(fromHex hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    func prepareError(_ bytes: [UInt8], mode: EngineMode) -> InferError? {
        do {
            let model = try ONNXModel.decode(bytes, file: "fuzz.onnx")
            _ = try InferenceEngine(model: model, file: "fuzz.onnx", mode: mode)
            return nil
        } catch {
            return error as? InferError
        }
    }

    @Test(arguments: [EngineMode.fast, .reference])
    func convOnRank1InputThrows(mode: EngineMode) throws {
        let error = try #require(prepareError(Self.convRank1, mode: mode))
        #expect(error.kind == .badData)
        #expect(error.message.contains("rank 1"))
    }

    /// The same bug class in every spatial op, at every rank below 3: Conv, ConvTranspose, MaxPool, AveragePool.
    @Test(arguments: ["Conv", "ConvTranspose", "MaxPool", "AveragePool"], [1, 2])
    func spatialOpsRejectLowRanks(op: String, rank: Int) throws {
        let dims = Array([1, 2][..<rank])
        let weights = op.hasSuffix("Pool") ? [] : [("w", dims, [Float](repeating: 1, count: dims.reduce(1, *)))]
        let node = TestModel.Node(
            op: op, inputs: op.hasSuffix("Pool") ? ["x"] : ["x", "w"], outputs: ["y"],
            ints: op.hasSuffix("Pool") ? ["kernel_shape": [1]] : [:])
        let bytes = TestModel.encode(nodes: [node], initializers: weights, inputDims: dims, outputName: "y")
        let error = try #require(prepareError(bytes, mode: .fast))
        #expect(error.message.contains("rank \(rank)"))
    }

    /// Pads, dilations, strides or kernel sizes near `Int64.max` would overflow the output-size arithmetic.
    @Test(arguments: ["pads", "dilations", "strides"])
    func hugeSpatialAttributesThrow(attribute: String) throws {
        let huge = Int64.max / 2
        let values: [Int64] = attribute == "pads" ? [huge, huge, huge, huge] : [huge, huge]
        let node = TestModel.Node(op: "Conv", inputs: ["x", "w"], outputs: ["y"], ints: [attribute: values])
        let weights = [("w", [1, 1, 3, 3], [Float](repeating: 1, count: 9))]
        let bytes = TestModel.encode(nodes: [node], initializers: weights, inputDims: [1, 1, 8, 8], outputName: "y")
        let error = try #require(prepareError(bytes, mode: .reference))
        #expect(error.message.contains("wrong length or values"))
    }
}
