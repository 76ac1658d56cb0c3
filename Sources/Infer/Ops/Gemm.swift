/// Gemm (`alpha·op(A)·op(B) + beta·C`, C broadcast to M×N) and MatMul (numpy semantics, batched with broadcast).
/// Fast path: OpenBLAS sgemm; reference path: triple loops.
enum GemmOp {
    static func plan(_ ctx: OpContext) throws -> OpPlan {
        let a = try ctx.shape(0), b = try ctx.shape(1)
        guard a.count == 2, b.count == 2 else { throw ctx.error("A and B must be 2-D, got \(a) and \(b)") }
        let transA = try ctx.int("transA", 0) != 0, transB = try ctx.int("transB", 0) != 0
        let m = transA ? a[1] : a[0], k = transA ? a[0] : a[1]
        let kb = transB ? b[1] : b[0], n = transB ? b[0] : b[1]
        guard k == kb else { throw ctx.error("A \(a) and B \(b) have different inner sizes") }
        let alpha = try ctx.float("alpha", 1), beta = try ctx.float("beta", 1)
        var cStrides: (Int, Int)?
        if ctx.has(2) {
            let c = try ctx.shape(2)
            _ = try BinaryOp.broadcastShape([m, n], c, ctx)
            guard c.count <= 2, try BinaryOp.broadcastShape([m, n], c, ctx) == [m, n] else {
                throw ctx.error("C \(c) does not broadcast to [\(m), \(n)]")
            }
            let s = BinaryOp.broadcastStrides(c, to: [m, n])
            cStrides = (s[0], s[1])
        }
        let mode = ctx.mode
        var plan = OpPlan(
            outputShapes: [[m, n]],
            build: { slots in
                MatMulKernel(
                    batches: [(0, 0, 0)], m: m, n: n, k: k, transA: transA, transB: transB, alpha: alpha,
                    a: slots.inputs[0]!, b: slots.inputs[1]!, output: slots.outputs[0],
                    c: slots.inputs.count > 2 ? slots.inputs[2] : nil, beta: beta, cStrides: cStrides,
                    blas: mode == .fast ? try OpenBLAS.shared() : nil)
            })
        plan.flops = 2 * Double(m * n * k)
        return plan
    }

    static func planMatMul(_ ctx: OpContext) throws -> OpPlan {
        var a = try ctx.shape(0), b = try ctx.shape(1)
        guard !a.isEmpty, !b.isEmpty else { throw ctx.error("MatMul inputs must have rank ≥ 1, got \(a) and \(b)") }
        let aVector = a.count == 1, bVector = b.count == 1
        if aVector { a = [1] + a }
        if bVector { b = b + [1] }
        let m = a[a.count - 2], k = a[a.count - 1], n = b[b.count - 1]
        guard b[b.count - 2] == k else {
            throw ctx.error("shapes \(try ctx.shape(0)) and \(try ctx.shape(1)) do not multiply")
        }
        let batchShape = try BinaryOp.broadcastShape(Array(a.dropLast(2)), Array(b.dropLast(2)), ctx)
        let sa = BinaryOp.broadcastStrides(Array(a.dropLast(2)), to: batchShape)
        let sb = BinaryOp.broadcastStrides(Array(b.dropLast(2)), to: batchShape)
        let count = batchShape.reduce(1, *)
        var batches: [(Int, Int, Int)] = []
        var index = [Int](repeating: 0, count: batchShape.count)
        for i in 0..<count {
            var oa = 0, ob = 0
            for d in 0..<index.count { oa += index[d] * sa[d]; ob += index[d] * sb[d] }
            batches.append((oa * m * k, ob * k * n, i * m * n))
            var d = index.count - 1
            while d >= 0 { index[d] += 1; if index[d] < batchShape[d] { break }; index[d] = 0; d -= 1 }
        }
        var out = batchShape
        if !aVector { out.append(m) }
        if !bVector { out.append(n) }
        let mode = ctx.mode
        var plan = OpPlan(
            outputShapes: [out],
            build: { slots in
                MatMulKernel(
                    batches: batches, m: m, n: n, k: k, transA: false, transB: false, alpha: 1,
                    a: slots.inputs[0]!, b: slots.inputs[1]!, output: slots.outputs[0], c: nil, beta: 0,
                    cStrides: nil, blas: mode == .fast ? try OpenBLAS.shared() : nil)
            })
        plan.flops = 2 * Double(count * m * n * k)
        return plan
    }
}

final class MatMulKernel: Kernel {
    /// Per batch: element offsets of A, B and the output.
    let batches: [(Int, Int, Int)]
    let m: Int, n: Int, k: Int
    let transA: Bool, transB: Bool
    let alpha: Float, beta: Float
    let a: Int, b: Int, output: Int, c: Int?
    let cStrides: (Int, Int)?
    let blas: OpenBLAS?

    init(
        batches: [(Int, Int, Int)], m: Int, n: Int, k: Int, transA: Bool, transB: Bool, alpha: Float, a: Int,
        b: Int, output: Int, c: Int?, beta: Float, cStrides: (Int, Int)?, blas: OpenBLAS?
    ) {
        self.batches = batches; self.m = m; self.n = n; self.k = k; self.transA = transA; self.transB = transB
        self.alpha = alpha; self.beta = beta; self.a = a; self.b = b; self.output = output; self.c = c
        self.cStrides = cStrides; self.blas = blas
    }

    func run(_ arena: UnsafeMutablePointer<Float>) {
        let lda = transA ? m : k, ldb = transB ? k : n
        for (oa, ob, oy) in batches {
            let pa = arena + a + oa, pb = arena + b + ob, py = arena + output + oy
            if let blas {
                blas.sgemm(
                    transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, a: pa, lda: lda,
                    b: pb, ldb: ldb, beta: 0, c: py, ldc: n)
            } else {
                for i in 0..<m {
                    for j in 0..<n {
                        var sum: Float = 0
                        for p in 0..<k {
                            sum += pa[transA ? p * lda + i : i * lda + p] * pb[transB ? j * ldb + p : p * ldb + j]
                        }
                        py[i * n + j] = alpha * sum
                    }
                }
            }
            if let c, let (si, sj) = cStrides {
                let pc = arena + c
                for i in 0..<m { for j in 0..<n { py[i * n + j] += beta * pc[i * si + j * sj] } }
            }
        }
    }
}
