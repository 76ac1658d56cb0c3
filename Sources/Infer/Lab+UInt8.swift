/// The 8-bit path: packed 8-bit sRGB ⇄ float Lab, and the L-only path for a colorizer's input.
///
/// The sRGB curve is a 256-entry table computed once in Double, so 8-bit → Lab differs from the Double definition
/// only by the float cube root (ΔE about 1e-4); Lab → 8-bit rounds to nearest (a round trip returns every 8-bit
/// colour within 1 level; Tests/integration/test_lab.py checks all 2²⁴). Chunked through planes like the float
/// path (`Lab+Float.swift`). Pure functions: any thread, no heap allocation.
extension Lab {
    /// Linear light of each 8-bit sRGB code.
    public static let linearTable: [Float] = (0..<256).map { Float(referenceLinear(Double($0) / 255)) }

    /// Converts `pixelCount` packed 8-bit sRGB pixels (R G B) to interleaved float Lab.
    public static func convertRGB8ToLab(
        _ rgb: UnsafePointer<UInt8>, _ lab: UnsafeMutablePointer<Float>, pixelCount: Int
    ) {
        linearTable.withUnsafeBufferPointer { tb in
            fPairs.withUnsafeBufferPointer { fb in
                let t = tb.baseAddress!, fTable = fb.baseAddress!, fScale = Float(fSteps)
                chunked(
                    pixelCount: pixelCount,
                    load: { planes, start, n in
                        let src = rgb + 3 * start
                        for i in 0..<n {
                            planes[i] = t[Int(src[3 * i])]
                            planes[chunkPx + i] = t[Int(src[3 * i + 1])]
                            planes[2 * chunkPx + i] = t[Int(src[3 * i + 2])]
                        }
                    },
                    { planes, count in
                        // Linear light of codes is in 0…1, so X/Xn, Y/Yn, Z/Zn are too: f from the table.
                        mapPlanes(planes, stride: chunkPx, count: count) { r, g, b in
                            let (x, y, z) = xyzOverWhite(r, g, b)
                            let fx = interpolate(x, steps: fScale, fTable), fy = interpolate(y, steps: fScale, fTable)
                            let fz = interpolate(z, steps: fScale, fTable)
                            return (fy * 116 - 16, (fx - fy) * 500, (fy - fz) * 200)
                        }
                    }, store: { interleave($0, lab + 3 * $1, $2) })
            }
        }
    }

    /// L only (0…100) of `pixelCount` packed 8-bit sRGB pixels: the colorizer's input, without a and b.
    public static func lightnessFromRGB8(
        _ rgb: UnsafePointer<UInt8>, _ lightness: UnsafeMutablePointer<Float>,
        pixelCount: Int
    ) {
        linearTable.withUnsafeBufferPointer { tb in
            fPairs.withUnsafeBufferPointer { fb in
                let t = tb.baseAddress!, fTable = fb.baseAddress!, fScale = Float(fSteps)
                withUnsafeTemporaryAllocation(of: Float.self, capacity: chunkPx) { buffer in
                    let plane = buffer.baseAddress!, raw = UnsafeMutableRawPointer(plane)
                    var start = 0
                    while start < pixelCount {
                        let n = min(chunkPx, pixelCount - start)
                        let src = rgb + 3 * start
                        // Linear luminance Y/Yn per pixel (the table is exact), then one cube root per eight pixels.
                        for i in 0..<n {
                            plane[i] =
                                t[Int(src[3 * i])] * 0.212671 + t[Int(src[3 * i + 1])] * 0.71516
                                + t[Int(src[3 * i + 2])] * 0.072169
                        }
                        for k in n..<((n + 7) & ~7) { plane[k] = 0.5 }
                        var offset = 0
                        while offset < 4 * n {
                            let y = raw.loadUnaligned(fromByteOffset: offset, as: V.self)
                            raw.storeBytes(
                                of: interpolate(y, steps: fScale, fTable) * 116 - 16, toByteOffset: offset,
                                as: V.self)
                            offset += 32
                        }
                        (lightness + start).update(from: plane, count: n)
                        start += n
                    }
                }
            }
        }
    }

    /// L only of `pixelCount` 8-bit grey values (R = G = B = code): one table lookup each.
    public static let greyLightnessTable: [Float] = (0..<256).map { code in
        Float(referenceLab(r: Double(code) / 255, g: Double(code) / 255, b: Double(code) / 255).L)
    }

    /// Converts `pixelCount` interleaved Lab pixels to packed 8-bit sRGB, clipped and rounded to nearest.
    public static func convertLabToRGB8(
        _ lab: UnsafePointer<Float>, _ rgb: UnsafeMutablePointer<UInt8>, pixelCount: Int
    ) {
        chunked(
            pixelCount: pixelCount, load: { deinterleave(lab + 3 * $1, $0, $2) },
            { planes, count in
                mapPlanes(planes, stride: chunkPx, count: count) { l, a, b in
                    // Codes as integers in the float planes' bits (rounded to nearest, 0…255).
                    let (r8, g8, b8) = codes(Lab.rgb(L: l, a: a, b: b))
                    return (unsafeBitCast(r8, to: V.self), unsafeBitCast(g8, to: V.self), unsafeBitCast(b8, to: V.self))
                }
            },
            store: { planes, start, n in
                let raw = UnsafeRawPointer(planes), dst = rgb + 3 * start
                for i in 0..<n {
                    dst[3 * i] = UInt8(truncatingIfNeeded: raw.load(fromByteOffset: 4 * i, as: UInt32.self))
                    dst[3 * i + 1] = UInt8(
                        truncatingIfNeeded: raw.load(fromByteOffset: 4 * (chunkPx + i), as: UInt32.self))
                    dst[3 * i + 2] = UInt8(
                        truncatingIfNeeded: raw.load(fromByteOffset: 4 * (2 * chunkPx + i), as: UInt32.self))
                }
            })
    }
}
