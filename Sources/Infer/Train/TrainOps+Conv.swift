/// Conv and ConvTranspose, forward and backward, for the trainer: im2col per image and group, then OpenBLAS sgemm
/// (`Y = W·col`, `dW += dY·colᵀ`, `dcol = Wᵀ·dY` → col2im). A 1×1 stride-1 unpadded conv uses the input as its
/// columns. Allocates per call (training is not the hot loop); one thread.
extension TrainOps {
    /// How a convolution's columns map onto an image: `image` is the conv's input (a ConvTranspose's output), the
    /// column grid its output (a ConvTranspose's input).
    struct Columns {
        var channels: Int, height: Int, width: Int
        var kernelHeight: Int, kernelWidth: Int
        var strideHeight: Int, strideWidth: Int
        var dilationHeight: Int, dilationWidth: Int
        var padTop: Int, padLeft: Int
        var gridHeight: Int, gridWidth: Int

        var rows: Int { channels * kernelHeight * kernelWidth }
        var columns: Int { gridHeight * gridWidth }
        var isIdentity: Bool {
            kernelHeight == 1 && kernelWidth == 1 && strideHeight == 1 && strideWidth == 1 && padTop == 0
                && padLeft == 0 && gridHeight == height && gridWidth == width
        }

        init(_ g: ConvGeometry) {
            channels = g.inChannelsPerGroup; height = g.inHeight; width = g.inWidth
            kernelHeight = g.kernelHeight; kernelWidth = g.kernelWidth
            strideHeight = g.strideHeight; strideWidth = g.strideWidth
            dilationHeight = g.dilationHeight; dilationWidth = g.dilationWidth
            padTop = g.padTop; padLeft = g.padLeft
            gridHeight = g.outHeight; gridWidth = g.outWidth
        }

        /// Calls `body(row, column, imageIndex)` for every column entry that reads the image (not padding).
        @inline(__always)
        func forEach(_ body: (Int, Int, Int) -> Void) {
            for c in 0..<channels {
                for ky in 0..<kernelHeight {
                    for kx in 0..<kernelWidth {
                        let row = (c * kernelHeight + ky) * kernelWidth + kx
                        for oy in 0..<gridHeight {
                            let iy = oy * strideHeight - padTop + ky * dilationHeight
                            if iy < 0 || iy >= height { continue }
                            for ox in 0..<gridWidth {
                                let ix = ox * strideWidth - padLeft + kx * dilationWidth
                                if ix < 0 || ix >= width { continue }
                                body(row, oy * gridWidth + ox, (c * height + iy) * width + ix)
                            }
                        }
                    }
                }
            }
        }

        /// The columns of `image` (channels × height × width at `image`) into `col` (rows × columns, zeroed here).
        func gather(_ image: UnsafePointer<Float>, into col: UnsafeMutablePointer<Float>) {
            col.update(repeating: 0, count: rows * columns)
            let n = columns
            forEach { r, c, i in col[r * n + c] = image[i] }
        }

        /// Adds the columns `col` back onto `image` (the adjoint of `gather`).
        func scatter(_ col: UnsafePointer<Float>, into image: UnsafeMutablePointer<Float>) {
            let n = columns
            forEach { r, c, i in image[i] += col[r * n + c] }
        }
    }

