/// Chunked planar processing for the buffer paths, and the float Lab → sRGB path (`Lab+Lanes.swift` does the colour
/// maths, eight pixels per step; float sRGB → Lab is in `Lab+FloatForward.swift`).
///
/// Buffers are processed in chunks of `chunkPx` pixels through a planar stack buffer: deinterleave, convert with
/// whole-vector loads and stores, interleave. (Converting arithmetic curves straight from lanes gathered out of
/// interleaved memory lets LLVM push the lane shuffles into the arithmetic and half-scalarise it: 2–3× slower.)
///
/// Lab → sRGB matches `Lab.referenceRGB` within 2e-5 per component (LabTests, and `Tests/integration/test_lab.py`
/// against scikit-image). Pure functions: any thread, no heap allocation; `pixelCount` pixels are read and written;
/// source and destination may be the same buffer.
extension Lab {
    typealias V = SIMD8<Float>

    /// Pixels per chunk of the planar scratch (a multiple of 8; 3 planes × 256 floats = 3 KB of stack).
    static let chunkPx = 256

    /// Runs `body` in place over three planes of `count` floats each (`planes`, `+ stride`, `+ 2·stride`); `count`
    /// is a multiple of 8.
    @inline(__always)
    static func mapPlanes(
        _ planes: UnsafeMutablePointer<Float>, stride: Int, count: Int,
        _ body: (V, V, V) -> (V, V, V)
    ) {
        let p0 = UnsafeMutableRawPointer(planes), p1 = UnsafeMutableRawPointer(planes + stride)
        let p2 = UnsafeMutableRawPointer(planes + 2 * stride)
        var offset = 0
        while offset < 4 * count {
            let (u, v, w) = body(
                p0.loadUnaligned(fromByteOffset: offset, as: V.self),
                p1.loadUnaligned(fromByteOffset: offset, as: V.self),
                p2.loadUnaligned(fromByteOffset: offset, as: V.self))
            p0.storeBytes(of: u, toByteOffset: offset, as: V.self)
            p1.storeBytes(of: v, toByteOffset: offset, as: V.self)
            p2.storeBytes(of: w, toByteOffset: offset, as: V.self)
            offset += 32
        }
    }

