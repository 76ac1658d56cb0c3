import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// A model prepared for one input shape: `load → prepare (init) → run`.
///
/// Prepare validates the graph, infers every shape, folds constant and shape subgraphs, fuses (fast mode), packs
/// weights and plans one arena holding every intermediate tensor, so `run` allocates nothing.
///
/// Threading: `run` may be called from one thread at a time (it writes the arena); it never blocks on I/O and never
/// mutates the plan. Ownership: the engine owns its arena and packed weights.
///
/// ```swift
/// let engine = try InferenceEngine(path: "eccv16.onnx", inputShape: [1, 1, 256, 256])
/// try engine.run(input: lightness, output: &ab)
/// ```
///
/// Fed inputs: a graph may have further inputs that the caller sets between runs (a colorizer's hint image and
/// mask), named in `feeding`. Each is an *optional* input (a graph input with an initialiser, which gives its
/// default) or an input with a fully declared shape (default zeros). It lives in the arena for the engine's life:
/// `fedInput(_:)` gives its values to write before `run`; they stay until changed. Not folded as constants.
///
/// Tapped tensors: intermediate tensors named in `tapping` (a colorizer's ab distribution) are kept whole until the
/// run ends — planned like the graph's output, never fused away or overwritten — so `tapped(_:)` reads them after
/// `run`.
public final class InferenceEngine {
    public let file: String
    public let mode: EngineMode
    public let inputName: String
    public let outputName: String
    /// NCHW shape the engine was prepared for.
    public let inputShape: [Int]
    public let outputShape: [Int]
    /// Floating-point operations per run (multiply-add counted as 2).
    public let flops: Double
    /// Floats in the arena (intermediates + constants + scratch).
    public let arenaFloats: Int
    /// Number of run-time steps after folding and fusion.
    public var stepCount: Int { kernels.count }
    /// Per step: op type (with kernel size for convs, e.g. `Conv 3x3`) and FLOPs, for profiles.
    public let stepSummary: [(label: String, flops: Double)]

    /// Per step: input (and weight) shapes → output shape, for profiles.
    public let stepShapes: [String]

    /// The instruction set whose kernels run this engine's hot loops.
    public let instructionSet: InstructionSet
    /// The fed inputs (see the type's doc): name → shape, offset in the arena.
    private let fed: [String: (shape: [Int], offset: Int)]
    /// The tapped tensors (see the type's doc): name → shape, offset in the arena.
    private let taps: [String: (shape: [Int], offset: Int)]

    private let kernels: [Kernel]
    private let arena: UnsafeMutablePointer<Float>
    private let inputOffset: Int
    private let outputOffset: Int

    /// Loads and prepares an ONNX file.
    /// - Throws: `InferError` (`.missingInput` when unreadable, `.badData` for a bad model).
    public convenience init(
        path: String, inputShape: [Int]? = nil, mode: EngineMode = .fast, instructionSet: InstructionSet? = nil,
        feeding: [String] = [], tapping: [String] = []
    ) throws {
        let bytes = try readWholeFile(path, what: "model file")
        let model = try ONNXModel.decode(bytes, file: path)
        try self.init(
            model: model, file: path, inputShape: inputShape, mode: mode, instructionSet: instructionSet,
            feeding: feeding, tapping: tapping)
    }

