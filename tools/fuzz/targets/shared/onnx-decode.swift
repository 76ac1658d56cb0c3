// Shared by the `onnx` and `onnx-graph` fuzz targets (build.sh compiles it into both): the decoding step of loading
// a model file, with the decoded model's derived values touched so their code runs too.
@testable import Infer

/// Decodes `size` bytes at `data` as a whole model file (what `InferenceEngine(path:)` does first).
/// - Throws: the decoder's error for bad bytes — the expected outcome, not a finding.
func decodeFuzzModel(_ data: UnsafePointer<UInt8>, _ size: Int) throws -> ONNXModel {
    let model = try ONNXModel.decode(Array(UnsafeBufferPointer(start: data, count: size)), file: "fuzz.onnx")
    _ = model.defaultOpset
    for tensor in model.graph.initializers { _ = tensor.elementCount }
    return model
}
