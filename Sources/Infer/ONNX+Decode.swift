/// Decoding of ONNX protobuf messages into `ONNXModel` values.
///
/// Every size is checked against the bytes present before anything is allocated, so a tensor that claims 2 GB in
/// a small file fails with the byte offset of its header instead of allocating.
extension ONNXModel {
    /// Decodes a serialized `ModelProto`.
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - file: name used in error messages.
    /// - Throws: `InferError` (`.badData`) naming the byte offset of the first bad field.
    public static func decode(_ bytes: [UInt8], file: String) throws -> ONNXModel {
        var reader = ProtobufReader(bytes: bytes, file: file)
        var model = ONNXModel()
        var sawGraph = false
        while !reader.isAtEnd {
            let (field, wire) = try reader.readKey()
            switch (field, wire) {
            case (1, .varint): model.irVersion = try reader.readInt64(wire)
            case (7, .lengthDelimited):
                var sub = try reader.sub()
                model.graph = try ONNXGraph.decode(&sub)
                sawGraph = true
            case (8, .lengthDelimited):
                var sub = try reader.sub()
                var domain = ""
                var version: Int64 = 0
                while !sub.isAtEnd {
                    let (f, w) = try sub.readKey()
                    switch (f, w) {
                    case (1, .lengthDelimited): domain = try sub.readString()
                    case (2, .varint): version = try sub.readInt64(w)
                    default: try sub.skip(w)
                    }
                }
                model.opsets[domain] = version
            case (1, _), (7, _), (8, _):
                throw reader.error("ModelProto field \(field) has wrong wire type \(wire.rawValue)")
            default: try reader.skip(wire)
            }
        }
        guard sawGraph else { throw reader.error("ModelProto has no graph", at: bytes.count) }
        return model
    }
}

extension ONNXGraph {
    static func decode(_ reader: inout ProtobufReader) throws -> ONNXGraph {
        var graph = ONNXGraph()
        while !reader.isAtEnd {
            let (field, wire) = try reader.readKey()
            if [1, 2, 5, 11, 12, 13].contains(field) && wire != .lengthDelimited {
                throw reader.error("GraphProto field \(field) has wrong wire type \(wire.rawValue)")
            }
            switch field {
            case 1: var sub = try reader.sub(); graph.nodes.append(try ONNXNode.decode(&sub))
            case 2: graph.name = try reader.readString()
            case 5: var sub = try reader.sub(); graph.initializers.append(try ONNXTensor.decode(&sub))
            case 11: var sub = try reader.sub(); graph.inputs.append(try ONNXValueInfo.decode(&sub))
            case 12: var sub = try reader.sub(); graph.outputs.append(try ONNXValueInfo.decode(&sub))
            default: try reader.skip(wire)
            }
        }
        return graph
    }
}

extension ONNXNode {
    static func decode(_ reader: inout ProtobufReader) throws -> ONNXNode {
        var node = ONNXNode()
        while !reader.isAtEnd {
            let (field, wire) = try reader.readKey()
            if [1, 2, 3, 4, 5, 7].contains(field) && wire != .lengthDelimited {
                throw reader.error("NodeProto field \(field) has wrong wire type \(wire.rawValue)")
            }
            switch field {
            case 1: node.inputs.append(try reader.readString())
            case 2: node.outputs.append(try reader.readString())
            case 3: node.name = try reader.readString()
            case 4: node.opType = try reader.readString()
            case 5:
                var sub = try reader.sub()
                let (name, value) = try decodeAttribute(&sub)
                if let value { node.attributes[name] = value }
            case 7: node.domain = try reader.readString()
            default: try reader.skip(wire)
            }
        }
        return node
    }