    /// Prepares a decoded model for `inputShape` (default: the shape the model declares), with the kernels of
    /// `instructionSet` (default: this process's choice, `InstructionSetChoice.forProcess()`), and `feeding` the
    /// named further inputs (see the type's doc; an unknown name, or one with neither an initialiser nor a static
    /// shape, is `.badData`), and keeping the named intermediate tensors for `tapped(_:)` (one that no step computes
    /// is `.badData`).
    public init(
        model: ONNXModel, file: String = "<memory>", inputShape requested: [Int]? = nil,
        mode: EngineMode = .fast, instructionSet: InstructionSet? = nil, feeding: [String] = [],
        tapping: [String] = []
    ) throws {
        self.file = file
        self.mode = mode
        let isa = try instructionSet ?? InstructionSetChoice.forProcess().set
        self.instructionSet = isa
        let opset = model.defaultOpset
        guard OpRegistry.opsets.contains(opset) else {
            throw InferError(.badData, file: file, "default-domain opset \(opset) is not supported (7...21)")
        }
        let graph = model.graph
        var consts: [String: ConstValue] = [:]
        for t in graph.initializers { consts[t.name] = ConstValue(t) }
        let fedDefaults = try Self.fedInputDefaults(feeding, graph: graph, consts: &consts, file: file)
        let runtimeInputs = graph.inputs.filter { consts[$0.name] == nil && fedDefaults[$0.name] == nil }
        guard runtimeInputs.count == 1, let input = runtimeInputs.first else {
            throw InferError(
                .badData, file: file, "the graph has \(runtimeInputs.count) run-time inputs; colorcam needs exactly 1")
        }
        guard graph.outputs.count == 1, let output = graph.outputs.first else {
            throw InferError(
                .badData, file: file, "the graph has \(graph.outputs.count) outputs; colorcam needs exactly 1")
        }
        guard input.elementType == ONNXDataType.float.rawValue || input.elementType == 0 else {
            throw InferError(
                .badData, file: file, "input '\(input.name)' has element type \(input.elementType), not float")
        }
        let declared = input.dims
        let shape: [Int]
        if let requested {
            guard !input.hasShape || requested.count == declared.count else {
                throw InferError(
                    .badData, file: file,
                    "shape mismatch: input '\(input.name)' has rank \(declared.count), asked for \(requested)")
            }
            shape = requested
        } else {
            guard input.hasShape, declared.allSatisfy({ $0 != nil }) else {
                throw InferError(
                    .usage, file: file, "input '\(input.name)' has symbolic dims \(declared); give an input size")
            }
            shape = declared.map { $0! }
        }
        guard shape.allSatisfy({ $0 >= 1 }), shape.reduce(1, *) < 1 << 30 else {
            throw InferError(.badData, file: file, "input shape \(shape) is invalid")
        }
        inputName = input.name
        outputName = output.name
        inputShape = shape

        // Shape inference and constant folding, in topological order.
        let order = try Self.topologicalOrder(
            model, file: file, defined: Set(consts.keys).union([input.name]).union(fedDefaults.keys))
        var shapes: [String: [Int]] = [input.name: shape]
        for (name, value) in fedDefaults { shapes[name] = value.shape }
        for (name, c) in consts { shapes[name] = c.shape }
        var runtime: [RuntimeNode] = []
        func context(_ node: ONNXNode, _ mode: EngineMode) -> OpContext {
            OpContext(
                node: node, opset: opset,
                inputShapes: node.inputs.map { $0.isEmpty ? nil : shapes[$0] },
                consts: node.inputs.map { $0.isEmpty ? nil : consts[$0] }, mode: mode, file: file,
                kernels: isa.kernels)
        }
        for node in order {
            let ctx = context(node, .reference)
            if let values = try ConstFolder.fold(ctx) {
                for (name, value) in zip(node.outputs, values) where !name.isEmpty {
                    consts[name] = value
                    shapes[name] = value.shape
                }
                continue
            }
            let plan = try OpRegistry.plan(ctx)
            for (name, s) in zip(node.outputs, plan.outputShapes) where !name.isEmpty { shapes[name] = s }
            runtime.append(RuntimeNode(node: node))
        }
        guard let outShape = shapes[output.name], consts[output.name] == nil else {
            throw InferError(.badData, file: file, "output '\(output.name)' does not depend on the input")
        }
        if requested == nil, output.hasShape, output.dims.count == outShape.count || output.dims.isEmpty == false {
            let mismatch =
                output.dims.count != outShape.count
                || zip(output.dims, outShape).contains { d, s in d != nil && d != s }
            if mismatch {
                throw InferError(
                    .badData, file: file,
                    "shape mismatch: output '\(output.name)' is declared \(output.dims.map { $0.map(String.init) ?? "?" }) but computes to \(outShape)"
                )
            }
        }
        outputShape = outShape
        for name in tapping
        where shapes[name] == nil || consts[name] != nil || name == output.name || name == input.name
            || fedDefaults[name] != nil
        {
            throw InferError(.badData, file: file, "the graph computes no intermediate tensor '\(name)' to tap")
        }
        // Tapped tensors are outputs too, for fusion, reordering and in-place concatenation.
        let kept = Set([output.name]).union(tapping)
        if mode == .fast {
            runtime = try Self.fuse(
                runtime, consts: &consts, shapes: shapes, graphOutputs: kept,
                opset: opset, file: file)
            for (name, c) in consts where shapes[name] == nil { shapes[name] = c.shape }
            runtime = Self.convBeforeNearestResize(
                runtime, shapes: &shapes, consts: consts,
                graphOutputs: kept)
        }

        var slices: [String: ConcatSlice] = [:]
        if mode == .fast {
            (runtime, slices) = Self.concatsInPlace(
                runtime, shapes: shapes, consts: consts, graphInput: input.name,
                graphOutputs: kept)
        }

        // Final plans and the memory plan.
        var plans: [OpPlan] = []
        for r in runtime { plans.append(try OpRegistry.plan(context(r.node, mode))) }
        var planner = ArenaPlanner()
        var offsets: [String: Int] = [:]
        var constFills: [(Int, [Float])] = []
        var fedSlots: [String: (shape: [Int], offset: Int)] = [:]
        for (name, value) in fedDefaults.sorted(by: { $0.key < $1.key }) {
            let o = planner.reserve(value.count)
            offsets[name] = o
            constFills.append((o, value.asFloats))
            fedSlots[name] = (value.shape, o)
        }
        for (r, plan) in zip(runtime, plans) {
            for (i, name) in r.node.inputs.enumerated() where !name.isEmpty && !plan.capturedInputs.contains(i) {
                if offsets[name] == nil, let c = consts[name] {
                    let o = planner.reserve(c.count)
                    offsets[name] = o
                    constFills.append((o, c.asFloats))
                }
            }
        }
        var lastUse: [String: Int] = [:]
        for (step, r) in runtime.enumerated() { for name in r.node.inputs { lastUse[name] = step } }
        for name in kept { lastUse[name] = runtime.count }
        // An eliminated Concat's output lives until the last read of it or of any of its slices.
        var concatLastUse: [String: Int] = [:]
        for (name, slice) in slices {
            concatLastUse[slice.concat] = max(
                concatLastUse[slice.concat] ?? -1, lastUse[slice.concat] ?? -1,
                lastUse[name] ?? -1)
        }
        offsets[input.name] = planner.allocate(shape.reduce(1, *))
        var totalFlops = 0.0
        var maxScratch = 0
        for (step, (r, plan)) in zip(runtime, plans).enumerated() {
            for (name, s) in zip(r.node.outputs, plan.outputShapes) where !name.isEmpty {
                if let slice = slices[name] {  // written in place into an eliminated Concat's output
                    if offsets[slice.concat] == nil {
                        offsets[slice.concat] = planner.allocate(shapes[slice.concat]!.reduce(1, *))
                    }
                    offsets[name] = offsets[slice.concat]! + slice.offset
                } else {
                    offsets[name] = planner.allocate(s.reduce(1, *))
                }
            }
            for name in Set(r.node.inputs) where lastUse[name] == step && consts[name] == nil && !name.isEmpty {
                if slices[name] == nil, concatLastUse[name] == nil, let o = offsets[name] { planner.release(o) }
            }
            for name in r.node.outputs where !name.isEmpty && lastUse[name] == nil && slices[name] == nil {
                if let o = offsets[name] { planner.release(o) }
            }
            for (name, last) in concatLastUse where last == step {
                if let o = offsets[name] { planner.release(o) }
            }
            totalFlops += plan.flops
            maxScratch = max(maxScratch, plan.scratchFloats)
        }
        let scratch = planner.reserve(maxScratch)
        arenaFloats = planner.end
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: max(1, arenaFloats))
        memory.initialize(repeating: 0, count: max(1, arenaFloats))
        for (o, values) in constFills {
            values.withUnsafeBufferPointer { (memory + o).update(from: $0.baseAddress!, count: values.count) }
        }
        arena = memory
        var built: [Kernel] = []
        for (r, plan) in zip(runtime, plans) {
            let slots = KernelSlots(
                inputs: r.node.inputs.enumerated().map { i, n in
                    n.isEmpty || plan.capturedInputs.contains(i) ? nil : offsets[n]
                },
                outputs: r.node.outputs.map { offsets[$0] ?? 0 }, scratch: scratch)
            built.append(try plan.build(slots))
        }
        kernels = built
        stepSummary = zip(runtime, plans).map { r, plan in
            var label = r.node.opType
            if r.node.opType.hasPrefix("Conv"), let w = shapes[r.node.inputs[1]], w.count == 4 {
                label += " \(w[2])x\(w[3])"
            }
            return (label + plan.labelSuffix, plan.flops)
        }
        stepShapes = zip(runtime, plans).map { r, plan in
            r.node.inputs.compactMap { shapes[$0] }.prefix(2).map { $0.map(String.init).joined(separator: "x") }
                .joined(separator: ", ") + " → "
                + (plan.outputShapes.first ?? []).map(String.init).joined(separator: "x")
        }
        flops = totalFlops
        fed = fedSlots
        taps = Dictionary(uniqueKeysWithValues: Set(tapping).map { ($0, (shapes[$0]!, offsets[$0]!)) })
        inputOffset = offsets[input.name]!
        outputOffset = offsets[output.name]!
    }

    deinit { arena.deallocate() }

    /// Per step: the kernel class that runs it (e.g. `ConvTiledKernel`), for tests of load-time kernel choice.
    var kernelTypeNames: [String] { kernels.map { String(describing: type(of: $0)) } }

    /// The values of fed input `name` (in the arena; write them before `run`, they stay until changed), or nil when
    /// the engine was not prepared feeding it. Same threading as `run`.
    public func fedInput(_ name: String) -> UnsafeMutableBufferPointer<Float>? {
        guard let slot = fed[name] else { return nil }
        return UnsafeMutableBufferPointer(start: arena + slot.offset, count: slot.shape.reduce(1, *))
    }

    /// The shape of fed input `name`, or nil when the engine was not prepared feeding it.
    public func fedShape(_ name: String) -> [Int]? { fed[name]?.shape }

    /// Tapped tensor `name` as the last `run` left it (read it before the next), with its shape; nil when the
    /// engine was not prepared tapping it. Same threading as `run`.
    public func tapped(_ name: String) -> (shape: [Int], values: UnsafeBufferPointer<Float>)? {
        guard let slot = taps[name] else { return nil }
        return (slot.shape, UnsafeBufferPointer(start: arena + slot.offset, count: slot.shape.reduce(1, *)))
    }

    /// Element counts of the input and output.
    public var inputCount: Int { inputShape.reduce(1, *) }
    public var outputCount: Int { outputShape.reduce(1, *) }

    /// Runs the model. Allocates nothing.
    /// - Precondition: `input.count == inputCount`, `output.count == outputCount`.
    public func run(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) {
        precondition(
            input.count == inputCount && output.count == outputCount, "run: buffer sizes do not match the plan")
        (arena + inputOffset).update(from: input.baseAddress!, count: input.count)
        for kernel in kernels { kernel.run(arena) }
        output.baseAddress!.update(from: arena + outputOffset, count: output.count)
    }

    /// Runs the model like `run(input:output:)`, adding each step's CPU time on this thread to `stepNs[i]`
    /// (CPU time, so that other processes on a shared machine do not inflate a step). Allocates nothing.
    public func runProfiled(
        input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>,
        stepNs: UnsafeMutableBufferPointer<Int64>
    ) {
        precondition(stepNs.count == kernels.count && input.count == inputCount && output.count == outputCount)
        (arena + inputOffset).update(from: input.baseAddress!, count: input.count)
        var t0 = threadCPUNs()
        for (i, kernel) in kernels.enumerated() {
            kernel.run(arena)
            let t1 = threadCPUNs()
            stepNs[i] += t1 - t0
            t0 = t1
        }
        output.baseAddress!.update(from: arena + outputOffset, count: output.count)
    }

    /// Convenience for tests and tools: runs on a `Tensor` and returns a new one (allocates).
    public func run(_ input: Tensor) -> Tensor {
        var out = Tensor(zeros: outputShape)
        input.data.withUnsafeBufferPointer { i in out.data.withUnsafeMutableBufferPointer { run(input: i, output: $0) }
        }
        return out
    }
}

