import ColorcamCore
import Testing

@testable import Infer

@Suite struct ProtobufDecoderTests {
    static let conv: [UInt8] = TestModel.encode(
        nodes: [TestModel.Node(op: "Conv", inputs: ["x", "w"], outputs: ["out"], ints: ["pads": [1, 1, 1, 1]])],
        initializers: [("w", [2, 1, 3, 3], [Float](repeating: 0.5, count: 18))], inputDims: [1, 1, 4, 4],
        outputName: "out")

    @Test func decodesModelFields() throws {
        let model = try ONNXModel.decode(Self.conv, file: "m.onnx")
        #expect(model.irVersion == 8)
        #expect(model.defaultOpset == 17)
        #expect(model.graph.nodes.map(\.opType) == ["Conv"])
        #expect(model.graph.initializers.first?.dims == [2, 1, 3, 3])
        #expect(model.graph.initializers.first?.floats == [Float](repeating: 0.5, count: 18))
        #expect(model.graph.inputs.first?.dims == [1, 1, 4, 4])
        guard case .ints(let pads)? = model.graph.nodes[0].attributes["pads"] else { Issue.record("no pads"); return }
        #expect(pads == [1, 1, 1, 1])
    }

    @Test func unpackedFloatDataDecodes() throws {
        var w = ProtoWriter()
        TestModel.floatTensor(&w, name: "t", dims: [3], values: [1, -2, 3.5], packed: false)
        var reader = ProtobufReader(bytes: w.bytes, file: "t")
        #expect(try ONNXTensor.decode(&reader).floats == [1, -2, 3.5])
    }

    func decodeError(_ bytes: [UInt8]) -> InferError? {
        do { _ = try ONNXModel.decode(bytes, file: "bad.onnx"); return nil } catch { return error as? InferError }
    }

    /// A cut inside a field is an error naming the file; a cut between top-level fields is still a valid message
    /// (protobuf cannot tell), which later fails preparation instead (e.g. no opset import → opset 1).
    @Test func truncationAtEveryLengthFailsCleanly() throws {
        var rejected = 0
        for cut in 0..<Self.conv.count {
            if let error = decodeError(Array(Self.conv[..<cut])) {
                rejected += 1
                #expect(error.kind == .badData, "cut at \(cut)")
                #expect(
                    !error.description.contains("\n") && error.description.hasPrefix("bad.onnx: byte "), "cut at \(cut)"
                )
            } else {
                let model = try ONNXModel.decode(Array(Self.conv[..<cut]), file: "bad.onnx")
                #expect(throws: InferError.self, "cut at \(cut)") {
                    try InferenceEngine(model: model, file: "bad.onnx")
                }
            }
        }
        #expect(rejected >= Self.conv.count - 3)
    }

    @Test func wrongWireTypeNamesTheOffset() {
        var bytes = Self.conv
        bytes[bytes.firstIndex(of: 0x3A)!] = 0x3D  // graph (field 7) as fixed32
        let error = decodeError(bytes)
        #expect(error?.description.contains("wrong wire type") == true)
    }

    @Test func overlongVarintIsRejected() {
        let error = decodeError([0x08] + [UInt8](repeating: 0xff, count: 11))
        #expect(error?.description.contains("varint") == true)
    }

    @Test func hugeTensorClaimFailsBeforeAllocating() {
        var w = ProtoWriter()
        w.int(1, 1 << 30); w.int(1, 4); w.int(2, 1); w.string(8, "huge"); w.data(9, [0, 0, 0, 0])
        var reader = ProtobufReader(bytes: w.bytes, file: "t")
        #expect(throws: InferError.self) { try ONNXTensor.decode(&reader) }
    }

    @Test func externalDataIsRejected() {
        var w = ProtoWriter()
        w.int(1, 2); w.int(2, 1); w.string(8, "ext"); w.int(14, 1)
        var reader = ProtobufReader(bytes: w.bytes, file: "t")
        #expect(throws: InferError.self) { try ONNXTensor.decode(&reader) }
    }

    @Test func unknownOpNamesNodeOpAndOpset() throws {
        let bytes = TestModel.encode(
            nodes: [TestModel.Node(op: "Einsum", inputs: ["x"], outputs: ["out"])],
            initializers: [], inputDims: [1, 2], outputName: "out", opset: 13)
        let model = try ONNXModel.decode(bytes, file: "u.onnx")
        do {
            _ = try InferenceEngine(model: model, file: "u.onnx")
            Issue.record("expected an error")
        } catch let error as InferError {
            #expect(error.description == "u.onnx: node 'node_out' (Einsum, opset 13): unsupported operator type Einsum")
        }
    }

    /// Seeded mutation fuzzing: random byte flips, insertions, deletions and truncations of a valid model must
    /// either decode and prepare or throw an `InferError` — never crash or hang.
    @Test func mutationFuzz() {
        var rng = SeededRandom(seed: 0xC0105CA3)
        var decoded = 0, rejected = 0
        for _ in 0..<3000 {
            var bytes = Self.conv
            for _ in 0..<(1 + rng.int(4)) {
                switch rng.int(4) {
                case 0: bytes[rng.int(bytes.count)] ^= UInt8(1 << rng.int(8))
                case 1: bytes.insert(UInt8(rng.int(256)), at: rng.int(bytes.count + 1))
                case 2: if bytes.count > 1 { bytes.remove(at: rng.int(bytes.count)) }
                default: bytes[rng.int(bytes.count)] = UInt8(rng.int(256))
                }
            }
            do {
                let model = try ONNXModel.decode(bytes, file: "fuzz.onnx")
                _ = try InferenceEngine(model: model, file: "fuzz.onnx", inputShape: [1, 1, 4, 4])
                decoded += 1
            } catch is InferError {
                rejected += 1
            } catch {
                Issue.record("non-InferError \(error)")
            }
        }
        #expect(decoded + rejected == 3000)
        #expect(rejected > 0)
    }
}
