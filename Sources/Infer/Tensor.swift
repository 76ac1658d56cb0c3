/// A dense float32 tensor, row-major; images are NCHW (batch, channel, row, column).
///
/// `shape` lists the extent of each axis; `strides` are the element strides of the contiguous row-major layout
/// (last axis stride 1, axis k stride = product of the extents after k). Element `[i0, …, in]` lives at
/// `data[Σ ik·strides[k]]`. Value type (copy-on-write `data`); not for the hot loop, which works on arena offsets.
public struct Tensor: Sendable, Equatable {
    public var shape: [Int]
    public var data: [Float]

    /// Element strides of the contiguous row-major layout, in elements.
    public var strides: [Int] { contiguousStrides(shape) }
    public var count: Int { data.count }

    /// - Precondition: `data.count` equals the product of `shape`.
    public init(shape: [Int], data: [Float]) {
        precondition(shape.reduce(1, *) == data.count, "tensor data count does not match shape \(shape)")
        self.shape = shape
        self.data = data
    }

    public init(zeros shape: [Int]) {
        self.shape = shape
        self.data = [Float](repeating: 0, count: shape.reduce(1, *))
    }
}

/// Row-major strides in elements for `shape`.
func contiguousStrides(_ shape: [Int]) -> [Int] {
    var strides = [Int](repeating: 1, count: shape.count)
    var running = 1
    for axis in stride(from: shape.count - 1, through: 0, by: -1) {
        strides[axis] = running
        running *= shape[axis]
    }
    return strides
}

/// A value known at load time: an initializer, a `Constant`, or a folded shape computation.
///
/// Float tensors carry `floats`; integer tensors (shapes, indices, axes) carry `ints`.
struct ConstValue {
    var shape: [Int]
    var floats: [Float]?
    var ints: [Int64]?

    init(shape: [Int], floats: [Float]) { self.shape = shape; self.floats = floats }
    init(shape: [Int], ints: [Int64]) { self.shape = shape; self.ints = ints }

    init(_ tensor: ONNXTensor) {
        shape = tensor.dims
        if tensor.dataType == ONNXDataType.float.rawValue { floats = tensor.floats } else { ints = tensor.ints }
    }

    var count: Int { shape.reduce(1, *) }
    var isInt: Bool { ints != nil }

    /// The values as floats (ints converted).
    var asFloats: [Float] { floats ?? ints!.map { Float($0) } }
    /// The values as ints (floats truncated).
    var asInts: [Int64] { ints ?? floats!.map { Int64($0) } }
}
