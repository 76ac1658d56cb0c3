// libFuzzer target: what colorcam reads from a remote inference server (--infer-url): the HTTP/1.1 response reader
// (HTTPResponseReader: Content-Length, chunked, unframed), then the Open Inference Protocol v2 decoders
// (V2Codec.decodeInferResponse: JSON header + binary tensor data or JSON data; V2Codec.parseMetadata), and the
// --infer-url parser on the same bytes as text.
//
// The first input byte chooses the fragmentation (the reader re-parses its buffer as bytes arrive, so every prefix
// is parsed, as on a socket), whether the peer closed after the bytes, and small limits on alternate inputs. The
// expected output is a small [1, 2, 4, 4] tensor so short inputs can complete a valid answer.
import ColorcamCore

@testable import Remote

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInferResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let control = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let limits =
        control & 1 == 0
        ? HTTPResponseReader.Limits()
        : HTTPResponseReader.Limits(maxHeadBytes: 128, maxBodyBytes: 512)
    let closed = control & 2 != 0
    let step = Int(control >> 2) == 0 ? max(bytes.count, 1) : Int(control >> 2)
    var end = min(step, bytes.count)
    var response: HTTPResponse?
    while true {
        do {
            if let (parsed, consumed) = try HTTPResponseReader.parse(
                bytes[0..<end], closed: closed && end == bytes.count,
                limits: limits)
            {
                precondition(consumed <= end, "consumed more than given")
                response = parsed
                break
            }
        } catch {
            _ = "\(error)"
            break
        }
        if end == bytes.count { break }
        end = min(end + step, bytes.count)
    }
    if let response {
        let spec = V2TensorSpec(name: "ab", datatype: "FP32", shape: [1, 2, 4, 4])
        var output = [Float](repeating: 0, count: 32)
        output.withUnsafeMutableBufferPointer { out in
            _ = try? V2Codec.decodeInferResponse(response, output: spec, into: out)
        }
        if let (inputs, outputs) = try? V2Codec.parseMetadata(response.body) {
            _ = V2Codec.mismatch(
                inputs: inputs, outputs: outputs,
                input: V2TensorSpec(name: "L", datatype: "FP32", shape: [1, 1, 4, 4]), output: spec)
        }
    }
    _ = try? InferenceURL(String(decoding: bytes.prefix(300), as: UTF8.self))
    return 0
}
