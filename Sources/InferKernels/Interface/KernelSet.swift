/// The inference engine's hot loops, written once (`Sources/InferKernels/Shared`) and compiled once per x86-64
/// instruction set (`InferKernelsBaseline`, `InferKernelsAVX2`, `InferKernelsAVX512`); the engine picks one set at
/// load time and calls it through this protocol.
///
/// Contract for every kernel: no allocation, no locks, no I/O; it reads and writes only the memory it is given;
/// callable from any thread (the kernels keep no state). Pointers are to `Float`s, sizes are in floats (elements),
/// strides in floats.
public protocol KernelSet {
    /// The set's name as `COLORCAM_ISA` spells it: `baseline`, `avx2`, `avx512`.
    static var name: String { get }
    /// Floats per SIMD vector the set computes with (4, 8, 16).
    static var vectorFloats: Int { get }
    /// Output columns one tiled-conv register tile covers (two vectors); the band layout is padded to it.
    static var tiledConvColumns: Int { get }
    /// Output channels one tiled-conv register tile covers (4, or 8 with AVX-512); weights are packed in blocks of it.
    static var tiledConvChannels: Int { get }
    /// Output columns of the set's narrow tiled-conv tile (one vector; `TiledConvRow.narrow`), or 0 where the set has
    /// none (a one-vector tile of 4 channels would leave too few accumulators to hide the FMA latency).
    static var tiledConvNarrowColumns: Int { get }

    /// `p[r·rowStride + i] = activation(p[…] + bias[r])` for `r < rows`, `i < rowLength` (bias nil: 0).
    static func biasActivate(
        _ p: UnsafeMutablePointer<Float>, rows: Int, rowLength: Int, rowStride: Int, bias: UnsafePointer<Float>?,
        activation: Activation)

    /// One output row of one block of ≤ `tiledConvChannels` output channels of a tiled direct conv (`TiledConvRow`).
    static func tiledConvRow(_ row: TiledConvRow)

    /// The vectorised interior of one output row of one block of ≤ 4 output channels of a stride-1 direct conv
    /// (see `DirectConvRow`). Returns the first column it did not compute (the caller finishes the rest).
    static func directConvRow(_ row: DirectConvRow) -> Int

    /// `dst[i] = a[i] + (b[i] − a[i])·weight` for `i < count` (a linear resize's blend of two input rows).
    static func blendRows(
        _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, weight: Float, into dst: UnsafeMutablePointer<Float>,
        count: Int)

    /// `even[i] = src[2i]`, `odd[i] = src[2i + 1]` for `i < count` (a stride-2 conv's phase split of an input row).
    static func deinterleave(
        _ src: UnsafePointer<Float>, even: UnsafeMutablePointer<Float>, odd: UnsafeMutablePointer<Float>, count: Int)

    /// `y[i] = 1 / (1 + e^(−x[i]))` for `i < count` (absolute error below 1e-6); `x` and `y` may be the same memory.
    static func sigmoid(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int)

    /// `y[i] = tanh(x[i])` for `i < count` (absolute error below 1e-6); `x` and `y` may be the same memory.
    static func tanh(_ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int)

    /// Softmax down the columns of a `length × inner` row-major block: `y[l·inner + i] = e^(x[l·inner + i] − m_i) /
    /// Σ_l e^(x[l·inner + i] − m_i)` with `m_i` the column's maximum; `peak` and `sum` are `inner` floats of scratch.
    /// `x` and `y` may be the same memory.
    static func softmaxColumns(
        _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, length: Int, inner: Int,
        peak: UnsafeMutablePointer<Float>, sum: UnsafeMutablePointer<Float>)

    /// 2×2 stride-2 max pooling of one output row: `dst[i] = max(r0[2i], r0[2i+1], r1[2i], r1[2i+1])`, `i < count`.
    static func maxPool2x2Row(
        _ r0: UnsafePointer<Float>, _ r1: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, count: Int)
}

/// A fused activation in branch-free form: values below zero are multiplied by `slope`, then clamped to
/// `[low, high]`. None: 1, −∞, ∞; ReLU: 1, 0, ∞; LeakyReLU(α): α, −∞, ∞; Clip(lo, hi): 1, lo, hi.
public struct Activation: Equatable, Sendable {
    public var slope: Float, low: Float, high: Float

    public init(slope: Float, low: Float, high: Float) {
        self.slope = slope; self.low = low; self.high = high
    }

    @inlinable public static var identity: Activation { Activation(slope: 1, low: -.infinity, high: .infinity) }

    /// Whether applying it changes nothing.
    @inlinable public var isIdentity: Bool { self == .identity }