    /// Returns nil for attribute kinds colorcam ignores (graphs are rejected later by op support checks).
    static func decodeAttribute(_ reader: inout ProtobufReader) throws -> (String, ONNXAttribute?) {
        var name = ""
        var type: Int64 = 0
        var f: Float = 0, i: Int64 = 0, s = "", t: ONNXTensor?
        var floats: [Float] = [], ints: [Int64] = [], strings: [String] = []
        while !reader.isAtEnd {
            let (field, wire) = try reader.readKey()
            switch field {
            case 1:
                guard wire == .lengthDelimited else { throw reader.error("attribute name has wrong wire type") }
                name = try reader.readString()
            case 2: f = try reader.readFloat(wire)
            case 3: i = try reader.readInt64(wire)
            case 4:
                guard wire == .lengthDelimited else { throw reader.error("attribute s has wrong wire type") }
                s = try reader.readString()
            case 5:
                guard wire == .lengthDelimited else { throw reader.error("attribute t has wrong wire type") }
                var sub = try reader.sub(); t = try ONNXTensor.decode(&sub)
            case 7: try reader.readRepeatedFloat(wire, into: &floats)
            case 8: try reader.readRepeatedInt64(wire, into: &ints)
            case 9:
                guard wire == .lengthDelimited else { throw reader.error("attribute strings has wrong wire type") }
                strings.append(try reader.readString())
            case 20: type = try reader.readInt64(wire)
            default: try reader.skip(wire)
            }
        }
        switch type {
        case 1: return (name, .float(f))
        case 2: return (name, .int(i))
        case 3: return (name, .string(s))
        case 4:
            guard let t else { throw reader.error("attribute '\(name)' of type TENSOR has no tensor") }
            return (name, .tensor(t))
        case 6: return (name, .floats(floats))
        case 7: return (name, .ints(ints))
        case 8: return (name, .strings(strings))
        default: return (name, nil)
        }
    }
}

extension ONNXTensor {
    static func decode(_ reader: inout ProtobufReader) throws -> ONNXTensor {
        var tensor = ONNXTensor()
        var raw: ArraySlice<UInt8>?
        var rawOffset = 0
        var int32Data: [Int64] = []
        var doubles: [Double] = []
        let start = reader.offset
        while !reader.isAtEnd {
            let (field, wire) = try reader.readKey()
            switch field {
            case 1:
                var dims: [Int64] = []
                try reader.readRepeatedInt64(wire, into: &dims)
                for d in dims {
                    guard d >= 0 && d <= Int64(Int32.max) else { throw reader.error("tensor dim \(d) is out of range") }
                    tensor.dims.append(Int(d))
                }
            case 2: tensor.dataType = try reader.readInt64(wire)
            case 4: try reader.readRepeatedFloat(wire, into: &tensor.floats)
            case 5: try reader.readRepeatedInt64(wire, into: &int32Data)
            case 7: try reader.readRepeatedInt64(wire, into: &tensor.ints)
            case 8:
                guard wire == .lengthDelimited else { throw reader.error("tensor name has wrong wire type") }
                tensor.name = try reader.readString()
            case 9:
                guard wire == .lengthDelimited else { throw reader.error("tensor raw_data has wrong wire type") }
                rawOffset = reader.offset
                raw = try reader.readBytes()
            case 10: try reader.readRepeatedDouble(wire, into: &doubles)
            case 13: tensor.isExternal = true; try reader.skip(wire)
            case 14: if try reader.readInt64(wire) == 1 { tensor.isExternal = true }
            default: try reader.skip(wire)
            }
        }
        let label = tensor.name.isEmpty ? "tensor" : "tensor '\(tensor.name)'"
        if tensor.isExternal {
            throw reader.error("\(label) uses external data, which colorcam does not load", at: start)
        }
        var count = 1
        for d in tensor.dims {
            let (p, overflow) = count.multipliedReportingOverflow(by: d)
            guard !overflow, p <= 1 << 31 else { throw reader.error("\(label) claims too many elements", at: start) }
            count = p
        }
        let type = ONNXDataType(rawValue: tensor.dataType)
        if let raw {
            let width: Int
            switch type {
            case .float, .int32, .uint32: width = 4
            case .int64, .uint64, .double: width = 8
            case .uint8, .int8, .bool: width = 1
            case .int16, .uint16, .float16: width = 2
            default: throw reader.error("\(label) has unsupported data type \(tensor.dataType)", at: start)
            }
            guard raw.count == count * width else {
                throw reader.error(
                    "\(label) raw_data has \(raw.count) bytes, dims \(tensor.dims) need \(count * width)",
                    at: rawOffset)
            }
            raw.withUnsafeBytes { buf in
                switch type {
                case .float:
                    tensor.rawDataOffset = raw.startIndex
                    tensor.floats = (0..<count).map {
                        Float(bitPattern: buf.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))
                    }
                case .double:
                    tensor.floats = (0..<count).map {
                        Float(Double(bitPattern: buf.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)))
                    }
                case .int64, .uint64:
                    tensor.ints = (0..<count).map { buf.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self) }
                case .int32, .uint32:
                    tensor.ints = (0..<count).map { Int64(buf.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self)) }
                case .int8: tensor.ints = (0..<count).map { Int64(Int8(bitPattern: buf[$0])) }
                case .uint8, .bool: tensor.ints = (0..<count).map { Int64(buf[$0]) }
                case .int16:
                    tensor.ints = (0..<count).map { Int64(buf.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) }
                case .uint16:
                    tensor.ints = (0..<count).map { Int64(buf.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self)) }
                default: break
                }
            }
            if type == .float16 {
                throw reader.error("\(label) is float16, which colorcam does not support", at: start)
            }
        } else {
            switch type {
            case .float: break
            case .double: tensor.floats = doubles.map { Float($0) }
            case .int32, .int16, .int8, .uint8, .uint16, .bool: tensor.ints = int32Data
            case .int64, .uint64, .uint32: break
            default: throw reader.error("\(label) has unsupported data type \(tensor.dataType)", at: start)
            }
            let have = (type == .float || type == .double) ? tensor.floats.count : tensor.ints.count
            guard have == count else {
                throw reader.error("\(label) has \(have) elements, dims \(tensor.dims) need \(count)", at: start)
            }
        }
        if type == .double { tensor.dataType = ONNXDataType.float.rawValue }
        return tensor
    }
}

