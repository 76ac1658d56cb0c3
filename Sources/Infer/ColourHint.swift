/// A colour hint: "the picture is this colour here" (Zhang, Zhu et al. 2017's user point). Value type.
///
/// Position in the colorized image's pixels (x right, y down, pixel centres at integer + 0.5 … given as the pixel's
/// column and row, fractional allowed); the colour as sRGB 8-bit, of which only the chroma (Lab a, b) is used: the
/// picture keeps its own lightness.
public struct ColourHint: Sendable, Equatable {
    public var xPx: Double
    public var yPx: Double
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(xPx: Double, yPx: Double, red: UInt8, green: UInt8, blue: UInt8) {
        self.xPx = xPx
        self.yPx = yPx
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// The hint's chroma (CIE Lab a, b; D65, the same conversion as the colorizer's).
    public var ab: (a: Float, b: Float) {
        let rgb: [Float] = [Float(red) / 255, Float(green) / 255, Float(blue) / 255]
        var lab: [Float] = [0, 0, 0]
        Lab.convertRGBToLab(rgb, &lab, pixelCount: 1)
        return (lab[1], lab[2])
    }

    /// Half the side of the square a hint covers at the model's resolution: 9×9 at 256² (training drew 0…4). Chosen on
    /// training photos (`tools/train/hint_eval.py --split train`, 5 hints: radius 2 +15.6, 4 +17.1, 6 +17.3 points of
    /// hue agreement over none; 10 hints best at 4).
    public static let patchRadiusPx = 4

    /// Parses `X,Y,#RRGGBB` (the CLI's `--hint`); nil when malformed.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 3, let x = Double(parts[0]), let y = Double(parts[1]), x.isFinite, y.isFinite else {
            return nil
        }
        guard let c = Self.colour(hex: parts[2]) else { return nil }
        self.init(xPx: x, yPx: y, red: c.red, green: c.green, blue: c.blue)
    }

    /// Parses `#RRGGBB` (the `#` optional, six hex digits); nil otherwise. The one colour parser of the CLI, the
    /// preview's hint API and the hints file.
    public static func colour(hex text: Substring) -> (red: UInt8, green: UInt8, blue: UInt8)? {
        var hex = text
        if hex.hasPrefix("#") { hex = hex.dropFirst() }
        guard hex.count == 6, hex.allSatisfy(\.isHexDigit), let value = UInt32(hex, radix: 16) else { return nil }
        return (UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF))
    }
}

/// A hint in the model input's own coordinates: `u`, `v` fractions of its width and height (0…1; pixel `i`'s centre
/// is at `(i + 0.5) / n`), and the chroma to give there. Where a hint given on an image, or on a print in rectified
/// space, ends up.
public struct HintPoint: Sendable, Equatable {
    public var u: Float
    public var v: Float
    public var a: Float
    public var b: Float

    public init(u: Float, v: Float, a: Float, b: Float) {
        self.u = u
        self.v = v
        self.a = a
        self.b = b
    }

    /// Writes a model's hint planes (side `sizePx`; `ab` the a plane then the b plane, `mask` one plane): zeros, then
    /// each hint's chroma over its square (`ColourHint.patchRadiusPx`; later hints win where squares meet). Points
    /// outside 0…1 are clamped to the edge. Allocates nothing.
    public static func writePlanes(
        _ hints: UnsafeBufferPointer<HintPoint>, sizePx n: Int, ab: UnsafeMutableBufferPointer<Float>,
        mask: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(ab.count == 2 * n * n && mask.count == n * n, "hint planes of the wrong size for \(n)x\(n)")
        ab.update(repeating: 0)
        mask.update(repeating: 0)
        let r = ColourHint.patchRadiusPx
        for hint in hints {
            let cx = min(max(Int((Double(hint.u) * Double(n) - 0.5).rounded()), 0), n - 1)
            let cy = min(max(Int((Double(hint.v) * Double(n) - 0.5).rounded()), 0), n - 1)
            for y in max(0, cy - r)...min(n - 1, cy + r) {
                for x in max(0, cx - r)...min(n - 1, cx + r) {
                    ab[y * n + x] = hint.a
                    ab[n * n + y * n + x] = hint.b
                    mask[y * n + x] = 1
                }
            }
        }
    }

    /// Makes the colours follow `hints` where they were given: over each hint's square (`ColourHint.patchRadiusPx` at
    /// the model's `inputSizePx`, scaled to the output's grid) the output ab becomes the hint's, blending back to the
    /// model's own over as far again (a smooth step). The model weighs a hint against what it sees and may only turn
    /// towards it; the person who gave it said "this point is this colour". `ab`: the output grid (`widthPx` ×
    /// `heightPx`, the a plane then the b plane) in the model's units (`scale`: its output scale, so a hint's chroma
    /// is written as `a / scale`). Later hints win where squares meet. Allocates nothing.
    public static func stamp(
        _ hints: UnsafeBufferPointer<HintPoint>, into ab: UnsafeMutableBufferPointer<Float>, widthPx w: Int,
        heightPx h: Int, inputSizePx n: Int, scale: Float
    ) {
        precondition(ab.count == 2 * w * h, "ab grid of the wrong size for \(w)x\(h)")
        guard scale != 0 else { return }
        let inner = (Double(ColourHint.patchRadiusPx) + 0.5) * Double(w) / Double(n)
        let outer = 2 * inner
        for hint in hints {
            let cx = Double(hint.u) * Double(w), cy = Double(hint.v) * Double(h)
            let y0 = max(0, Int((cy - outer).rounded(.down))), y1 = min(h - 1, Int((cy + outer).rounded(.up)))
            let x0 = max(0, Int((cx - outer).rounded(.down))), x1 = min(w - 1, Int((cx + outer).rounded(.up)))
            guard y0 <= y1, x0 <= x1 else { continue }
            let a = hint.a / scale, b = hint.b / scale
            for y in y0...y1 {
                for x in x0...x1 {
                    // Chebyshev distance: the hint's square, as the model's hint planes have it.
                    let d = max(abs(Double(x) + 0.5 - cx), abs(Double(y) + 0.5 - cy))
                    if d >= outer { continue }
                    let t = d <= inner ? 1 : 1 - (d - inner) / (outer - inner)
                    let weight = Float(t * t * (3 - 2 * t))
                    let i = y * w + x
                    ab[i] += (a - ab[i]) * weight
                    ab[w * h + i] += (b - ab[w * h + i]) * weight
                }
            }
        }
    }
}