    @inlinable @inline(__always)
    public func apply(_ x: Float) -> Float {
        let leaky = x < 0 ? x * slope : x
        return min(max(leaky, low), high)
    }
}

/// Arguments of `KernelSet.tiledConvRow`: `columns` output columns of one output row for `channels`
/// (≤ `tiledConvChannels`, "tc") output channels, computed in tiles of `tiledConvColumns` columns over every input
/// channel and tap.
///
/// `source` is the first tap row of input channel 0 in a padded band; a tile reads `tiledConvColumns` plus the widest
/// tap offset floats per tap row, so the band's rows must be readable that far. `weights` are packed
/// `[channel][ky][kx][tc]` for the block (zero-padded to tc); `bias` holds tc values. Column `ox` of channel `j` is
/// stored at `output + j·outputPlane + ox`; columns at or past `columns` are computed on padding and not stored.
public struct TiledConvRow {
    public var source: UnsafePointer<Float>
    public var channelStride: Int, rowStride: Int, columns: Int
    public var weights: UnsafePointer<Float>, bias: UnsafePointer<Float>
    public var channels: Int, inputChannels: Int, kernelHeight: Int, kernelWidth: Int, dilationHeight: Int
    /// Per kx: the tap's offset inside a band row group (`kernelWidth` values).
    public var tapOffsets: UnsafePointer<Int>
    public var output: UnsafeMutablePointer<Float>, outputPlane: Int
    public var activation: Activation
    /// Tiles of `tiledConvNarrowColumns` columns (one vector) instead of `tiledConvColumns`; only where the set has
    /// a narrow tile.
    public var narrow: Bool

    public init(
        source: UnsafePointer<Float>, channelStride: Int, rowStride: Int, columns: Int, weights: UnsafePointer<Float>,
        bias: UnsafePointer<Float>, channels: Int, inputChannels: Int, kernelHeight: Int, kernelWidth: Int,
        dilationHeight: Int, tapOffsets: UnsafePointer<Int>, output: UnsafeMutablePointer<Float>, outputPlane: Int,
        activation: Activation, narrow: Bool = false
    ) {
        self.narrow = narrow
        self.source = source; self.channelStride = channelStride; self.rowStride = rowStride
        self.columns = columns; self.weights = weights; self.bias = bias; self.channels = channels
        self.inputChannels = inputChannels; self.kernelHeight = kernelHeight; self.kernelWidth = kernelWidth
        self.dilationHeight = dilationHeight; self.tapOffsets = tapOffsets; self.output = output
        self.outputPlane = outputPlane; self.activation = activation
    }
}

/// Arguments of `KernelSet.directConvRow`: output row `oy` of a stride-1 (horizontally) direct conv, for the columns
/// `[first, end)` whose every tap lies inside the input row, whole vectors only.
///
/// `input` is the group's channel 0 (planes of `inputHeight × inputWidth`); `firstInputRow` = oy·strideHeight −
/// padTop; `weights` are packed `[channel][ky][kx][4]` for the block; `bias` holds 4 values. Column `ox` of channel
/// `j < channels` is stored at `output + j·outputPlane + ox`.
public struct DirectConvRow {
    public var input: UnsafePointer<Float>
    public var inputWidth: Int, inputHeight: Int, inputChannels: Int
    public var kernelHeight: Int, kernelWidth: Int, dilationHeight: Int, dilationWidth: Int
    public var firstInputRow: Int, padLeft: Int
    public var weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, channels: Int
    public var output: UnsafeMutablePointer<Float>, outputPlane: Int
    public var first: Int, end: Int
    public var activation: Activation

    public init(
        input: UnsafePointer<Float>, inputWidth: Int, inputHeight: Int, inputChannels: Int, kernelHeight: Int,
        kernelWidth: Int, dilationHeight: Int, dilationWidth: Int, firstInputRow: Int, padLeft: Int,
        weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, channels: Int, output: UnsafeMutablePointer<Float>,
        outputPlane: Int, first: Int, end: Int, activation: Activation
    ) {
        self.input = input; self.inputWidth = inputWidth; self.inputHeight = inputHeight
        self.inputChannels = inputChannels; self.kernelHeight = kernelHeight; self.kernelWidth = kernelWidth
        self.dilationHeight = dilationHeight; self.dilationWidth = dilationWidth; self.firstInputRow = firstInputRow
        self.padLeft = padLeft; self.weights = weights; self.bias = bias; self.channels = channels
        self.output = output; self.outputPlane = outputPlane; self.first = first; self.end = end
        self.activation = activation
    }
}
