/// The parts of an ONNX `ModelProto` colorcam uses, decoded from the protobuf wire format (onnx.proto3 numbering).
///
/// Plain values; decoding is in `ONNX+Decode.swift`. Unused fields are skipped.
public struct ONNXModel: Sendable {
    public var irVersion: Int64 = 0
    /// Opset per domain (`""` and `ai.onnx` are the default domain).
    public var opsets: [String: Int64] = [:]
    public var graph = ONNXGraph()

    /// The default-domain opset (1 when absent).
    public var defaultOpset: Int64 { opsets[""] ?? opsets["ai.onnx"] ?? 1 }
}

public struct ONNXGraph: Sendable {
    public var name = ""
    public var nodes: [ONNXNode] = []
    public var initializers: [ONNXTensor] = []
    public var inputs: [ONNXValueInfo] = []
    public var outputs: [ONNXValueInfo] = []
}

public struct ONNXNode: Sendable {
    public var name = ""
    public var opType = ""
    public var domain = ""
    public var inputs: [String] = []
    public var outputs: [String] = []
    public var attributes: [String: ONNXAttribute] = [:]
}

/// An attribute value (`AttributeProto`); graphs (`g`) are rejected.
public enum ONNXAttribute: Sendable {
    case float(Float)
    case int(Int64)
    case string(String)
    case tensor(ONNXTensor)
    case floats([Float])
    case ints([Int64])
    case strings([String])
}

/// ONNX element types colorcam knows by name (`TensorProto.DataType`).
public enum ONNXDataType: Int64, Sendable {
    case float = 1, uint8 = 2, int8 = 3, uint16 = 4, int16 = 5, int32 = 6, int64 = 7, string = 8, bool = 9
    case float16 = 10, double = 11, uint32 = 12, uint64 = 13
}

/// A tensor (`TensorProto`): float data becomes `floats`, integer data `ints` (shape tensors); others are rejected.
public struct ONNXTensor: Sendable {
    public var name = ""
    public var dims: [Int] = []
    public var dataType: Int64 = 0
    public var floats: [Float] = []
    public var ints: [Int64] = []
    public var isExternal = false
    /// Byte offset in the model file of a float tensor's `raw_data` (nil when its values are not stored raw): where
    /// `ONNXModel.replacingInitializers` writes new values.
    public var rawDataOffset: Int?

    public var elementCount: Int { dims.reduce(1, *) }
}

/// A graph input or output (`ValueInfoProto`): name, element type and dims (nil where symbolic/unknown).
public struct ONNXValueInfo: Sendable {
    public var name = ""
    public var elementType: Int64 = 0
    public var dims: [Int?] = []
    public var hasShape = false
}
