import InferKernelSet

/// How an operator is computed: the naive reference loops, or the fast path (im2col + OpenBLAS sgemm, packed
/// weights, fused epilogues).
public enum EngineMode: String, Sendable {
    case reference
    case fast
}

/// One prepared operator step. `run` reads and writes the arena at offsets fixed at prepare time.
///
/// Contract: `run` allocates nothing, never blocks on I/O, and never mutates the kernel (so a prepared model can
/// be run repeatedly from one thread at a time).
protocol Kernel: AnyObject {
    func run(_ arena: UnsafeMutablePointer<Float>)
}

/// An activation fused into an operator's epilogue.
enum FusedActivation: Equatable {
    case none
    case relu
    case leakyRelu(Float)
    case clip(Float, Float)

    @inline(__always)
    func apply(_ x: Float) -> Float {
        switch self {
        case .none: return x
        case .relu: return max(x, 0)
        case .leakyRelu(let a): return x < 0 ? x * a : x
        case .clip(let lo, let hi): return min(max(x, lo), hi)
        }
    }

    /// The activation in the kernels' branch-free form.
    var form: Activation {
        switch self {
        case .none: return .identity
        case .relu: return Activation(slope: 1, low: 0, high: .infinity)
        case .leakyRelu(let a): return Activation(slope: a, low: -.infinity, high: .infinity)
        case .clip(let lo, let hi): return Activation(slope: 1, low: lo, high: hi)
        }
    }
}

/// What an operator needs to know at prepare time: its node, opset, input shapes and any constant inputs.
struct OpContext {
    let node: ONNXNode
    let opset: Int64
    /// Shapes of the inputs; nil for an omitted optional input (empty name).
    let inputShapes: [[Int]?]
    /// Constant values of inputs known at load time.
    let consts: [ConstValue?]
    let mode: EngineMode
    let file: String
    /// The instruction set's kernels the fast path's kernels call.
    let kernels: any KernelSet.Type

    var label: String {
        "'\(node.name.isEmpty ? node.outputs.first ?? "?" : node.name)' (\(node.opType), opset \(opset))"
    }

    func error(_ message: String) -> InferError { InferError(.badData, file: file, node: label, message) }

    func shape(_ i: Int) throws -> [Int] {
        guard i < inputShapes.count, let s = inputShapes[i] else { throw error("input \(i) is missing") }
        return s
    }
    func has(_ i: Int) -> Bool { i < inputShapes.count && inputShapes[i] != nil }

    func int(_ name: String, _ defaultValue: Int) throws -> Int {
        guard let a = node.attributes[name] else { return defaultValue }
        guard case .int(let v) = a else { throw error("attribute \(name) should be an int") }
        return Int(clamping: v)
    }
    func float(_ name: String, _ defaultValue: Float) throws -> Float {
        guard let a = node.attributes[name] else { return defaultValue }
        guard case .float(let v) = a else { throw error("attribute \(name) should be a float") }
        return v
    }
    func string(_ name: String, _ defaultValue: String) throws -> String {
        guard let a = node.attributes[name] else { return defaultValue }
        guard case .string(let v) = a else { throw error("attribute \(name) should be a string") }
        return v
    }
    func ints(_ name: String) throws -> [Int]? {
        guard let a = node.attributes[name] else { return nil }
        guard case .ints(let v) = a else { throw error("attribute \(name) should be ints") }
        return v.map { Int(clamping: $0) }
    }
    func floats(_ name: String) throws -> [Float]? {
        guard let a = node.attributes[name] else { return nil }
        guard case .floats(let v) = a else { throw error("attribute \(name) should be floats") }
        return v
    }

    /// A constant input's values as ints; throws when the input is present but not constant.
    func constInts(_ i: Int) throws -> [Int64]? {
        guard has(i) else { return nil }
        guard let c = consts[i] else { throw error("input \(i) must be a constant (computed at load time)") }
        return c.asInts
    }
    func constFloats(_ i: Int) throws -> [Float]? {
        guard has(i) else { return nil }
        guard let c = consts[i] else { throw error("input \(i) must be a constant (computed at load time)") }
        return c.asFloats
    }

    /// Normalises a possibly negative axis against `rank`.
    func axis(_ a: Int, rank: Int) throws -> Int {
        let r = a < 0 ? a + rank : a
        guard r >= 0 && r < rank else { throw error("axis \(a) is out of range for rank \(rank)") }
        return r
    }
}

/// Arena offsets handed to a kernel builder.
struct KernelSlots {
    /// Offset of each input that the plan reads from the arena (nil for omitted or captured inputs).
    var inputs: [Int?]
    var outputs: [Int]
    /// Offset of this step's scratch region (size `OpPlan.scratchFloats`).
    var scratch: Int
}

/// What preparing one operator yields: output shapes, scratch needs, cost and a kernel builder.
struct OpPlan {
    var outputShapes: [[Int]]
    /// Floats of arena scratch the kernel needs while running (shared between steps).
    var scratchFloats = 0
    /// Floating-point operations per run (multiply-add counted as 2).
    var flops: Double = 0
    /// Inputs the kernel captures at build time (weights) and so needs no arena slot for.
    var capturedInputs: Set<Int> = []
    /// Appended to the step's label in profiles when the kernel's method matters (e.g. ` F(2x2,3x3)`).
    var labelSuffix = ""
    var build: (KernelSlots) throws -> Kernel
}
