// libFuzzer target: the ONNX model loader as a whole — ONNXModel.decode (fuzzed alone by `onnx.swift`), then graph
// building (`InferenceEngine(model:)`: validation, shape inference, constant folding, fusion in fast mode, arena
// planning), which is what `InferenceEngine(path:)` runs on a model file.
//
// Each input is the whole model file. Graph building runs only for a declared input of at most 64 per dim and
// 16,384 elements (symbolic dims taken as 1), so an execution stays cheap; the first byte picks fast or reference
// mode. Thrown errors are the expected outcome for bad bytes (their message is built, to cover it); a trap, an ASan
// report, a leak or an allocation over the RSS limit is a finding.
@testable import Infer

private let maxFuzzDimension = 64
private let maxFuzzInputElements = 1 << 14

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzONNXGraph(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    do {
        let model = try decodeFuzzModel(data, size)
        guard let input = model.graph.inputs.first,
            input.dims.allSatisfy({ ($0 ?? 1) <= maxFuzzDimension }),
            input.dims.reduce(1, { $0 * ($1 ?? 1) }) <= maxFuzzInputElements
        else { return 0 }
        let shape = input.hasShape ? input.dims.map { $0 ?? 1 } : nil
        let mode: EngineMode = size > 0 && data[0] & 1 == 0 ? .fast : .reference
        _ = try InferenceEngine(model: model, inputShape: shape, mode: mode)
    } catch {
        _ = String(describing: error)
    }
    return 0
}