extension InferenceEngine {
    /// The default values of each fed input, taken out of `consts` (an initialiser), or zeros of the input's declared
    /// static shape.
    static func fedInputDefaults(
        _ names: [String], graph: ONNXGraph, consts: inout [String: ConstValue], file: String
    ) throws -> [String: ConstValue] {
        var defaults: [String: ConstValue] = [:]
        for name in names {
            guard let declared = graph.inputs.first(where: { $0.name == name }) else {
                throw InferError(.badData, file: file, "the graph has no input '\(name)' to feed")
            }
            if let initial = consts.removeValue(forKey: name) {
                defaults[name] = initial
            } else if declared.hasShape, declared.dims.allSatisfy({ ($0 ?? 0) >= 1 }) {
                let shape = declared.dims.map { $0! }
                defaults[name] = ConstValue(shape: shape, floats: [Float](repeating: 0, count: shape.reduce(1, *)))
            } else {
                throw InferError(
                    .badData, file: file,
                    "input '\(name)' has neither an initialiser nor a static shape (\(declared.dims)): cannot feed it")
            }
            guard declared.elementType == ONNXDataType.float.rawValue || declared.elementType == 0 else {
                throw InferError(
                    .badData, file: file, "input '\(name)' has element type \(declared.elementType), not float")
            }
        }
        return defaults
    }
}

