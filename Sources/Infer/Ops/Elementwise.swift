import InferKernelSet

/// Unary element-wise ops: Relu, LeakyRelu, Sigmoid, Tanh, Clip, Identity (and the reshaping ops that only copy:
/// Reshape, Flatten, Squeeze, Unsqueeze, whose output shapes come from `ShapeOps`).
enum UnaryOp {
    enum Function { case relu, leakyRelu(Float), sigmoid, tanh, clip(Float, Float), copy }

    static func plan(_ ctx: OpContext, function: Function, outputShape: [Int]? = nil) throws -> OpPlan {
        let x = try ctx.shape(0)
        let count = x.reduce(1, *)
        let kernels = ctx.kernels
        var plan = OpPlan(
            outputShapes: [outputShape ?? x],
            build: { slots in
                UnaryKernel(function, input: slots.inputs[0]!, output: slots.outputs[0], count: count, kernels: kernels)
            })
        plan.capturedInputs = Set(1..<max(1, ctx.inputShapes.count))
        return plan
    }

    /// Clip bounds: attributes before opset 11, optional constant inputs from 11.
    static func clipBounds(_ ctx: OpContext) throws -> (Float, Float) {
        if ctx.opset < 11 {
            return (try ctx.float("min", -.greatestFiniteMagnitude), try ctx.float("max", .greatestFiniteMagnitude))
        }
        let lo = try ctx.constFloats(1)?.first ?? -.infinity
        let hi = try ctx.constFloats(2)?.first ?? .infinity
        return (lo, hi)
    }
}

/// A unary op over `count` floats; Sigmoid and Tanh by the kernel set (its vector exponential), in every mode.
final class UnaryKernel: Kernel {
    let function: UnaryOp.Function
    let input: Int, output: Int, count: Int
    let kernels: any KernelSet.Type

    init(_ function: UnaryOp.Function, input: Int, output: Int, count: Int, kernels: any KernelSet.Type) {
        self.function = function; self.input = input; self.output = output; self.count = count
        self.kernels = kernels
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let x = arena + input, y = arena + output
        switch function {
        case .relu: for i in 0..<count { y[i] = max(x[i], 0) }
        case .leakyRelu(let a): for i in 0..<count { let v = x[i]; y[i] = v < 0 ? v * a : v }
        case .sigmoid: kernels.sigmoid(x, y, count: count)
        case .tanh: kernels.tanh(x, y, count: count)
        case .clip(let lo, let hi): for i in 0..<count { y[i] = min(max(x[i], lo), hi) }
        case .copy: if x != y { y.update(from: x, count: count) }
        }
    }
}

/// BatchNormalization in inference mode: `y = (x − mean) / √(var + ε) · scale + B`, per channel (axis 1).
enum BatchNormOp {
    /// Per-channel multiplier and offset, computed once at load time.
    static func affine(_ ctx: OpContext, channels: Int) throws -> (scale: [Float], shift: [Float]) {
        guard let s = try ctx.constFloats(1), let b = try ctx.constFloats(2), let mean = try ctx.constFloats(3),
            let variance = try ctx.constFloats(4),
            [s.count, b.count, mean.count, variance.count].allSatisfy({ $0 == channels })
        else { throw ctx.error("scale/B/mean/var must be constants with \(channels) values") }
        let eps = try ctx.float("epsilon", 1e-5)
        var scale = [Float](repeating: 0, count: channels), shift = scale
        for c in 0..<channels {
            scale[c] = s[c] / (variance[c] + eps).squareRoot()
            shift[c] = b[c] - mean[c] * scale[c]
        }
        return (scale, shift)
    }

    static func plan(_ ctx: OpContext) throws -> OpPlan {
        let x = try ctx.shape(0)
        guard x.count >= 2 else { throw ctx.error("input must have a channel axis") }
        if try ctx.int("training_mode", 0) != 0 { throw ctx.error("training_mode=1 is not supported") }
        let (scale, shift) = try affine(ctx, channels: x[1])
        let inner = x[2...].reduce(1, *)
        var plan = OpPlan(
            outputShapes: [x],
            build: { slots in
                ChannelAffineKernel(
                    scale: scale, shift: shift, batch: x[0], inner: inner,
                    input: slots.inputs[0]!, output: slots.outputs[0])
            })
        plan.capturedInputs = [1, 2, 3, 4]
        return plan
    }
}

final class ChannelAffineKernel: Kernel {
    let scale: [Float], shift: [Float]
    let batch: Int, inner: Int, input: Int, output: Int

    init(scale: [Float], shift: [Float], batch: Int, inner: Int, input: Int, output: Int) {
        self.scale = scale; self.shift = shift; self.batch = batch; self.inner = inner
        self.input = input; self.output = output
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let channels = scale.count
        for n in 0..<batch {
            for c in 0..<channels {
                let base = (n * channels + c) * inner
                let x = arena + input + base, y = arena + output + base
                let a = scale[c], b = shift[c]
                for i in 0..<inner { y[i] = x[i] * a + b }
            }
        }
    }
}

/// Add, Sub, Mul, Div with numpy-style (multidirectional) broadcasting.
enum BinaryOp {
    enum Function { case add, sub, mul, div }