    /// Converts `pixelCount` pixels chunk by chunk through planes: `load` fills the three planes (stride `chunkPx`)
    /// with pixels `start ..< start + n`, `convert` converts the planes in place (`count` = n rounded up to 8; the
    /// last block is padded with mid-grey), `store` writes the chunk's results out.
    @inline(__always)
    static func chunked(
        pixelCount: Int,
        load: (_ planes: UnsafeMutablePointer<Float>, _ start: Int, _ n: Int) -> Void,
        _ convert: (_ planes: UnsafeMutablePointer<Float>, _ count: Int) -> Void,
        store: (_ planes: UnsafePointer<Float>, _ start: Int, _ n: Int) -> Void
    ) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 3 * chunkPx) { buffer in
            let planes = buffer.baseAddress!
            var start = 0
            while start < pixelCount {
                let n = min(chunkPx, pixelCount - start)
                let padded = (n + 7) & ~7
                load(planes, start, n)
                for k in n..<padded { planes[k] = 0.5; planes[chunkPx + k] = 0.5; planes[2 * chunkPx + k] = 0.5 }
                convert(planes, padded)
                store(planes, start, n)
                start += n
            }
        }
    }

    /// Deinterleaves `n` float triples into three planes of stride `chunkPx`: blocks of eight by six 16-byte loads,
    /// lane shuffles and three 32-byte stores, the rest one by one.
    @inline(__always)
    static func deinterleave(_ src: UnsafePointer<Float>, _ planes: UnsafeMutablePointer<Float>, _ n: Int) {
        let raw = UnsafeRawPointer(src), out = UnsafeMutableRawPointer(planes)
        var i = 0
        while i + 8 <= n {
            let q0 = raw.loadUnaligned(fromByteOffset: 12 * i, as: SIMD4<Float>.self)
            let q1 = raw.loadUnaligned(fromByteOffset: 12 * i + 16, as: SIMD4<Float>.self)
            let q2 = raw.loadUnaligned(fromByteOffset: 12 * i + 32, as: SIMD4<Float>.self)
            let q3 = raw.loadUnaligned(fromByteOffset: 12 * i + 48, as: SIMD4<Float>.self)
            let q4 = raw.loadUnaligned(fromByteOffset: 12 * i + 64, as: SIMD4<Float>.self)
            let q5 = raw.loadUnaligned(fromByteOffset: 12 * i + 80, as: SIMD4<Float>.self)
            out.storeBytes(
                of: V(q0[0], q0[3], q1[2], q2[1], q3[0], q3[3], q4[2], q5[1]), toByteOffset: 4 * i,
                as: V.self)
            out.storeBytes(
                of: V(q0[1], q1[0], q1[3], q2[2], q3[1], q4[0], q4[3], q5[2]),
                toByteOffset: 4 * (chunkPx + i), as: V.self)
            out.storeBytes(
                of: V(q0[2], q1[1], q2[0], q2[3], q3[2], q4[1], q5[0], q5[3]),
                toByteOffset: 4 * (2 * chunkPx + i), as: V.self)
            i += 8
        }
        while i < n {
            planes[i] = src[3 * i]; planes[chunkPx + i] = src[3 * i + 1]; planes[2 * chunkPx + i] = src[3 * i + 2]
            i += 1
        }
    }

    /// Interleaves `n` pixels of three planes of stride `chunkPx` into float triples (blocks of eight by 32-byte
    /// loads, lane shuffles and 16-byte stores, the rest one by one).
    @inline(__always)
    static func interleave(_ planes: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, _ n: Int) {
        let raw = UnsafeRawPointer(planes), out = UnsafeMutableRawPointer(dst)
        var i = 0
        while i + 8 <= n {
            let x = raw.loadUnaligned(fromByteOffset: 4 * i, as: V.self)
            let y = raw.loadUnaligned(fromByteOffset: 4 * (chunkPx + i), as: V.self)
            let z = raw.loadUnaligned(fromByteOffset: 4 * (2 * chunkPx + i), as: V.self)
            out.storeBytes(of: SIMD4(x[0], y[0], z[0], x[1]), toByteOffset: 12 * i, as: SIMD4<Float>.self)
            out.storeBytes(of: SIMD4(y[1], z[1], x[2], y[2]), toByteOffset: 12 * i + 16, as: SIMD4<Float>.self)
            out.storeBytes(of: SIMD4(z[2], x[3], y[3], z[3]), toByteOffset: 12 * i + 32, as: SIMD4<Float>.self)
            out.storeBytes(of: SIMD4(x[4], y[4], z[4], x[5]), toByteOffset: 12 * i + 48, as: SIMD4<Float>.self)
            out.storeBytes(of: SIMD4(y[5], z[5], x[6], y[6]), toByteOffset: 12 * i + 64, as: SIMD4<Float>.self)
            out.storeBytes(of: SIMD4(z[6], x[7], y[7], z[7]), toByteOffset: 12 * i + 80, as: SIMD4<Float>.self)
            i += 8
        }
        while i < n {
            dst[3 * i] = planes[i]; dst[3 * i + 1] = planes[chunkPx + i]; dst[3 * i + 2] = planes[2 * chunkPx + i]
            i += 1
        }
    }

    /// Converts `pixelCount` interleaved Lab pixels to interleaved sRGB floats, clipped to 0…1.
    public static func convertLabToRGB(_ lab: UnsafePointer<Float>, _ rgb: UnsafeMutablePointer<Float>, pixelCount: Int)
    {
        chunked(
            pixelCount: pixelCount, load: { deinterleave(lab + 3 * $1, $0, $2) },
            { planes, count in
                mapPlanes(planes, stride: chunkPx, count: count) { l, a, b in
                    let c = Lab.rgb(L: l, a: a, b: b)
                    return (c.r, c.g, c.b)
                }
            }, store: { interleave($0, rgb + 3 * $1, $2) })
    }
}