    /// The geometry of a Conv (`transposed` false) or ConvTranspose node for input `x` and weight `w`, as the
    /// engine reads it (`ConvGeometry`); for a ConvTranspose the geometry of the conv it is the adjoint of.
    static func convGeometry(_ ctx: OpContext, x: [Int], w: [Int], transposed: Bool) throws -> ConvGeometry {
        guard x.count == 4, w.count == 4 else { throw ctx.error("the trainer takes 2-D convolutions only") }
        let group = try ctx.int("group", 1)
        guard group >= 1, x[1] % group == 0 else { throw ctx.error("group \(group) does not divide the channels") }
        if !transposed {
            guard w[1] * group == x[1], w[0] % group == 0 else {
                throw ctx.error("weight \(w) does not match input \(x) with group \(group)")
            }
            return try ConvGeometry.forward(ctx, input: x, outChannels: w[0], kernel: [w[2], w[3]], group: group)
        }
        guard w[0] == x[1] else { throw ctx.error("weight \(w) does not match input \(x)") }
        if ctx.node.attributes["output_shape"] != nil { throw ctx.error("the trainer does not take output_shape") }
        let (strides, dilations, pads, autoPad) = try ConvGeometry.spatial(ctx, input: x, kernel: [w[2], w[3]])
        guard autoPad == "NOTSET" || autoPad == "VALID" else { throw ctx.error("the trainer takes explicit pads") }
        let outPad = try ctx.ints("output_padding") ?? [0, 0]
        var g = ConvGeometry()
        g.batch = x[0]; g.group = group
        g.inChannels = w[1] * group; g.outChannels = x[1]  // the adjoint conv maps the output back to the input
        g.kernelHeight = w[2]; g.kernelWidth = w[3]
        g.strideHeight = strides[0]; g.strideWidth = strides[1]
        g.dilationHeight = dilations[0]; g.dilationWidth = dilations[1]
        if autoPad == "NOTSET" { g.padTop = pads[0]; g.padLeft = pads[1]; g.padBottom = pads[2]; g.padRight = pads[3] }
        g.outHeight = x[2]; g.outWidth = x[3]
        g.inHeight = strides[0] * (x[2] - 1) + outPad[0] + (w[2] - 1) * dilations[0] + 1 - g.padTop - g.padBottom
        g.inWidth = strides[1] * (x[3] - 1) + outPad[1] + (w[3] - 1) * dilations[1] + 1 - g.padLeft - g.padRight
        guard g.inHeight >= 1, g.inWidth >= 1 else { throw ctx.error("output would be empty for input \(x)") }
        return g
    }

    /// Y = conv(X, W) + B. `transposed`: ConvTranspose (Y = col2im(Wᵀ·X) + B).
    static func convForward(_ ctx: OpContext, x: Tensor, w: Tensor, b: Tensor?, transposed: Bool) throws -> Tensor {
        let g = try convGeometry(ctx, x: x.shape, w: w.shape, transposed: transposed)
        let blas = try OpenBLAS.shared()
        let cols = Columns(g)
        let groups = g.group, image = cols.channels * cols.height * cols.width, grid = cols.columns
        let mg = g.outChannelsPerGroup, k = cols.rows
        let outShape = transposed ? [g.batch, g.inChannels, g.inHeight, g.inWidth] : g.outputShape
        var y = Tensor(zeros: outShape)
        var col = [Float](repeating: 0, count: cols.isIdentity ? 0 : k * grid)
        x.data.withUnsafeBufferPointer { xp in
            w.data.withUnsafeBufferPointer { wp in
                y.data.withUnsafeMutableBufferPointer { yp in
                    col.withUnsafeMutableBufferPointer { cp in
                        for n in 0..<g.batch {
                            for gi in 0..<groups {
                                if !transposed {
                                    let src = xp.baseAddress! + (n * groups + gi) * image
                                    let colp = cols.isIdentity ? UnsafePointer(src) : UnsafePointer(cp.baseAddress!)
                                    if !cols.isIdentity { cols.gather(src, into: cp.baseAddress!) }
                                    blas.sgemm(
                                        transA: false, transB: false, m: mg, n: grid, k: k, alpha: 1,
                                        a: wp.baseAddress! + gi * mg * k, lda: k, b: colp, ldb: grid, beta: 0,
                                        c: yp.baseAddress! + (n * groups + gi) * mg * grid, ldc: grid)
                                } else {
                                    // X_g is mg × grid (the adjoint conv's output channels); W_g is mg × k.
                                    let dst = yp.baseAddress! + (n * groups + gi) * image
                                    let target = cols.isIdentity ? dst : cp.baseAddress!
                                    blas.sgemm(
                                        transA: true, transB: false, m: k, n: grid, k: mg, alpha: 1,
                                        a: wp.baseAddress! + gi * mg * k, lda: k,
                                        b: xp.baseAddress! + (n * groups + gi) * mg * grid, ldb: grid,
                                        beta: cols.isIdentity ? 1 : 0, c: target, ldc: grid)
                                    if !cols.isIdentity { cols.scatter(cp.baseAddress!, into: dst) }
                                }
                            }
                        }
                    }
                }
            }
        }
        if let b { addBias(&y, b) }
        return y
    }

