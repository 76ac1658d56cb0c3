import Foundation

/// The trainer's operators: forward (the same semantics as the engine's, read through the engine's attribute and
/// geometry code: `OpContext`, `ConvGeometry`, `ResizeOp.Geometry`) and backward (input gradients from the output's).
///
/// Plain loops plus sgemm for convolutions (`TrainOps+Conv.swift`); allocates per call; one thread per call.
enum TrainOps {
    static let unary: Set<String> = ["Relu", "LeakyRelu", "Tanh", "Sigmoid", "Identity", "Dropout"]
    static let binary: Set<String> = ["Add", "Sub", "Mul", "Div"]
    static let others: Set<String> = [
        "Conv", "ConvTranspose", "Resize", "Upsample", "Concat", "Softmax", "BatchNormalization"
    ]

    /// Whether the trainer has a backward pass for `opType`.
    static func supports(_ opType: String) -> Bool {
        unary.contains(opType) || binary.contains(opType) || others.contains(opType)
    }

    static func context(_ node: ONNXNode, _ inputs: [Tensor?], opset: Int64, file: String) -> OpContext {
        OpContext(
            node: node, opset: opset, inputShapes: inputs.map { $0?.shape },
            consts: inputs.map { $0.map { ConstValue(shape: $0.shape, floats: $0.data) } }, mode: .reference,
            file: file, kernels: InstructionSet.baseline.kernels)
    }

    /// The node's first output from its inputs (nil for an omitted optional input).
    static func forward(_ node: ONNXNode, _ inputs: [Tensor?], opset: Int64, file: String) throws -> Tensor {
        let ctx = context(node, inputs, opset: opset, file: file)
        let x = try input(inputs, 0, ctx)
        switch node.opType {
        case "Relu": return x.mapped { max($0, 0) }
        case "LeakyRelu":
            let alpha = try ctx.float("alpha", 0.01)
            return x.mapped { $0 < 0 ? $0 * alpha : $0 }
        case "Tanh": return x.mapped { Foundation.tanh($0) }
        case "Sigmoid": return x.mapped { 1 / (1 + Foundation.exp(-$0)) }
        case "Identity", "Dropout": return x
        case "Add", "Sub", "Mul", "Div":
            let y = try input(inputs, 1, ctx)
            let shape = try BinaryOp.broadcastShape(x.shape, y.shape, ctx)
            var out = Tensor(zeros: shape)
            let ix = broadcastIndex(x.shape, to: shape), iy = broadcastIndex(y.shape, to: shape)
            out.data.withUnsafeMutableBufferPointer { o in
                x.data.withUnsafeBufferPointer { a in
                    y.data.withUnsafeBufferPointer { b in
                        ix.withUnsafeBufferPointer { ia in
                            iy.withUnsafeBufferPointer { ib in
                                switch node.opType {
                                case "Add": for i in 0..<o.count { o[i] = a[ia[i]] + b[ib[i]] }
                                case "Sub": for i in 0..<o.count { o[i] = a[ia[i]] - b[ib[i]] }
                                case "Mul": for i in 0..<o.count { o[i] = a[ia[i]] * b[ib[i]] }
                                default: for i in 0..<o.count { o[i] = a[ia[i]] / b[ib[i]] }
                                }
                            }
                        }
                    }
                }
            }
            return out
        case "Conv", "ConvTranspose":
            return try convForward(
                ctx, x: x, w: try input(inputs, 1, ctx), b: inputs.count > 2 ? inputs[2] : nil,
                transposed: node.opType == "ConvTranspose")
        case "Resize", "Upsample": return try resize(ctx, x, grad: nil)
        case "Concat":
            let axis = try ctx.axis(try ctx.int("axis", 0), rank: x.shape.count)
            return try concat(inputs.compactMap { $0 }, axis: axis, ctx)
        case "Softmax":
            let (outer, length, inner) = try softmaxExtent(ctx, x.shape)
            var y = x
            var peak = [Float](repeating: 0, count: inner), sum = peak
            y.data.withUnsafeMutableBufferPointer { yp in
                for o in 0..<outer {
                    let base = yp.baseAddress! + o * length * inner
                    for j in 0..<inner { peak[j] = base[j]; sum[j] = 0 }
                    for l in 1..<max(1, length) { for j in 0..<inner { peak[j] = max(peak[j], base[l * inner + j]) } }
                    for l in 0..<length {
                        for j in 0..<inner {
                            let e = Foundation.exp(base[l * inner + j] - peak[j])
                            base[l * inner + j] = e
                            sum[j] += e
                        }
                    }
                    for j in 0..<inner { sum[j] = 1 / sum[j] }
                    for l in 0..<length { for j in 0..<inner { base[l * inner + j] *= sum[j] } }
                }
            }
            return y
        case "BatchNormalization":
            let (gain, shift) = try BatchNormOp.affine(ctx, channels: x.shape[1])
            var y = x
            forEachChannel(x.shape) { c, range in
                for i in range { y.data[i] = x.data[i] * gain[c] + shift[c] }
            }
            return y
        default:
            throw ctx.error("has no backward pass in colorcam's trainer")
        }
    }

