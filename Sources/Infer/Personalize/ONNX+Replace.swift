extension ONNXModel {
    /// The model file `bytes` (as decoded into `self`) with the float initializers named in `values` given new
    /// values, written over their `raw_data` in place: the result is the same graph, byte for byte, but for those
    /// values, so every reader (colorcam, onnxruntime) loads it as it loaded the original.
    /// - Throws: `InferError(.badData)` when a name is not a raw float initializer or a count differs.
    public func replacingInitializers(in bytes: [UInt8], file: String, values: [String: Tensor]) throws -> [UInt8] {
        var out = bytes
        var found = Set<String>()
        for t in graph.initializers {
            guard let new = values[t.name] else { continue }
            guard let offset = t.rawDataOffset, t.dataType == ONNXDataType.float.rawValue else {
                throw InferError(.badData, file: file, "initializer '\(t.name)' is not stored as raw float data")
            }
            guard new.count == t.elementCount, offset + 4 * new.count <= out.count else {
                throw InferError(
                    .badData, file: file, "initializer '\(t.name)' has \(t.elementCount) values, not \(new.count)")
            }
            out.withUnsafeMutableBytes { raw in
                for (i, v) in new.data.enumerated() {
                    raw.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: offset + 4 * i, as: UInt32.self)
                }
            }
            found.insert(t.name)
        }
        if let missing = values.keys.first(where: { !found.contains($0) }) {
            throw InferError(.badData, file: file, "the graph has no initializer '\(missing)'")
        }
        return out
    }
}
