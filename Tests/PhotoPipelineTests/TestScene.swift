import ColorcamCore
import Detect
import Foundation

/// The repository root (for the bundled default model).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// A 4:2:0 full-range frame: a flat table of luma `tableLuma` (neutral chroma) with a greyscale "print" at `quad`
/// whose content is `picture(u, v)` (u, v in 0…1 across the print), point-sampled at pixel centres.
func sceneFrame(
    widthPx: Int = 320, heightPx: Int = 240, tableLuma: UInt8 = 60, tableCb: UInt8 = 128,
    tableCr: UInt8 = 128, quad: Quad?, picture: (Double, Double) -> Double
) -> FrameBuffer {
    let frame = FrameBuffer(geometry: FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: .yuv420(.jpeg)))
    let luma = frame.luma.bindMemory(to: UInt8.self)
    frame.cb.bindMemory(to: UInt8.self).initialize(repeating: tableCb)
    frame.cr.bindMemory(to: UInt8.self).initialize(repeating: tableCr)
    let unit = Quad(PixelPoint(0, 0), PixelPoint(1, 0), PixelPoint(1, 1), PixelPoint(0, 1))
    let toPicture = quad.flatMap { Homography(from: $0, to: unit) }
    for y in 0..<heightPx {
        for x in 0..<widthPx {
            var value = Double(tableLuma)
            if let toPicture, let p = toPicture.apply(PixelPoint(Double(x) + 0.5, Double(y) + 0.5)),
                (0...1).contains(p.x), (0...1).contains(p.y)
            {
                value = picture(p.x, p.y)
            }
            luma[y * widthPx + x] = UInt8(max(0, min(255, value.rounded())))
        }
    }
    return frame
}

/// A light picture with soft structure (a sky-like gradient over a darker "ground" with a few blobs).
func landscape(_ u: Double, _ v: Double) -> Double {
    let ground = v > 0.6 ? 90.0 : 0
    let blob = 40 * exp(-((u - 0.3) * (u - 0.3) + (v - 0.4) * (v - 0.4)) * 30)
    return 220 - 60 * v - ground + blob
}

/// A different picture (for change detection).
func portrait(_ u: Double, _ v: Double) -> Double {
    let face = 120 * exp(-((u - 0.5) * (u - 0.5) * 6 + (v - 0.45) * (v - 0.45) * 4) * 6)
    return 90 + face + 20 * u
}

/// The standard print position in a 320×240 frame, slightly rotated.
let printQuad = Quad(PixelPoint(70, 50), PixelPoint(250, 58), PixelPoint(244, 190), PixelPoint(64, 182))

/// L* as a decoder sees it (full-range BT.601, chroma replicated over its 2×2 block), for frame pixel (x, y).
func decodedLightness(_ frame: FrameBuffer, _ x: Int, _ y: Int) -> Double {
    let g = frame.geometry
    let yv = Double(frame.luma.load(fromByteOffset: y * g.widthPx + x, as: UInt8.self))
    let c = (y / 2) * g.chromaWidthPx + x / 2
    let cb = Double(frame.cb.load(fromByteOffset: c, as: UInt8.self)) - 128
    let cr = Double(frame.cr.load(fromByteOffset: c, as: UInt8.self)) - 128
    func clip(_ v: Double) -> Double { min(max(v / 255, 0), 1) }
    let r = clip(yv + 1.402 * cr), g2 = clip(yv - 0.344136 * cb - 0.714136 * cr), b = clip(yv + 1.772 * cb)
    func lin(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
    let t = 0.212671 * lin(r) + 0.715160 * lin(g2) + 0.072169 * lin(b)
    return t > 0.008856 ? 116 * cbrt(t) - 16 : 903.3 * t
}