    /// Gradients of the node's inputs given its output's gradient `dy`; nil where `wants` is false or the input
    /// is absent.
    static func backward(
        _ node: ONNXNode, _ inputs: [Tensor?], output y: Tensor, dy: Tensor, wants: [Bool], opset: Int64, file: String
    ) throws -> [Tensor?] {
        let ctx = context(node, inputs, opset: opset, file: file)
        let x = try input(inputs, 0, ctx)
        var grads = [Tensor?](repeating: nil, count: inputs.count)
        switch node.opType {
        case "Relu": grads[0] = zipped(dy, x) { g, v in v > 0 ? g : 0 }
        case "LeakyRelu":
            let alpha = try ctx.float("alpha", 0.01)
            grads[0] = zipped(dy, x) { g, v in v > 0 ? g : g * alpha }
        case "Tanh": grads[0] = zipped(dy, y) { g, v in g * (1 - v * v) }
        case "Sigmoid": grads[0] = zipped(dy, y) { g, v in g * v * (1 - v) }
        case "Identity", "Dropout": grads[0] = dy
        case "Add", "Sub", "Mul", "Div":
            let b = try input(inputs, 1, ctx)
            let ix = broadcastIndex(x.shape, to: dy.shape), ib = broadcastIndex(b.shape, to: dy.shape)
            var da = Tensor(zeros: x.shape), db = Tensor(zeros: b.shape)
            let op = node.opType
            da.data.withUnsafeMutableBufferPointer { ga in
                db.data.withUnsafeMutableBufferPointer { gb in
                    x.data.withUnsafeBufferPointer { av in
                        b.data.withUnsafeBufferPointer { bv in
                            dy.data.withUnsafeBufferPointer { g in
                                ix.withUnsafeBufferPointer { ia in
                                    ib.withUnsafeBufferPointer { jb in
                                        switch op {
                                        case "Add":
                                            for i in 0..<g.count { ga[ia[i]] += g[i]; gb[jb[i]] += g[i] }
                                        case "Sub":
                                            for i in 0..<g.count { ga[ia[i]] += g[i]; gb[jb[i]] -= g[i] }
                                        case "Mul":
                                            for i in 0..<g.count {
                                                ga[ia[i]] += g[i] * bv[jb[i]]; gb[jb[i]] += g[i] * av[ia[i]]
                                            }
                                        default:
                                            for i in 0..<g.count {
                                                let q = bv[jb[i]]
                                                ga[ia[i]] += g[i] / q; gb[jb[i]] -= g[i] * av[ia[i]] / (q * q)
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            grads[0] = wants[0] ? da : nil
            grads[1] = wants[1] ? db : nil
        case "Conv", "ConvTranspose":
            let w = try input(inputs, 1, ctx)
            let g = try convBackward(
                ctx, x: x, w: w, hasBias: inputs.count > 2 && inputs[2] != nil, dy: dy, wants: wants,
                transposed: node.opType == "ConvTranspose")
            for i in 0..<min(3, grads.count) { grads[i] = g[i] }
        case "Resize", "Upsample": grads[0] = try resize(ctx, x, grad: dy)
        case "Concat":
            let axis = try ctx.axis(try ctx.int("axis", 0), rank: x.shape.count)
            let outer = dy.shape[..<axis].reduce(1, *), inner = dy.shape[(axis + 1)...].reduce(1, *)
            var offset = 0
            for (i, t) in inputs.enumerated() {
                guard let t else { continue }
                let len = t.shape[axis]
                if wants[i] {
                    var g = Tensor(zeros: t.shape)
                    for o in 0..<outer {
                        for l in 0..<len * inner {
                            g.data[o * len * inner + l] = dy.data[(o * dy.shape[axis] + offset) * inner + l]
                        }
                    }
                    grads[i] = g
                }
                offset += len
            }
        case "Softmax":
            let (outer, length, inner) = try softmaxExtent(ctx, x.shape)
            var dx = Tensor(zeros: x.shape)
            var dot = [Float](repeating: 0, count: inner)
            dx.data.withUnsafeMutableBufferPointer { dp in
                y.data.withUnsafeBufferPointer { yp in
                    dy.data.withUnsafeBufferPointer { gp in
                        for o in 0..<outer {
                            let off = o * length * inner
                            for j in 0..<inner { dot[j] = 0 }
                            for l in 0..<length {
                                for j in 0..<inner { dot[j] += gp[off + l * inner + j] * yp[off + l * inner + j] }
                            }
                            for l in 0..<length {
                                for j in 0..<inner {
                                    let k = off + l * inner + j
                                    dp[k] = yp[k] * (gp[k] - dot[j])
                                }
                            }
                        }
                    }
                }
            }
            grads[0] = dx
        case "BatchNormalization":
            let (gain, _) = try BatchNormOp.affine(ctx, channels: x.shape[1])
            let eps = try ctx.float("epsilon", 1e-5)
            var dx = Tensor(zeros: x.shape)
            var dScale = [Float](repeating: 0, count: gain.count), dBias = dScale
            let mean = try input(inputs, 3, ctx).data, variance = try input(inputs, 4, ctx).data
            forEachChannel(x.shape) { c, range in
                let inv = 1 / (variance[c] + eps).squareRoot()
                for i in range {
                    dx.data[i] = dy.data[i] * gain[c]
                    dScale[c] += dy.data[i] * (x.data[i] - mean[c]) * inv
                    dBias[c] += dy.data[i]
                }
            }
            grads[0] = dx
            if wants.count > 1 && wants[1] { grads[1] = Tensor(shape: [gain.count], data: dScale) }
            if wants.count > 2 && wants[2] { grads[2] = Tensor(shape: [gain.count], data: dBias) }
        default:
            throw ctx.error("has no backward pass in colorcam's trainer")
        }
        for i in grads.indices where i >= wants.count || !wants[i] { grads[i] = nil }
        return grads
    }

    // MARK: helpers

    static func input(_ inputs: [Tensor?], _ i: Int, _ ctx: OpContext) throws -> Tensor {
        guard i < inputs.count, let t = inputs[i] else { throw ctx.error("input \(i) is missing") }
        return t
    }

    static func zipped(_ a: Tensor, _ b: Tensor, _ f: (Float, Float) -> Float) -> Tensor {
        var out = Tensor(zeros: a.shape)
        out.data.withUnsafeMutableBufferPointer { o in
            a.data.withUnsafeBufferPointer { ap in
                b.data.withUnsafeBufferPointer { bp in for i in 0..<o.count { o[i] = f(ap[i], bp[i]) } }
            }
        }
        return out
    }

    /// For each element of `shape`, the index of the element of a tensor of shape `from` broadcast to it.
    static func broadcastIndex(_ from: [Int], to shape: [Int]) -> [Int] {
        let count = shape.reduce(1, *)
        if from == shape { return Array(0..<count) }
        if from.reduce(1, *) == 1 { return [Int](repeating: 0, count: count) }
        let rank = shape.count
        let strides = BinaryOp.broadcastStrides(from, to: shape)
        var index = [Int](repeating: 0, count: count)
        var counter = [Int](repeating: 0, count: rank)
        var offset = 0
        for i in 0..<count {
            index[i] = offset
            var d = rank - 1
            while d >= 0 {
                counter[d] += 1
                offset += strides[d]
                if counter[d] < shape[d] { break }
                offset -= strides[d] * counter[d]
                counter[d] = 0
                d -= 1
            }
        }
        return index
    }

    static func softmaxExtent(_ ctx: OpContext, _ x: [Int]) throws -> (Int, Int, Int) {
        let rank = max(1, x.count)
        let axis = try ctx.axis(try ctx.int("axis", ctx.opset >= 13 ? -1 : 1), rank: rank)
        let outer = x[..<axis].reduce(1, *)
        let length = ctx.opset >= 13 ? x[axis] : x[axis...].reduce(1, *)
        let inner = ctx.opset >= 13 ? x[(axis + 1)...].reduce(1, *) : 1
        return (outer, length, inner)
    }

    static func concat(_ parts: [Tensor], axis: Int, _ ctx: OpContext) throws -> Tensor {
        var shape = parts[0].shape
        shape[axis] = parts.map { $0.shape[axis] }.reduce(0, +)
        let outer = shape[..<axis].reduce(1, *), inner = shape[(axis + 1)...].reduce(1, *)
        var out = Tensor(zeros: shape)
        var offset = 0
        for t in parts {
            let len = t.shape[axis]
            for o in 0..<outer {
                for l in 0..<len * inner {
                    out.data[(o * shape[axis] + offset) * inner + l] = t.data[o * len * inner + l]
                }
            }
            offset += len
        }
        return out
    }

    static func forEachChannel(_ shape: [Int], _ body: (Int, Range<Int>) -> Void) {
        let channels = shape.count > 1 ? shape[1] : 1
        let plane = shape.count > 2 ? shape[2...].reduce(1, *) : 1
        for n in 0..<shape[0] {
            for c in 0..<channels { body(c, ((n * channels + c) * plane)..<((n * channels + c + 1) * plane)) }
        }
    }

    /// Resize forward (`grad` nil: returns the output) or backward (returns the input's gradient).
    static func resize(_ ctx: OpContext, _ x: Tensor, grad: Tensor?) throws -> Tensor {
        let g = try ResizeOp.geometry(ctx)
        let rank = x.shape.count
        guard rank >= 2, (0..<(rank - 2)).allSatisfy({ g.output[$0] == x.shape[$0] }) else {
            throw ctx.error("the trainer resizes the last two axes only")
        }
        let planes = x.shape[..<(rank - 2)].reduce(1, *)
        let inH = x.shape[rank - 2], inW = x.shape[rank - 1], outH = g.output[rank - 2], outW = g.output[rank - 1]
        var result = grad == nil ? Tensor(zeros: g.output) : Tensor(zeros: x.shape)
        switch g.mode {
        case "nearest":
            let rounding = try ctx.string(
                "nearest_mode", ctx.node.opType == "Upsample" ? "floor" : "round_prefer_floor")
            let rows = g.nearestTable(rank - 2, rounding: rounding), cols = g.nearestTable(rank - 1, rounding: rounding)
            for p in 0..<planes {
                for oy in 0..<outH {
                    for ox in 0..<outW {
                        let o = (p * outH + oy) * outW + ox, i = (p * inH + rows[oy]) * inW + cols[ox]
                        if let grad { result.data[i] += grad.data[o] } else { result.data[o] = x.data[i] }
                    }
                }
            }
        case "linear", "bilinear":
            let rows = g.linearTable(rank - 2), cols = g.linearTable(rank - 1)
            let src = grad ?? x
            result.data.withUnsafeMutableBufferPointer { r in
                src.data.withUnsafeBufferPointer { v in
                    for p in 0..<planes {
                        for oy in 0..<outH {
                            let y0 = (p * inH + Int(rows.lo[oy])) * inW, y1 = (p * inH + Int(rows.hi[oy])) * inW
                            let wy = rows.w[oy]
                            let o = (p * outH + oy) * outW
                            for ox in 0..<outW {
                                let x0 = Int(cols.lo[ox]), x1 = Int(cols.hi[ox]), wx = cols.w[ox]
                                let w00 = (1 - wy) * (1 - wx), w01 = (1 - wy) * wx, w10 = wy * (1 - wx), w11 = wy * wx
                                if grad != nil {
                                    let gv = v[o + ox]
                                    r[y0 + x0] += w00 * gv; r[y0 + x1] += w01 * gv
                                    r[y1 + x0] += w10 * gv; r[y1 + x1] += w11 * gv
                                } else {
                                    r[o + ox] =
                                        w00 * v[y0 + x0] + w01 * v[y0 + x1] + w10 * v[y1 + x0] + w11 * v[y1 + x1]
                                }
                            }
                        }
                    }
                }
            }
        default:
            throw ctx.error("resize mode \(g.mode) has no backward pass in colorcam's trainer")
        }
        return result
    }
}

extension Tensor {
    func mapped(_ f: (Float) -> Float) -> Tensor { Tensor(shape: shape, data: data.map(f)) }
}
