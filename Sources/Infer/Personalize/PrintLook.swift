import Foundation

/// What the camera makes of a black-and-white print, applied to the lightness a colour photo would print as: the
/// subset of the colour model's print simulation (`tools/train/print_sim.py`) that changes L — a faded tone curve
/// (lifted blacks, dimmed whites, gamma), uneven light (a linear gradient), blur (out of focus, rectification) and
/// grain / sensor noise. Toning changes a print's hue, which the model never sees (it is given L only).
///
/// Each draw is random within the ranges below; `apply` is deterministic for a given generator state.
public struct PrintLook: Sendable {
    /// L of the print's black and white (0…100).
    public var blackL: Float, whiteL: Float
    /// Tone-curve exponent on L/100.
    public var gamma: Float
    /// Relative light change across the print along `gradientAngle` (radians).
    public var gradient: Float, gradientAngle: Float
    /// Gaussian blur sigma in pixels of the model's input.
    public var blurPx: Float
    /// Noise standard deviation in L units.
    public var noiseL: Float

    /// The look of an untouched photo (identity).
    public static let clean = PrintLook(
        blackL: 0, whiteL: 100, gamma: 1, gradient: 0, gradientAngle: 0, blurPx: 0, noiseL: 0)

    /// A random look: black 0–15, white 82–100, gamma 0.75–1.35, gradient 0–25 %, blur 0–1.5 px, noise 0–3 L.
    public static func random(_ rng: inout some RandomNumberGenerator) -> PrintLook {
        PrintLook(
            blackL: .random(in: 0...15, using: &rng), whiteL: .random(in: 82...100, using: &rng),
            gamma: .random(in: 0.75...1.35, using: &rng), gradient: .random(in: 0...0.25, using: &rng),
            gradientAngle: .random(in: 0...(2 * .pi), using: &rng), blurPx: .random(in: 0...1.5, using: &rng),
            noiseL: .random(in: 0...3, using: &rng))
    }

    /// Applies the look to an L plane (`widthPx` × `heightPx`, 0…100) in place; noise comes from `rng`.
    public func apply(
        to lightness: inout [Float], widthPx w: Int, heightPx h: Int, rng: inout some RandomNumberGenerator
    ) {
        let cx = cos(gradientAngle), cy = sin(gradientAngle)
        for y in 0..<h {
            for x in 0..<w {
                let i = y * w + x
                let t = pow(min(max(lightness[i] / 100, 0), 1), gamma)
                let u = (Float(x) / Float(max(w - 1, 1)) - 0.5) * cx + (Float(y) / Float(max(h - 1, 1)) - 0.5) * cy
                lightness[i] = (blackL + (whiteL - blackL) * t) * (1 + gradient * u)
            }
        }
        if blurPx > 0.05 { Self.gaussianBlur(&lightness, widthPx: w, heightPx: h, sigma: blurPx) }
        if noiseL > 0 {
            for i in lightness.indices {
                // Box-Muller from two uniforms
                let u1 = Float.random(in: Float.ulpOfOne...1, using: &rng), u2 = Float.random(in: 0...1, using: &rng)
                lightness[i] += noiseL * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
            }
        }
        for i in lightness.indices { lightness[i] = min(max(lightness[i], 0), 100) }
    }

    /// Separable Gaussian blur with edge clamping (radius 3 sigma).
    static func gaussianBlur(_ plane: inout [Float], widthPx w: Int, heightPx h: Int, sigma: Float) {
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        var taps = (-radius...radius).map { exp(-Float($0 * $0) / (2 * sigma * sigma)) }
        let total = taps.reduce(0, +)
        taps = taps.map { $0 / total }
        var tmp = plane
        for y in 0..<h {
            for x in 0..<w {
                var s: Float = 0
                for k in -radius...radius { s += taps[k + radius] * plane[y * w + min(max(x + k, 0), w - 1)] }
                tmp[y * w + x] = s
            }
        }
        for y in 0..<h {
            for x in 0..<w {
                var s: Float = 0
                for k in -radius...radius { s += taps[k + radius] * tmp[min(max(y + k, 0), h - 1) * w + x] }
                plane[y * w + x] = s
            }
        }
    }
}
