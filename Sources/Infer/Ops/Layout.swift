/// Data-movement ops (Transpose, Slice, Pad, Gather, Concat) and the shape rules of Reshape, Flatten, Squeeze and
/// Unsqueeze. Movement is described once as a source-index table, so the same code moves floats at run time and
/// folds integer shape tensors at load time.
enum LayoutOps {
    /// Output shape and, per output element, the source element index (−1: the pad constant).
    struct IndexMap {
        var shape: [Int]
        var sources: [Int32]

        func apply<T>(_ input: [T], fill: T) -> [T] { sources.map { $0 < 0 ? fill : input[Int($0)] } }
    }

    /// Throws unless `shape` has fewer than `Int32.max` elements (its product is computed without overflowing).
    static func checkCount(_ shape: [Int], _ ctx: OpContext) throws {
        guard let count = product(shape), count < Int(Int32.max) else {
            throw ctx.error("tensor \(shape) is too large")
        }
    }

    /// The product of `values`, or nil when it overflows `Int`.
    static func product(_ values: [Int]) -> Int? {
        var result = 1
        for v in values {
            let (p, overflow) = result.multipliedReportingOverflow(by: v)
            if overflow { return nil }
            result = p
        }
        return result
    }

    /// Visits every output index in row-major order with its source index, built by `source`.
    static func map(_ outShape: [Int], _ ctx: OpContext, _ source: ([Int]) -> Int) throws -> IndexMap {
        try checkCount(outShape, ctx)
        let count = outShape.reduce(1, *)
        var sources = [Int32](repeating: 0, count: count)
        var index = [Int](repeating: 0, count: outShape.count)
        for i in 0..<count {
            sources[i] = Int32(source(index))
            var d = outShape.count - 1
            while d >= 0 { index[d] += 1; if index[d] < outShape[d] { break }; index[d] = 0; d -= 1 }
        }
        return IndexMap(shape: outShape, sources: sources)
    }

    static func transpose(_ ctx: OpContext, shape: [Int]) throws -> IndexMap {
        let perm = try ctx.ints("perm") ?? Array((0..<shape.count).reversed())
        guard perm.sorted() == Array(0..<shape.count) else { throw ctx.error("perm \(perm) is not a permutation") }
        let strides = contiguousStrides(shape)
        let out = perm.map { shape[$0] }
        return try map(out, ctx) { idx in
            var s = 0
            for d in 0..<idx.count { s += idx[d] * strides[perm[d]] }
            return s
        }
    }

    static func slice(_ ctx: OpContext, shape: [Int]) throws -> IndexMap {
        let starts: [Int64], ends: [Int64]
        var axes: [Int64]?, steps: [Int64]?
        if ctx.opset < 10 {
            starts = (try ctx.ints("starts") ?? []).map(Int64.init)
            ends = (try ctx.ints("ends") ?? []).map(Int64.init)
            axes = try ctx.ints("axes")?.map(Int64.init)
        } else {
            guard let s = try ctx.constInts(1), let e = try ctx.constInts(2) else {
                throw ctx.error("starts/ends missing")
            }
            starts = s; ends = e
            axes = try ctx.constInts(3); steps = try ctx.constInts(4)
        }
        let axisList = try (axes ?? (0..<Int64(starts.count)).map { $0 }).map {
            try ctx.axis(Int($0), rank: shape.count)
        }
        let stepList = steps ?? [Int64](repeating: 1, count: starts.count)
        guard ends.count == starts.count, axisList.count == starts.count, stepList.count == starts.count,
            Set(axisList).count == axisList.count
        else { throw ctx.error("starts/ends/axes/steps lengths differ") }
        var begin = [Int](repeating: 0, count: shape.count)
        var step = [Int](repeating: 1, count: shape.count)
        var out = shape
        for (i, axis) in axisList.enumerated() {
            let dim = Int64(shape[axis])
            guard stepList[i] != 0 else { throw ctx.error("slice step is 0") }
            // A step beyond the axis length selects one element, as the step ±(dim + 1) does; clamping keeps the
            // arithmetic below in range for any step the file holds.
            let st = min(max(stepList[i], -(dim + 1)), dim + 1)
            // Starts and ends are clamped to the axis below, so clamping them to ±(dim + 1) first changes nothing.
            let start = min(max(starts[i], -(dim + 1)), dim + 1), end = min(max(ends[i], -(dim + 1)), dim + 1)
            var s = start < 0 ? start + dim : start
            var e = end < 0 ? end + dim : end
            if st > 0 {
                s = min(max(s, 0), dim); e = min(max(e, 0), dim)
                out[axis] = e > s ? Int((e - s + st - 1) / st) : 0
            } else {
                s = min(max(s, 0), dim - 1); e = min(max(e, -1), dim - 1)
                out[axis] = s > e ? Int((s - e - st - 1) / -st) : 0
            }
            begin[axis] = Int(s); step[axis] = Int(st)
        }
        guard out.allSatisfy({ $0 > 0 }) else { throw ctx.error("slice of \(shape) is empty") }
        let strides = contiguousStrides(shape)
        return try map(out, ctx) { idx in
            var s = 0
            for d in 0..<idx.count { s += (begin[d] + idx[d] * step[d]) * strides[d] }
            return s
        }
    }

