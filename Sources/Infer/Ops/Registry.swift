/// The operator table: which ONNX ops colorcam runs, and how each is planned.
enum OpRegistry {
    /// Ops with a run-time kernel.
    static let kernelOps: Set<String> = [
        "Conv", "ConvTranspose", "BatchNormalization", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Clip", "Add", "Sub",
        "Mul", "Div", "Concat", "Slice", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Gemm", "MatMul",
        "MaxPool", "AveragePool", "GlobalAveragePool", "Resize", "Upsample", "Softmax", "Identity", "Pad", "Gather",
        "Dropout", "Cast"
    ]
    /// Ops that are only evaluated at load time (their outputs are always constants).
    static let loadTimeOps: Set<String> = ["Constant", "Shape", "ConstantOfShape", "Range"]

    /// Opsets colorcam accepts for the default domain.
    static let opsets: ClosedRange<Int64> = 7...21

    static func isSupported(_ op: String) -> Bool { kernelOps.contains(op) || loadTimeOps.contains(op) }

    /// Plans one node with a run-time kernel.
    /// - Throws: `InferError` (`.badData`) when the node does not fit its inputs, or an output would have a negative
    ///   dimension or `Int32.max` elements or more (so later size arithmetic cannot overflow).
    static func plan(_ ctx: OpContext) throws -> OpPlan {
        let plan = try planNode(ctx)
        for shape in plan.outputShapes {
            guard shape.allSatisfy({ $0 >= 0 }) else { throw ctx.error("output shape \(shape) is invalid") }
            try LayoutOps.checkCount(shape, ctx)
        }
        return plan
    }

    private static func planNode(_ ctx: OpContext) throws -> OpPlan {
        switch ctx.node.opType {
        case "Conv": return try ConvOp.plan(ctx)
        case "ConvTranspose": return try ConvTransposeOp.plan(ctx)
        case "BatchNormalization": return try BatchNormOp.plan(ctx)
        case "Relu": return try UnaryOp.plan(ctx, function: .relu)
        case "LeakyRelu": return try UnaryOp.plan(ctx, function: .leakyRelu(try ctx.float("alpha", 0.01)))
        case "Sigmoid": return try UnaryOp.plan(ctx, function: .sigmoid)
        case "Tanh": return try UnaryOp.plan(ctx, function: .tanh)
        case "Clip":
            let (lo, hi) = try UnaryOp.clipBounds(ctx)
            return try UnaryOp.plan(ctx, function: .clip(lo, hi))
        case "Identity", "Dropout": return try UnaryOp.plan(ctx, function: .copy)
        case "Cast":
            guard try ctx.int("to", 1) == 1 else {
                throw ctx.error("only Cast to float of a run-time tensor is supported")
            }
            return try UnaryOp.plan(ctx, function: .copy)
        case "Add": return try BinaryOp.plan(ctx, function: .add)
        case "Sub": return try BinaryOp.plan(ctx, function: .sub)
        case "Mul": return try BinaryOp.plan(ctx, function: .mul)
        case "Div": return try BinaryOp.plan(ctx, function: .div)
        case "Reshape":
            guard let target = try ctx.constInts(1) else { throw ctx.error("shape input missing") }
            return try UnaryOp.plan(
                ctx, function: .copy, outputShape: try LayoutOps.reshape(ctx, shape: try ctx.shape(0), target: target))
        case "Flatten":
            return try UnaryOp.plan(
                ctx, function: .copy, outputShape: try LayoutOps.flatten(ctx, shape: try ctx.shape(0)))
        case "Squeeze":
            return try UnaryOp.plan(
                ctx, function: .copy, outputShape: try LayoutOps.squeeze(ctx, shape: try ctx.shape(0)))
        case "Unsqueeze":
            return try UnaryOp.plan(
                ctx, function: .copy, outputShape: try LayoutOps.unsqueeze(ctx, shape: try ctx.shape(0)))
        case "Transpose": return LayoutOps.plan(try LayoutOps.transpose(ctx, shape: try ctx.shape(0)), captured: [])
        case "Slice": return LayoutOps.plan(try LayoutOps.slice(ctx, shape: try ctx.shape(0)), captured: [1, 2, 3, 4])
        case "Pad":
            let (map, fill) = try LayoutOps.pad(ctx, shape: try ctx.shape(0))
            return LayoutOps.plan(map, fill: fill, captured: [1, 2, 3])
        case "Gather":
            guard let indices = try ctx.constInts(1) else { throw ctx.error("indices missing") }
            return LayoutOps.plan(
                try LayoutOps.gather(
                    ctx, shape: try ctx.shape(0), indices: indices,
                    indexShape: try ctx.shape(1)), captured: [1])
        case "Concat":
            let shapes = try (0..<ctx.inputShapes.count).map { try ctx.shape($0) }
            let (out, axis) = try LayoutOps.concatShape(ctx, shapes: shapes)
            return OpPlan(
                outputShapes: [out],
                build: { slots in
                    ConcatKernel(inputs: slots.inputs.map { $0! }, shapes: shapes, axis: axis, output: slots.outputs[0])
                })
        case "Gemm": return try GemmOp.plan(ctx)
        case "MatMul": return try GemmOp.planMatMul(ctx)
        case "MaxPool": return try PoolOp.plan(ctx, max: true)
        case "AveragePool": return try PoolOp.plan(ctx, max: false)
        case "GlobalAveragePool": return try PoolOp.planGlobalAverage(ctx)
        case "Resize", "Upsample": return try ResizeOp.plan(ctx)
        case "Softmax": return try SoftmaxOp.plan(ctx)
        default: throw ctx.error("unsupported operator")
        }
    }
}