func monotonicNs() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// CPU time consumed by the calling thread, in ns.
func threadCPUNs() -> Int64 { SystemClock.threadCPUNs() }

/// First-fit allocation of arena ranges (in floats, 16-float aligned) for tensors with known lifetimes.
struct ArenaPlanner {
    private(set) var end = 0
    private var free: [(offset: Int, size: Int)] = []
    private var sizes: [Int: Int] = [:]

    static func rounded(_ n: Int) -> Int { (max(n, 1) + 15) & ~15 }

    /// A permanent range (constants, scratch).
    mutating func reserve(_ count: Int) -> Int {
        let o = end
        end += Self.rounded(count)
        return o
    }

    mutating func allocate(_ count: Int) -> Int {
        let size = Self.rounded(count)
        if let i = free.firstIndex(where: { $0.size >= size }) {
            let block = free[i]
            if block.size == size { free.remove(at: i) } else { free[i] = (block.offset + size, block.size - size) }
            sizes[block.offset] = size
            return block.offset
        }
        let o = end
        end += size
        sizes[o] = size
        return o
    }

    mutating func release(_ offset: Int) {
        guard let size = sizes.removeValue(forKey: offset) else { return }
        free.append((offset, size))
        free.sort { $0.offset < $1.offset }
        var merged: [(offset: Int, size: Int)] = []
        for b in free {
            if let last = merged.last, last.offset + last.size == b.offset {
                merged[merged.count - 1].size += b.size
            } else {
                merged.append(b)
            }
        }
        free = merged
    }
}