    static func pad(_ ctx: OpContext, shape: [Int]) throws -> (IndexMap, Float) {
        let rank = shape.count
        var pads: [Int]
        var value: Float = 0
        if ctx.opset < 11 {
            pads = try ctx.ints("pads") ?? []
            value = try ctx.float("value", 0)
        } else {
            pads = (try ctx.constInts(1) ?? []).map { Int($0) }
            if let v = try ctx.constFloats(2) { value = v.first ?? 0 }
            if let axes = try ctx.constInts(3) {
                var full = [Int](repeating: 0, count: 2 * rank)
                guard pads.count == 2 * axes.count else { throw ctx.error("pads do not match axes") }
                for (i, a) in axes.enumerated() {
                    let axis = try ctx.axis(Int(a), rank: rank)
                    full[axis] = pads[i]; full[axis + rank] = pads[i + axes.count]
                }
                pads = full
            }
        }
        guard pads.count == 2 * rank else { throw ctx.error("pads has \(pads.count) values for rank \(rank)") }
        guard pads.allSatisfy({ $0.magnitude < 1 << 30 }) else { throw ctx.error("pads \(pads) are out of range") }
        let mode = try ctx.string("mode", "constant")
        guard ["constant", "reflect", "edge"].contains(mode) else {
            throw ctx.error("pad mode \(mode) is not supported")
        }
        let out = try (0..<rank).map { d -> Int in
            let o = shape[d] + pads[d] + pads[d + rank]
            guard o >= 1 else { throw ctx.error("padded axis \(d) would be empty") }
            if mode == "reflect" && (pads[d] >= shape[d] || pads[d + rank] >= shape[d]) && pads[d] + pads[d + rank] > 0
                && shape[d] > 0
            {
                if shape[d] == 1 { throw ctx.error("reflect pad of an axis of length 1") }
            }
            return o
        }
        let strides = contiguousStrides(shape)
        let table = try map(out, ctx) { idx in
            var s = 0
            for d in 0..<rank {
                var i = idx[d] - pads[d]
                let n = shape[d]
                if i < 0 || i >= n {
                    switch mode {
                    case "edge": i = min(max(i, 0), n - 1)
                    case "reflect":
                        let period = 2 * (n - 1)
                        i = ((i % period) + period) % period
                        if i >= n { i = period - i }
                    default: return -1
                    }
                }
                s += i * strides[d]
            }
            return s
        }
        return (table, value)
    }

    static func gather(_ ctx: OpContext, shape: [Int], indices: [Int64], indexShape: [Int]) throws -> IndexMap {
        let axis = try ctx.axis(try ctx.int("axis", 0), rank: shape.count)
        let n = Int64(shape[axis])
        let idx = try indices.map { i -> Int in
            guard i >= -n && i < n else { throw ctx.error("gather index \(i) is out of range for axis of \(n)") }
            return Int(i < 0 ? i + n : i)
        }
        let out = Array(shape[..<axis]) + indexShape + Array(shape[(axis + 1)...])
        let strides = contiguousStrides(shape)
        let indexStrides = contiguousStrides(indexShape)
        let q = indexShape.count
        return try map(out, ctx) { o in
            var s = 0
            for d in 0..<axis { s += o[d] * strides[d] }
            var flat = 0
            for d in 0..<q { flat += o[axis + d] * indexStrides[d] }
            s += idx[flat] * strides[axis]
            for d in (axis + 1)..<shape.count { s += o[d + q - 1] * strides[d] }
            return s
        }
    }

    static func concatShape(_ ctx: OpContext, shapes: [[Int]]) throws -> (shape: [Int], axis: Int) {
        guard let first = shapes.first else { throw ctx.error("no inputs") }
        let axis = try ctx.axis(try ctx.int("axis", 0), rank: max(1, first.count))
        var out = first
        out[axis] = 0
        for s in shapes {
            guard s.count == first.count, (0..<s.count).allSatisfy({ $0 == axis || s[$0] == first[$0] }) else {
                throw ctx.error("inputs \(shapes) do not match outside axis \(axis)")
            }
            out[axis] += s[axis]
        }
        return (out, axis)
    }

