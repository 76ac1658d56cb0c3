import ColorcamCore
import Foundation
import Testing

@testable import Remote

@Suite struct V2CodecTests {
    let output = V2TensorSpec(name: "ab", datatype: "FP32", shape: [1, 2, 2, 2])

    func response(json: [String: Any], binary: [Float]? = nil, status: Int = 200, headerLength: Int? = nil)
        -> HTTPResponse
    {
        let header = try! JSONSerialization.data(withJSONObject: json)
        var body = [UInt8](header)
        var headers: [String: String] = [:]
        if let binary {
            headers["inference-header-content-length"] = String(headerLength ?? header.count)
            for v in binary { withUnsafeBytes(of: v.bitPattern.littleEndian) { body += $0 } }
        }
        return HTTPResponse(status: status, headers: headers, body: body, keepAlive: true)
    }

    func decode(_ r: HTTPResponse) throws -> [Float] {
        var out = [Float](repeating: -7, count: 8)
        try out.withUnsafeMutableBufferPointer { try V2Codec.decodeInferResponse(r, output: output, into: $0) }
        return out
    }

    @Test func binaryOutputAfterAnotherOutputIsFoundAtItsOffset() throws {
        let values: [Float] = [0.5, -1, 2, 3.25, 4, 5, 6, 7]
        let r = response(
            json: [
                "outputs": [
                    ["name": "other", "datatype": "FP32", "shape": [1], "parameters": ["binary_data_size": 4]],
                    ["name": "ab", "datatype": "FP32", "shape": [1, 2, 2, 2], "parameters": ["binary_data_size": 32]]
                ]
            ], binary: [99] + values)
        #expect(try decode(r) == values)
    }

    @Test func jsonDataIsReadFlatOrNested() throws {
        let flat = response(json: [
            "outputs": [
                [
                    "name": "ab", "datatype": "FP32", "shape": [1, 2, 2, 2],
                    "data": [1, 2, 3, 4, 5, 6, 7, 8]
                ]
            ]
        ])
        #expect(try decode(flat) == [1, 2, 3, 4, 5, 6, 7, 8])
        let nested = response(json: [
            "outputs": [
                [
                    "name": "ab", "datatype": "FP32", "shape": [1, 2, 2, 2],
                    "data": [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]
                ]
            ]
        ])
        #expect(try decode(nested) == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    @Test func wrongAnswersFailWithoutTouchingTheOutput() throws {
        let cases: [(HTTPResponse, InferenceFailureCheck)] = [
            (response(json: ["error": "model exploded"], status: 500), .init(.httpStatus, "HTTP 500: model exploded")),
            (
                HTTPResponse(status: 200, headers: [:], body: Array("{not json".utf8), keepAlive: true),
                .init(.badResponse, "not a v2 inference response")
            ),
            (
                response(json: [
                    "outputs": [
                        [
                            "name": "ab", "datatype": "FP32", "shape": [1, 2, 4, 4],
                            "data": [1]
                        ]
                    ]
                ]), .init(.badResponse, "has shape")
            ),
            (
                response(
                    json: [
                        "outputs": [
                            [
                                "name": "ab", "datatype": "FP32", "shape": [1, 2, 2, 2],
                                "parameters": ["binary_data_size": 32]
                            ]
                        ]
                    ], binary: [1, 2, 3]),
                .init(.badResponse, "binary_data_size 32 but 12 bytes left")
            ),
            (
                response(json: [
                    "outputs": [
                        [
                            "name": "ab", "datatype": "FP32", "shape": [1, 2, 2, 2],
                            "data": [1, 2, 3]
                        ]
                    ]
                ]), .init(.badResponse, "data is not 8 numbers")
            ),
            (
                response(json: [
                    "outputs": [
                        [
                            "name": "x", "datatype": "FP32", "shape": [1],
                            "data": [1]
                        ]
                    ]
                ]), .init(.badResponse, "no output 'ab'")
            ),
            (
                response(json: ["outputs": []], binary: [1], headerLength: 10_000),
                .init(.badResponse, "Inference-Header-Content-Length")
            )
        ]
        for (r, check) in cases {
            var out = [Float](repeating: -7, count: 8)
            do {
                try out.withUnsafeMutableBufferPointer { try V2Codec.decodeInferResponse(r, output: output, into: $0) }
                Issue.record("accepted \(check.text)")
            } catch let failure as ExchangeFailure {
                #expect(failure.reason == check.reason)
                #expect(failure.message.contains(check.text), "\(failure.message)")
            }
            #expect(out == [Float](repeating: -7, count: 8))
        }
    }

