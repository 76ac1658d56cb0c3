/// The 8-bit path: packed 8-bit sRGB ⇄ float Lab, and the L-only path for a colorizer's input.
///
/// The sRGB curve is a 256-entry table computed once in Double, so 8-bit → Lab is exact to float rounding;
/// Lab → 8-bit rounds to nearest (a round trip returns every 8-bit colour within 1 level, LabTests checks all
/// 2²⁴). Pure functions: any thread, no allocation.
extension Lab {
    /// Linear light of each 8-bit sRGB code.
    public static let linearTable: [Float] = (0..<256).map { Float(referenceLinear(Double($0) / 255)) }

    /// Converts `pixelCount` packed 8-bit sRGB pixels (R G B) to interleaved float Lab.
    public static func convertRGB8ToLab(_ rgb: UnsafePointer<UInt8>, _ lab: UnsafeMutablePointer<Float>, pixelCount: Int) {
        linearTable.withUnsafeBufferPointer { tb in
            forward.withUnsafeBufferPointer { mb in
              labFCurve.withUnsafeBufferPointer { fb in
                let t = tb.baseAddress!, m = mb.baseAddress!, f = fb.baseAddress!
                var p = 0
                var r = V(), g = V(), b = V()
                while p < pixelCount {
                    let n = min(8, pixelCount - p)
                    let src = rgb + 3 * p
                    for k in 0..<8 {
                        let q = k < n ? k : 0
                        r[k] = t[Int(src[3 * q])]; g[k] = t[Int(src[3 * q + 1])]; b[k] = t[Int(src[3 * q + 2])]
                    }
                    let (l, a, bb) = labFromLinear(r, g, b, m, f)
                    let dst = lab + 3 * p
                    for k in 0..<n { dst[3 * k] = l[k]; dst[3 * k + 1] = a[k]; dst[3 * k + 2] = bb[k] }
                    p += 8
                }
              }
            }
        }
    }

    /// L only (0…100) of `pixelCount` packed 8-bit sRGB pixels: the colorizer's input, without a and b.
    public static func lightnessFromRGB8(_ rgb: UnsafePointer<UInt8>, _ lightness: UnsafeMutablePointer<Float>,
                                         pixelCount: Int) {
        linearTable.withUnsafeBufferPointer { tb in
          labFCurve.withUnsafeBufferPointer { fb in
            let t = tb.baseAddress!, f = fb.baseAddress!
            let wy = forward[3], wg = forward[4], wb = forward[5]
            var p = 0
            var y = V()
            while p < pixelCount {
                let n = min(8, pixelCount - p)
                let src = rgb + 3 * p
                for k in 0..<8 {
                    let q = k < n ? k : 0
                    y[k] = t[Int(src[3 * q])] * wy + t[Int(src[3 * q + 1])] * wg + t[Int(src[3 * q + 2])] * wb
                }
                let l = labFTable(y, f) * 116 - 16
                for k in 0..<n { lightness[p + k] = l[k] }
                p += 8
            }
          }
        }
    }

    /// L only of `pixelCount` 8-bit grey values (R = G = B = code): one table lookup each.
    public static let greyLightnessTable: [Float] = (0..<256).map { code in
        Float(referenceLab(r: Double(code) / 255, g: Double(code) / 255, b: Double(code) / 255).L)
    }

    /// Converts `pixelCount` interleaved Lab pixels to packed 8-bit sRGB, clipped and rounded to nearest.
    public static func convertLabToRGB8(_ lab: UnsafePointer<Float>, _ rgb: UnsafeMutablePointer<UInt8>, pixelCount: Int) {
        inverse.withUnsafeBufferPointer { mb in
            let m = mb.baseAddress!
            var p = 0
            var l = V(), a = V(), b = V()
            while p < pixelCount {
                let n = min(8, pixelCount - p)
                let src = lab + 3 * p
                for k in 0..<8 {
                    let q = k < n ? k : 0
                    l[k] = src[3 * q]; a[k] = src[3 * q + 1]; b[k] = src[3 * q + 2]
                }
                let (r, g, bb) = rgbFromLab(l, a, b, m)
                // r, g, b are clipped to 0…1; 1.5·2²³ + v rounds v to nearest and leaves it in the low bits.
                let r8 = unsafeBitCast(r * 255 + 12_582_912.0, to: SIMD8<UInt32>.self) &- 0x4B40_0000
                let g8 = unsafeBitCast(g * 255 + 12_582_912.0, to: SIMD8<UInt32>.self) &- 0x4B40_0000
                let b8 = unsafeBitCast(bb * 255 + 12_582_912.0, to: SIMD8<UInt32>.self) &- 0x4B40_0000
                let dst = rgb + 3 * p
                for k in 0..<n {
                    dst[3 * k] = UInt8(truncatingIfNeeded: r8[k])
                    dst[3 * k + 1] = UInt8(truncatingIfNeeded: g8[k])
                    dst[3 * k + 2] = UInt8(truncatingIfNeeded: b8[k])
                }
                p += 8
            }
        }
    }
}
