import ColorcamCore
import Foundation

/// One tensor as a v2 server describes it in model metadata (`-1` = a dimension of any size).
public struct V2TensorSpec: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var datatype: String
    public var shape: [Int]

    public init(name: String, datatype: String, shape: [Int]) {
        self.name = name
        self.datatype = datatype
        self.shape = shape
    }

    public var description: String { "'\(name)' \(datatype) \(shape)" }
}

/// The Open Inference Protocol v2 (KServe v2) REST messages colorcam exchanges: model metadata, and inference with
/// the binary tensor data extension — FP32 input sent as raw little-endian bytes after a JSON header
/// (`Inference-Header-Content-Length`), the output asked for as binary; an output a server returns as a JSON
/// `data` array is read too. Pure functions over bytes (fuzzed in `tools/fuzz`): malformed input is an error,
/// never a trap. Foundation is used for JSON only.
public enum V2Codec {
    /// The inputs and outputs a metadata answer (`GET /v2/models/NAME`) declares.
    public static func parseMetadata(_ body: [UInt8]) throws -> (inputs: [V2TensorSpec], outputs: [V2TensorSpec]) {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw ExchangeFailure(.badResponse, "model metadata is not a JSON object")
        }
        func specs(_ key: String) throws -> [V2TensorSpec] {
            guard let list = root[key] as? [Any] else {
                throw ExchangeFailure(.badResponse, "model metadata has no '\(key)' list")
            }
            return try list.enumerated().map { i, item in
                guard let entry = item as? [String: Any], let name = entry["name"] as? String,
                    let datatype = entry["datatype"] as? String, let shape = entry["shape"] as? [Any],
                    let dims = integers(shape)
                else {
                    throw ExchangeFailure(
                        .badResponse,
                        "model metadata \(key)[\(i)] lacks a name, datatype or "
                            + "integer shape")
                }
                return V2TensorSpec(name: name, datatype: datatype, shape: dims)
            }
        }
        return (try specs("inputs"), try specs("outputs"))
    }

    /// Whether the server's model takes `input` and gives `output` (names, FP32, shapes; `-1` matches any size).
    /// - Returns: nil when it matches, else what differs (one line).
    public static func mismatch(
        inputs: [V2TensorSpec], outputs: [V2TensorSpec], input: V2TensorSpec,
        output: V2TensorSpec
    ) -> String? {
        func compare(_ side: String, _ declared: [V2TensorSpec], _ wanted: V2TensorSpec) -> String? {
            guard let found = declared.first(where: { $0.name == wanted.name }) else {
                return "the server's model has no \(side) '\(wanted.name)' (it declares "
                    + "\(declared.map { "'\($0.name)'" }.joined(separator: ", ")))"
            }
            guard found.datatype == wanted.datatype else {
                return "\(side) '\(wanted.name)' is \(found.datatype) on the server, colorcam sends \(wanted.datatype)"
            }
            guard found.shape.count == wanted.shape.count,
                zip(found.shape, wanted.shape).allSatisfy({ $0 == -1 || $0 == $1 })
            else {
                return "\(side) '\(wanted.name)' has shape \(found.shape) on the server, the local model's is "
                    + "\(wanted.shape)"
            }
            return nil
        }
        if inputs.count != 1 { return "the server's model has \(inputs.count) inputs; the colorizer takes one" }
        return compare("input", inputs, input) ?? compare("output", outputs, output)
    }

    /// The JSON header of an inference request for one FP32 input sent as binary, its output asked for as binary.
    public static func requestHeader(input: V2TensorSpec, outputName: String) -> [UInt8] {
        let bytes = input.shape.reduce(4, *)
        let shape = input.shape.map(String.init).joined(separator: ",")
        return Array(
            ("{\"inputs\":[{\"name\":\(JSONText.quoted(input.name)),\"shape\":[\(shape)],\"datatype\":\"FP32\","
                + "\"parameters\":{\"binary_data_size\":\(bytes)}}],"
                + "\"outputs\":[{\"name\":\(JSONText.quoted(outputName)),\"parameters\":{\"binary_data\":true}}]}").utf8
        )
    }

    /// A whole inference request in JSON (no binary extension, for servers without it, e.g. MLServer's REST): the
    /// input's `data` as a flat list of shortest round-trip decimal floats, the output asked for as JSON.
    public static func requestJSON(input: V2TensorSpec, outputName: String, values: UnsafeBufferPointer<Float>)
        -> [UInt8]
    {
        var bytes = Array(
            ("{\"inputs\":[{\"name\":\(JSONText.quoted(input.name)),\"shape\":["
                + input.shape.map(String.init).joined(separator: ",") + "],\"datatype\":\"FP32\",\"data\":[").utf8)
        bytes.reserveCapacity(values.count * 12 + 200)
        for (k, v) in values.enumerated() {
            if k > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: (v.isFinite ? v : 0).description.utf8)
        }
        bytes.append(contentsOf: "]}],\"outputs\":[{\"name\":\(JSONText.quoted(outputName))}]}".utf8)
        return bytes
    }

    /// Reads output `output` (FP32, exactly `output.shape`) from an inference answer into `into`
    /// (`into.count` = the shape's element count). `into` is written only when the whole answer is valid.
    public static func decodeInferResponse(
        _ response: HTTPResponse, output: V2TensorSpec,
        into: UnsafeMutableBufferPointer<Float>
    ) throws {
        guard response.status == 200 else {
            throw ExchangeFailure(.httpStatus, "HTTP \(response.status)" + serverMessage(response.body))
        }
        var jsonLength = response.body.count
        if let text = response.headers["inference-header-content-length"] {
            guard let n = Int(text), n >= 0, n <= response.body.count else {
                throw ExchangeFailure(
                    .badResponse,
                    "Inference-Header-Content-Length '\(text.prefix(30))' does not fit "
                        + "the \(response.body.count)-byte body")
            }
            jsonLength = n
        }
        // Numeric data lists are read apart (fast); the rest goes to Foundation. `lists[n]` is the n-th `data`
        // list in the text; they map to the outputs carrying `data` only when the counts agree.
        let split = JSONNumberLists.extract(response.body[0..<jsonLength])
        let text = split.map { Data($0.stripped) } ?? Data(response.body[0..<jsonLength])
        guard let root = (try? JSONSerialization.jsonObject(with: text)) as? [String: Any],
            let outputs = root["outputs"] as? [Any]
        else {
            throw ExchangeFailure(
                .badResponse,
                "the answer is not a v2 inference response (no JSON 'outputs' list "
                    + "in its first \(jsonLength) bytes)")
        }
        let count = output.shape.reduce(1, *)
        var binaryOffset = jsonLength
        let withData = outputs.filter { ($0 as? [String: Any])?["data"] != nil }.count
        let lists = split.flatMap { $0.lists.count == withData ? $0.lists : nil }
        var dataIndex = 0
        for (i, item) in outputs.enumerated() {
            guard let entry = item as? [String: Any], let name = entry["name"] as? String else {
                throw ExchangeFailure(.badResponse, "outputs[\(i)] has no name")
            }
            let parameters = entry["parameters"] as? [String: Any]
            let binarySize = (parameters?["binary_data_size"] as? NSNumber)?.intValue
            if let binarySize, binarySize < 0 || binarySize > response.body.count - binaryOffset {
                throw ExchangeFailure(
                    .badResponse,
                    "outputs[\(i)] '\(name)': binary_data_size \(binarySize) but "
                        + "\(response.body.count - binaryOffset) bytes left at body offset \(binaryOffset)")
            }
            guard name == output.name else {
                binaryOffset += binarySize ?? 0
                if entry["data"] != nil { dataIndex += 1 }
                continue
            }
            guard (entry["datatype"] as? String) == "FP32" else {
                throw ExchangeFailure(.badResponse, "output '\(name)' is \(entry["datatype"] ?? "untyped"), not FP32")
            }
            guard let shapeList = entry["shape"] as? [Any], let shape = integers(shapeList), shape == output.shape
            else {
                throw ExchangeFailure(
                    .badResponse,
                    "output '\(name)' has shape \(entry["shape"] ?? "none"), want "
                        + "\(output.shape)")
            }
            if let binarySize {
                guard binarySize == 4 * count else {
                    throw ExchangeFailure(
                        .badResponse,
                        "output '\(name)': binary_data_size \(binarySize), want "
                            + "\(4 * count) for \(output.shape) FP32")
                }
                response.body.withUnsafeBytes { raw in
                    let base = raw.baseAddress! + binaryOffset
                    for k in 0..<count {
                        into[k] = Float(
                            bitPattern: UInt32(
                                littleEndian: base.loadUnaligned(
                                    fromByteOffset: 4 * k,
                                    as: UInt32.self)))
                    }
                }
                return
            }
            guard let data = entry["data"] as? [Any] else {
                throw ExchangeFailure(.badResponse, "output '\(name)' has neither binary_data_size nor a data list")
            }
            var values: [Float] = []
            if let lists {
                values = lists[dataIndex]
            } else {
                values.reserveCapacity(count)
                guard flatten(data, into: &values, limit: count) else {
                    throw ExchangeFailure(.badResponse, "output '\(name)': data is not \(count) numbers")
                }
            }
            guard values.count == count else {
                throw ExchangeFailure(.badResponse, "output '\(name)': data is not \(count) numbers")
            }
            for k in 0..<count { into[k] = values[k] }
            return
        }
        throw ExchangeFailure(.badResponse, "the answer has no output '\(output.name)'")
    }

    /// `: message` from a JSON `{"error": …}` body, else a short excerpt of the body, else "".
    static func serverMessage(_ body: [UInt8]) -> String {
        if let root = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            let error = root["error"] as? String
        {
            return ": " + String(error.prefix(200))
        }
        let text = String(decoding: body.prefix(120), as: UTF8.self).filter { !$0.isNewline }
        return text.isEmpty ? "" : ": " + text
    }

    static func integers(_ list: [Any]) -> [Int]? {
        var out: [Int] = []
        for item in list {
            guard let n = item as? NSNumber, n.doubleValue == n.doubleValue.rounded(), abs(n.doubleValue) < 1e12 else {
                return nil
            }
            out.append(n.intValue)
        }
        return out
    }

    /// Appends the numbers of a (possibly nested) list; false on a non-number or more than `limit`.
    static func flatten(_ list: [Any], into values: inout [Float], limit: Int) -> Bool {
        for item in list {
            if let n = item as? NSNumber {
                guard values.count < limit else { return false }
                values.append(n.floatValue)
            } else if let nested = item as? [Any] {
                guard flatten(nested, into: &values, limit: limit) else { return false }
            } else {
                return false
            }
        }
        return true
    }
}
