import ColorcamCore
import Foundation
import Testing

@testable import Infer

/// The pieces of `personalize` below the command: layer selection on the default colorizer, weight replacement in
/// the ONNX file, the distribution's soft targets, the print look, the content hash.
@Suite struct PersonalizeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let defaultModel = root.appendingPathComponent("Models/colorcam-default/model.onnx").path

    func loadDefault() throws -> ([UInt8], ONNXModel) {
        let bytes = try readWholeFile(Self.defaultModel, what: "model file")
        return (bytes, try ONNXModel.decode(bytes, file: Self.defaultModel))
    }

    @Test func selectionsOnTheDefaultColorizer() throws {
        let (_, model) = try loadDefault()
        let fixed = Personalizer.fixedDecodes(model)
        #expect(fixed == ["/decode/Conv_output_0"], "the bias-free 1x1 conv after the Softmax is the decode")
        let head = try TrainGraph(model: model, file: "m", selection: .head, fixed: fixed)
        #expect(Set(head.trainedNodes) == ["/reg/Conv", "/cls/Conv"])
        #expect(Set(head.frontier) == ["/d1/d1.2/Relu_output_0", "/d2/d2.2/Relu_output_0"])
        #expect(!(head.trainable.contains("decode.weight")))
        let decoder = try TrainGraph(model: model, file: "m", selection: .decoder, fixed: fixed)
        #expect(decoder.trainedNodes.first == "/d3/d3.0/Conv", "the decoder starts after the first Resize")
        #expect(decoder.trainedNodes.contains("/cls/Conv") && !decoder.trainedNodes.contains("/p4/Conv"))
        let last3 = try TrainGraph(model: model, file: "m", selection: .lastLayers(3), fixed: fixed)
        #expect(last3.trainable.count == 6)
        #expect(throws: (any Error).self) {
            try TrainGraph(model: model, file: "m", selection: .initializers(["nope"]))
        }
    }

    @Test func replacedInitializersAreTheOnlyBytesThatChange() throws {
        let (bytes, model) = try loadDefault()
        var values: [String: Tensor] = [:]
        let original = model.graph.initializers.first { $0.name == "net.reg.weight" }!
        values["net.reg.weight"] = Tensor(shape: original.dims, data: original.floats.map { $0 * 2 + 1 })
        let out = try model.replacingInitializers(in: bytes, file: "m", values: values)
        #expect(out.count == bytes.count)
        let changed = zip(out, bytes).filter { $0 != $1 }.count
        #expect(changed > 0)
        #expect(changed <= 4 * original.elementCount)
        let reread = try ONNXModel.decode(out, file: "m").graph.initializers.first { $0.name == "net.reg.weight" }!
        #expect(reread.floats == values["net.reg.weight"]!.data)
        #expect(throws: (any Error).self) {
            try model.replacingInitializers(in: bytes, file: "m", values: ["ghost": values.first!.value])
        }
        #expect(throws: (any Error).self) {
            try model.replacingInitializers(
                in: bytes, file: "m", values: ["net.reg.weight": Tensor(shape: [1], data: [0])])
        }
    }

    @Test func softTargetsAndTheirCrossEntropyGradient() {
        let binA: [Float] = [0, 10, 20, 0, 10, 20, 40]
        let binB: [Float] = [0, 0, 0, 10, 10, 10, 40]
        let targets = ABBinTargets(binA: binA, binB: binB)
        // One 1x1 cell over a 2x2 picture whose ab is exactly bin 4's (10, 10).
        let n = 2
        let ab = [Float](repeating: 10, count: n * n) + [Float](repeating: 10, count: n * n)
        let q = binA.count
        let uniform = Tensor(shape: [1, q, 1, 1], data: [Float](repeating: 1 / Float(q), count: q))
        let (loss, grad) = targets.crossEntropy(probabilities: uniform, targetAB: ab, sizePx: n)
        #expect(abs((loss) - (log(Float(q)))) <= 1e-5, "cross-entropy of a uniform distribution is log Q")
        #expect(abs((grad.data.reduce(0, +)) - (0)) <= 1e-6, "p - t sums to zero")
        #expect(grad.data[4] < grad.data[0], "the nearest bin is pushed up most")
        #expect(abs((grad.data[6]) - (1 / Float(q))) <= 1e-6, "a far bin gets no target weight")
    }

    @Test func cleanPrintLookIsIdentityAndARandomOneStaysInRange() {
        var rng = SeededGenerator(seed: 3)
        var plane = (0..<64).map { Float($0) * 100 / 63 }
        let original = plane
        PrintLook.clean.apply(to: &plane, widthPx: 8, heightPx: 8, rng: &rng)
        for (a, b) in zip(plane, original) { #expect(abs((a) - (b)) <= 1e-3) }
        let look = PrintLook.random(&rng)
        look.apply(to: &plane, widthPx: 8, heightPx: 8, rng: &rng)
        #expect(plane.allSatisfy { $0 >= 0 && $0 <= 100 })
        #expect(plane != original)
    }

    @Test func sHA256KnownDigests() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 1000))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}