extension ONNXValueInfo {
    static func decode(_ reader: inout ProtobufReader) throws -> ONNXValueInfo {
        var info = ONNXValueInfo()
        while !reader.isAtEnd {
            let (field, wire) = try reader.readKey()
            switch (field, wire) {
            case (1, .lengthDelimited): info.name = try reader.readString()
            case (2, .lengthDelimited):
                var typeProto = try reader.sub()
                while !typeProto.isAtEnd {
                    let (f, w) = try typeProto.readKey()
                    guard f == 1, w == .lengthDelimited else { try typeProto.skip(w); continue }
                    var tensorType = try typeProto.sub()
                    while !tensorType.isAtEnd {
                        let (tf, tw) = try tensorType.readKey()
                        switch (tf, tw) {
                        case (1, .varint): info.elementType = try tensorType.readInt64(tw)
                        case (2, .lengthDelimited):
                            info.hasShape = true
                            var shape = try tensorType.sub()
                            while !shape.isAtEnd {
                                let (sf, sw) = try shape.readKey()
                                guard sf == 1, sw == .lengthDelimited else { try shape.skip(sw); continue }
                                var dim = try shape.sub()
                                var value: Int?
                                while !dim.isAtEnd {
                                    let (df, dw) = try dim.readKey()
                                    if df == 1 && dw == .varint {
                                        let v = try dim.readInt64(dw)
                                        value = v > 0 && v <= Int64(Int32.max) ? Int(v) : nil
                                    } else {
                                        try dim.skip(dw)
                                    }
                                }
                                info.dims.append(value)
                            }
                        default: try tensorType.skip(tw)
                        }
                    }
                }
            default: try reader.skip(wire)
            }
        }
        return info
    }
}
