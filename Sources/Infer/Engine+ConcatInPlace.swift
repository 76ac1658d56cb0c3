/// Concat elimination (fast mode only): when a Concat's inputs are contiguous slices of its output (every axis
/// before the concat axis has size 1, as for NCHW channel concats at batch 1) and each input is a tensor computed
/// by a run-time step (not the graph input, a constant or a graph output, and not sliced into another Concat), the
/// producers write straight into their slice of the Concat's output and the Concat step disappears (a U-Net
/// decoder's skip concats then cost nothing). Other readers of an input (the encoder's MaxPool reading a skip) read
/// the slice.
///
/// The memory plan allocates the Concat output when the first of its producers runs and releases it after the
/// last use of the output or of any input; the inputs are never allocated or released on their own.
extension InferenceEngine {
    /// Where an eliminated Concat's input lives: `offset` floats into the Concat output `concat`.
    struct ConcatSlice {
        var concat: String
        var offset: Int
    }

    /// Removes the Concats that can be computed in place and returns the slices their inputs become.
    static func concatsInPlace(
        _ nodes: [RuntimeNode], shapes: [String: [Int]], consts: [String: ConstValue],
        graphInput: String, graphOutputs: Set<String>
    )
        -> (nodes: [RuntimeNode], slices: [String: ConcatSlice])
    {
        var produced: Set<String> = []
        for n in nodes { for o in n.node.outputs where !o.isEmpty { produced.insert(o) } }
        var slices: [String: ConcatSlice] = [:]
        var eliminated: Set<String> = []
        var kept: [RuntimeNode] = []
        for n in nodes {
            let node = n.node
            guard node.opType == "Concat", let out = node.outputs.first, let outShape = shapes[out],
                case .int(let rawAxis)? = node.attributes["axis"]
            else {
                kept.append(n)
                continue
            }
            let rank = outShape.count
            let axis = Int(rawAxis) < 0 ? Int(rawAxis) + rank : Int(rawAxis)
            let inputs = node.inputs
            let eligible =
                axis >= 0 && axis < rank && outShape[..<axis].allSatisfy({ $0 == 1 })
                && !eliminated.contains(out) && Set(inputs).count == inputs.count
                && inputs.allSatisfy { name in
                    !name.isEmpty && name != graphInput && consts[name] == nil && produced.contains(name)
                        && !graphOutputs.contains(name) && shapes[name] != nil && slices[name] == nil
                        && !eliminated.contains(name)  // no nested slices
                }
            guard eligible else {
                kept.append(n)
                continue
            }
            var offset = 0
            for name in inputs {
                slices[name] = ConcatSlice(concat: out, offset: offset)
                offset += shapes[name]!.reduce(1, *)
            }
            eliminated.insert(out)
        }
        return (kept, slices)
    }
}