    /// Gradients of a Conv/ConvTranspose: (dX, dW, dB), each computed only where `wants` asks.
    static func convBackward(
        _ ctx: OpContext, x: Tensor, w: Tensor, hasBias: Bool, dy: Tensor, wants: [Bool], transposed: Bool
    ) throws -> [Tensor?] {
        let g = try convGeometry(ctx, x: x.shape, w: w.shape, transposed: transposed)
        let blas = try OpenBLAS.shared()
        let cols = Columns(g)
        let groups = g.group, image = cols.channels * cols.height * cols.width, grid = cols.columns
        let mg = g.outChannelsPerGroup, k = cols.rows
        let wantX = wants[0], wantW = wants.count > 1 && wants[1], wantB = hasBias && wants.count > 2 && wants[2]
        var dx = wantX ? Tensor(zeros: x.shape) : nil
        var dw = wantW ? Tensor(zeros: w.shape) : nil
        var col = [Float](repeating: 0, count: k * grid)
        var dcol = [Float](repeating: 0, count: wantX ? k * grid : 0)
        // In conv terms: the image (conv input / ConvTranspose output) and the grid (conv output / ConvT input).
        let imageData = transposed ? dy.data : x.data
        let gridData = transposed ? x.data : dy.data
        var dImage = [Float](repeating: 0, count: wantX && !transposed ? x.data.count : 0)
        imageData.withUnsafeBufferPointer { ip in
            gridData.withUnsafeBufferPointer { gp in
                w.data.withUnsafeBufferPointer { wp in
                    col.withUnsafeMutableBufferPointer { cp in
                        dcol.withUnsafeMutableBufferPointer { dcp in
                            for n in 0..<g.batch {
                                for gi in 0..<groups {
                                    let img = ip.baseAddress! + (n * groups + gi) * image
                                    let grd = gp.baseAddress! + (n * groups + gi) * mg * grid
                                    cols.gather(img, into: cp.baseAddress!)
                                    if wantW {
                                        // conv: dW_g += dY_g · colᵀ; ConvT: dW_g += X_g · col(dY)ᵀ — both grid · colᵀ.
                                        dw!.data.withUnsafeMutableBufferPointer { dwp in
                                            blas.sgemm(
                                                transA: false, transB: true, m: mg, n: k, k: grid, alpha: 1,
                                                a: grd, lda: grid, b: cp.baseAddress!, ldb: grid, beta: 1,
                                                c: dwp.baseAddress! + gi * mg * k, ldc: k)
                                        }
                                    }
                                    guard wantX else { continue }
                                    if transposed {
                                        // dX_g = W_g · col(dY)
                                        dx!.data.withUnsafeMutableBufferPointer { dxp in
                                            blas.sgemm(
                                                transA: false, transB: false, m: mg, n: grid, k: k, alpha: 1,
                                                a: wp.baseAddress! + gi * mg * k, lda: k, b: cp.baseAddress!,
                                                ldb: grid, beta: 0, c: dxp.baseAddress! + (n * groups + gi) * mg * grid,
                                                ldc: grid)
                                        }
                                    } else {
                                        // dcol = W_gᵀ · dY_g, then col2im
                                        blas.sgemm(
                                            transA: true, transB: false, m: k, n: grid, k: mg, alpha: 1,
                                            a: wp.baseAddress! + gi * mg * k, lda: k, b: grd, ldb: grid, beta: 0,
                                            c: dcp.baseAddress!, ldc: grid)
                                        dImage.withUnsafeMutableBufferPointer { dip in
                                            cols.scatter(
                                                dcp.baseAddress!, into: dip.baseAddress! + (n * groups + gi) * image)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if wantX && !transposed { dx = Tensor(shape: x.shape, data: dImage) }
        var db: Tensor?
        if wantB {
            let channels = transposed ? g.inChannels : g.outChannels
            let plane = dy.count / (g.batch * channels)
            var sums = [Float](repeating: 0, count: channels)
            for n in 0..<g.batch {
                for c in 0..<channels {
                    var s: Float = 0
                    let base = (n * channels + c) * plane
                    for i in 0..<plane { s += dy.data[base + i] }
                    sums[c] += s
                }
            }
            db = Tensor(shape: [channels], data: sums)
        }
        return [dx, dw, db]
    }

    /// Adds a per-channel bias (axis 1) to an NCHW tensor.
    static func addBias(_ y: inout Tensor, _ b: Tensor) {
        let channels = y.shape[1], plane = y.count / (y.shape[0] * channels)
        y.data.withUnsafeMutableBufferPointer { yp in
            for n in 0..<y.shape[0] {
                for c in 0..<channels {
                    let v = b.data[c], base = (n * channels + c) * plane
                    for i in 0..<plane { yp[base + i] += v }
                }
            }
        }
    }
}