    struct InferenceFailureCheck {
        var reason: InferenceFailure
        var text: String
        init(_ reason: InferenceFailure, _ text: String) { self.reason = reason; self.text = text }
    }

    @Test func metadataIsComparedByNameTypeAndShape() throws {
        let body = Array(
            #"{"name":"m","inputs":[{"name":"L","datatype":"FP32","shape":[-1,1,256,256]}],"outputs":[{"name":"ab","datatype":"FP32","shape":[1,2,256,256]}]}"#
                .utf8)
        let (inputs, outputs) = try V2Codec.parseMetadata(body)
        let input = V2TensorSpec(name: "L", datatype: "FP32", shape: [1, 1, 256, 256])
        let out = V2TensorSpec(name: "ab", datatype: "FP32", shape: [1, 2, 256, 256])
        #expect(V2Codec.mismatch(inputs: inputs, outputs: outputs, input: input, output: out) == nil)
        let small = V2TensorSpec(name: "ab", datatype: "FP32", shape: [1, 2, 128, 128])
        #expect(
            V2Codec.mismatch(inputs: inputs, outputs: outputs, input: input, output: small)?
                .contains("has shape [1, 2, 256, 256] on the server") == true)
        let renamed = V2TensorSpec(name: "x", datatype: "FP32", shape: [1, 1, 256, 256])
        #expect(
            V2Codec.mismatch(inputs: inputs, outputs: outputs, input: renamed, output: out)?
                .contains("no input 'x'") == true)
        #expect(throws: ExchangeFailure.self) { try V2Codec.parseMetadata(Array(#"{"inputs":[{"name":"L"}]}"#.utf8)) }
    }

    @Test func requestHeaderAsksForBinaryOutput() throws {
        let header = V2Codec.requestHeader(
            input: V2TensorSpec(name: "L", datatype: "FP32", shape: [1, 1, 4, 4]),
            outputName: "ab")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])
        let input = try #require((root["inputs"] as? [[String: Any]])?.first)
        #expect((input["parameters"] as? [String: Any])?["binary_data_size"] as? Int == 64)
        let out = try #require((root["outputs"] as? [[String: Any]])?.first)
        #expect((out["parameters"] as? [String: Any])?["binary_data"] as? Bool == true)
    }

    @Test func inferenceURLsAreParsedOrRefusedWithUsage() throws {
        let url = try InferenceURL("http://[::1]:8500/v2/models/colorcam-default/versions/2")
        #expect(url.host == "::1" && url.port == 8500 && url.modelName == "colorcam-default" && url.version == "2")
        #expect(url.inferPath == "/v2/models/colorcam-default/versions/2/infer")
        #expect(url.hostHeader == "[::1]:8500")
        let plain = try InferenceURL("http://server/v2/models/m/")
        #expect(plain.port == 80 && plain.modelPath == "/v2/models/m")
        for bad in [
            "https://a/v2/models/m", "http://a:0/v2/models/m", "http://a/v1/models/m", "http:///v2/models/m",
            "http://a/v2/models/m/infer", "http://a/v2/models/m?x=1", "ftp://a"
        ] {
            #expect(throws: RemoteError.self, "\(bad)") { try InferenceURL(bad) }
        }
    }
}

@Suite struct JSONNumberListsTests {
    @Test func dataListsAreTakenOutInOrderAndTheRestKept() throws {
        let text =
            #"{"outputs":[{"name":"a","data":[[1.5, -2e3],[3]]},{"name":"data","x":"\"data\":[9]","data":[ 4 ]}]}"#
        let (stripped, lists) = try #require(JSONNumberLists.extract(Array(text.utf8)[...]))
        #expect(lists == [[1.5, -2000, 3], [4]])
        #expect(
            String(decoding: stripped, as: UTF8.self)
                == #"{"outputs":[{"name":"a","data":[]},{"name":"data","x":"\"data\":[9]","data":[]}]}"#)
    }

    @Test func listsWithOtherThanNumbersAreLeftToTheSlowPath() {
        for text in [#"{"data":[1,"a"]}"#, #"{"data":[1,true]}"#, #"{"data":[1e]}"#, #"{"data":[-]}"#, #"{"data":[1,2"#]
        {
            #expect(JSONNumberLists.extract(Array(text.utf8)[...]) == nil, "\(text)")
        }
    }
}