    static func broadcastShape(_ a: [Int], _ b: [Int], _ ctx: OpContext) throws -> [Int] {
        let rank = max(a.count, b.count)
        let pa = [Int](repeating: 1, count: rank - a.count) + a
        let pb = [Int](repeating: 1, count: rank - b.count) + b
        return try (0..<rank).map { i in
            if pa[i] == pb[i] || pb[i] == 1 { return pa[i] }
            if pa[i] == 1 { return pb[i] }
            throw ctx.error("shapes \(a) and \(b) do not broadcast")
        }
    }

    /// Element strides of `shape` viewed in `outShape` (0 on broadcast axes).
    static func broadcastStrides(_ shape: [Int], to outShape: [Int]) -> [Int] {
        let padded = [Int](repeating: 1, count: outShape.count - shape.count) + shape
        let strides = contiguousStrides(padded)
        return (0..<outShape.count).map { padded[$0] == 1 && outShape[$0] != 1 ? 0 : strides[$0] }
    }

    static func plan(_ ctx: OpContext, function: Function) throws -> OpPlan {
        let a = try ctx.shape(0), b = try ctx.shape(1)
        let out = try broadcastShape(a, b, ctx)
        return OpPlan(
            outputShapes: [out],
            build: { slots in
                BinaryKernel(
                    function, aShape: a, bShape: b, outShape: out, a: slots.inputs[0]!, b: slots.inputs[1]!,
                    output: slots.outputs[0])
            })
    }
}

final class BinaryKernel: Kernel {
    let function: BinaryOp.Function
    let a: Int, b: Int, output: Int
    let rowLength: Int, strideA: Int, strideB: Int
    /// Offsets of each output row's first `a` and `b` element (rows run along the last axis).
    let rowsA: [Int], rowsB: [Int]

    init(_ function: BinaryOp.Function, aShape: [Int], bShape: [Int], outShape: [Int], a: Int, b: Int, output: Int) {
        self.function = function; self.a = a; self.b = b; self.output = output
        let shape = outShape.isEmpty ? [1] : outShape
        let sa = BinaryOp.broadcastStrides(aShape, to: shape), sb = BinaryOp.broadcastStrides(bShape, to: shape)
        rowLength = shape.last!
        strideA = sa.last!; strideB = sb.last!
        let rows = shape.dropLast().reduce(1, *)
        var ra = [Int](repeating: 0, count: rows), rb = ra
        var index = [Int](repeating: 0, count: shape.count - 1)
        for r in 0..<rows {
            var oa = 0, ob = 0
            for d in 0..<index.count { oa += index[d] * sa[d]; ob += index[d] * sb[d] }
            ra[r] = oa; rb[r] = ob
            var d = index.count - 1
            while d >= 0 { index[d] += 1; if index[d] < shape[d] { break }; index[d] = 0; d -= 1 }
        }
        rowsA = ra; rowsB = rb
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let n = rowLength, sa = strideA, sb = strideB
        for r in 0..<rowsA.count {
            let x = arena + a + rowsA[r], y = arena + b + rowsB[r], z = arena + output + r * n
            switch function {
            case .add: for i in 0..<n { z[i] = x[i * sa] + y[i * sb] }
            case .sub: for i in 0..<n { z[i] = x[i * sa] - y[i * sb] }
            case .mul: for i in 0..<n { z[i] = x[i * sa] * y[i * sb] }
            case .div: for i in 0..<n { z[i] = x[i * sa] / y[i * sb] }
            }
        }
    }
}

/// Softmax: from opset 13 over one axis (default −1); before 13 over the flattened axes from `axis` (default 1).
enum SoftmaxOp {
    static func plan(_ ctx: OpContext) throws -> OpPlan {
        let x = try ctx.shape(0)
        let rank = max(1, x.count)
        let axis = try ctx.axis(try ctx.int("axis", ctx.opset >= 13 ? -1 : 1), rank: rank)
        let outer = x[..<axis].reduce(1, *)
        let length = ctx.opset >= 13 ? x[axis] : x[axis...].reduce(1, *)
        let inner = ctx.opset >= 13 ? x[(axis + 1)...].reduce(1, *) : 1
        let kernels = ctx.kernels
        var plan = OpPlan(
            outputShapes: [x],
            build: { slots in
                SoftmaxKernel(
                    outer: outer, length: length, inner: inner, input: slots.inputs[0]!,
                    output: slots.outputs[0], scratch: slots.scratch, kernels: kernels)
            })
        plan.scratchFloats = 2 * inner
        return plan
    }
}

/// Softmax by the kernel set's `softmaxColumns` (the set's exponential, vectorised across the `inner` columns).
final class SoftmaxKernel: Kernel {
    let outer: Int, length: Int, inner: Int, input: Int, output: Int, scratch: Int
    let kernels: any KernelSet.Type

    init(
        outer: Int, length: Int, inner: Int, input: Int, output: Int, scratch: Int, kernels: any KernelSet.Type
    ) {
        self.outer = outer; self.length = length; self.inner = inner
        self.input = input; self.output = output; self.scratch = scratch; self.kernels = kernels
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        for o in 0..<outer {
            kernels.softmaxColumns(
                arena + input + o * length * inner, arena + output + o * length * inner, length: length,
                inner: inner, peak: arena + scratch, sum: arena + scratch + inner)
        }
    }
}
