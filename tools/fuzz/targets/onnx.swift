// libFuzzer target: the ONNX model decoder — ProtobufReader, ONNXModel.decode and the Graph/Node/Attribute/Tensor/
// ValueInfo decoders, i.e. what `InferenceEngine(path:)` runs on a model file's bytes before graph building
// (which `onnx-graph.swift` fuzzes).
//
// Each input is the whole model file. Thrown errors are the expected outcome for bad bytes (their message is built,
// to cover it); a trap, an ASan report, a leak or an allocation over the RSS limit is a finding.
@testable import Infer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzONNX(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    do {
        _ = try decodeFuzzModel(data, size)
    } catch {
        _ = String(describing: error)
    }
    return 0
}