    static func reshape(_ ctx: OpContext, shape: [Int], target: [Int64]) throws -> [Int] {
        let allowZero = try ctx.int("allowzero", 0) != 0
        var out = try target.enumerated().map { i, t -> Int in
            if t == 0 && !allowZero {
                guard i < shape.count else { throw ctx.error("reshape 0 at axis \(i) beyond input rank") }
                return shape[i]
            }
            guard t >= -1 else { throw ctx.error("reshape dim \(t) is invalid") }
            return Int(t)
        }
        guard let total = product(shape) else { throw ctx.error("tensor \(shape) is too large") }
        if let unknown = out.firstIndex(of: -1) {
            guard out.filter({ $0 == -1 }).count == 1 else { throw ctx.error("reshape has more than one -1") }
            let known = product(out.enumerated().filter { $0.offset != unknown }.map(\.element))
            guard let known, known > 0, total % known == 0 else {
                throw ctx.error("cannot reshape \(shape) to \(target)")
            }
            out[unknown] = total / known
        }
        guard product(out) == total else { throw ctx.error("cannot reshape \(shape) to \(target)") }
        return out
    }

    static func flatten(_ ctx: OpContext, shape: [Int]) throws -> [Int] {
        let a = try ctx.int("axis", 1)
        let axis = a < 0 ? a + shape.count : a
        guard axis >= 0 && axis <= shape.count else { throw ctx.error("axis \(a) is out of range") }
        return [shape[..<axis].reduce(1, *), shape[axis...].reduce(1, *)]
    }

    static func axesInput(_ ctx: OpContext) throws -> [Int]? {
        if ctx.opset < 13 { return try ctx.ints("axes") }
        return try ctx.constInts(1)?.map { Int($0) }
    }

    static func squeeze(_ ctx: OpContext, shape: [Int]) throws -> [Int] {
        guard let axes = try axesInput(ctx) else { return shape.filter { $0 != 1 } }
        let normalized = try Set(axes.map { try ctx.axis($0, rank: shape.count) })
        for a in normalized where shape[a] != 1 { throw ctx.error("cannot squeeze axis \(a) of size \(shape[a])") }
        return shape.enumerated().filter { !normalized.contains($0.offset) }.map(\.element)
    }

    static func unsqueeze(_ ctx: OpContext, shape: [Int]) throws -> [Int] {
        guard let axes = try axesInput(ctx) else { throw ctx.error("axes missing") }
        let rank = shape.count + axes.count
        let normalized = try Set(axes.map { try ctx.axis($0, rank: rank) })
        guard normalized.count == axes.count else { throw ctx.error("repeated axes") }
        var out: [Int] = []
        var next = 0
        for d in 0..<rank {
            if normalized.contains(d) { out.append(1) } else { out.append(shape[next]); next += 1 }
        }
        return out
    }

    /// A kernel that moves floats by a source-index table.
    static func plan(_ map: IndexMap, fill: Float = 0, captured: Set<Int>) -> OpPlan {
        var plan = OpPlan(
            outputShapes: [map.shape],
            build: { slots in
                IndexGatherKernel(sources: map.sources, fill: fill, input: slots.inputs[0]!, output: slots.outputs[0])
            })
        plan.capturedInputs = captured
        return plan
    }
}

final class IndexGatherKernel: Kernel {
    let sources: [Int32]
    let fill: Float
    let input: Int, output: Int

    init(sources: [Int32], fill: Float, input: Int, output: Int) {
        self.sources = sources; self.fill = fill; self.input = input; self.output = output
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let x = arena + input, y = arena + output
        sources.withUnsafeBufferPointer { s in
            for i in 0..<s.count { let j = Int(s[i]); y[i] = j < 0 ? fill : x[j] }
        }
    }
}

/// Concat: copies each input's contiguous blocks into place.
final class ConcatKernel: Kernel {
    let inputs: [Int], output: Int
    /// Per input: elements per block (its axis length × inner).
    let blocks: [Int]
    let outer: Int, outBlock: Int

    init(inputs: [Int], shapes: [[Int]], axis: Int, output: Int) {
        self.inputs = inputs; self.output = output
        outer = shapes[0][..<axis].reduce(1, *)
        blocks = shapes.map { $0[axis...].reduce(1, *) }
        outBlock = blocks.reduce(0, +)
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        for o in 0..<outer {
            var at = arena + output + o * outBlock
            for (i, input) in inputs.enumerated() {
                let n = blocks[i]
                at.update(from: arena + input + o * n, count: n)
                at += n
            }
        }
    }
}
