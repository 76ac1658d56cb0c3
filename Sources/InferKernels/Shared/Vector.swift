// The vector types and primitives of one instruction set's build of the kernels. The target that compiles this file
// defines exactly one of COLORCAM_ISA_AVX512, COLORCAM_ISA_AVX2, COLORCAM_ISA_BASELINE (Package.swift), together
// with the matching code-generation flags.

#if COLORCAM_ISA_AVX512
    /// One zmm register.
    typealias Vector = SIMD16<Float>
    /// The integer vector of `Vector`'s width (exponent arithmetic in `exponential`).
    typealias IntVector = SIMD16<Int32>
    /// Two rows' worth of pooling input (SIMD32's even/odd split compiled to scalar code: 1.6 ms vs 0.04 ms for the
    /// detector's pools, so AVX-512 pools like AVX2).
    typealias PoolInput = SIMD16<Float>
    let isaName = "avx512"
    /// Output channels per tiled-conv register tile: 8 × 2 vectors = 16 of the 32 zmm registers accumulate, so that
    /// two FMA pipes with 4-cycle latency stay busy and each tap's loads feed 16 FMAs.
    let tileChannels = 8
    /// Whether the tiled conv has its one-vector tile (8 channels × 16 columns, 8 accumulators) for narrow rows.
    let hasNarrowTile = true
#elseif COLORCAM_ISA_AVX2
    /// One ymm register.
    typealias Vector = SIMD8<Float>
    typealias IntVector = SIMD8<Int32>
    typealias PoolInput = SIMD16<Float>
    let isaName = "avx2"
    /// Output channels per tiled-conv register tile (8 accumulators of the 16 ymm registers).
    let tileChannels = 4
    let hasNarrowTile = false
#elseif COLORCAM_ISA_BASELINE
    /// One xmm register (SSE2, which every x86-64 CPU has).
    typealias Vector = SIMD4<Float>
    typealias IntVector = SIMD4<Int32>
    typealias PoolInput = SIMD8<Float>
    let isaName = "baseline"
    /// Output channels per tiled-conv register tile (8 accumulators of the 16 xmm registers).
    let tileChannels = 4
    let hasNarrowTile = false
#else
    #error("InferKernels is compiled once per instruction set: define one COLORCAM_ISA_* condition")
#endif

/// `acc + a·b`: one fused multiply-add where the set has FMA; a multiply and an add on the baseline, which has no FMA
/// unit (a fused operation there would be a libm call per lane).
@_transparent
func multiplyAdd(_ acc: Vector, _ a: Vector, _ b: Vector) -> Vector {
    #if COLORCAM_ISA_BASELINE
        return acc + a * b
    #else
        return acc.addingProduct(a, b)
    #endif
}

@_transparent
func load(_ p: UnsafePointer<Float>) -> Vector { UnsafeRawPointer(p).loadUnaligned(as: Vector.self) }

@_transparent
func store(_ v: Vector, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: Vector.self)
}

/// Slope below zero, then clamp to [low, high] (`Activation`'s form), branch-free. `@_transparent` because
/// `@inline(__always)` was not honoured in the tile loops (each call split the vector across the ABI).
@_transparent
func activate(_ v: Vector, _ slope: Vector, _ low: Vector, _ high: Vector) -> Vector {
    let leaky = v.replacing(with: v * slope, where: v .< 0)
    let clamped = leaky.replacing(with: low, where: leaky .< low)
    return clamped.replacing(with: high, where: clamped .> high)
}
