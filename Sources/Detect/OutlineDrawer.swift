import ColorcamCore

/// Draws quad outlines into a frame for diagnostics (`colorcam detect --draw`): 2-px lines, bright red in colour
/// frames, white in mono. Writes into the caller's frame; allocates nothing. Threading: the caller owns the frame.
public enum OutlineDrawer {
    /// Draws `quad`'s four sides and a dot on its first corner (so the corner order is visible).
    public static func draw(_ quad: Quad, into frame: FrameBuffer) {
        for side in 0..<4 { line(from: quad[side], to: quad[side + 1], into: frame) }
        let c = quad[0]
        for dy in -3...3 { for dx in -3...3 { plot(Int(c.x) + dx, Int(c.y) + dy, frame) } }
    }

    private static func line(from a: PixelPoint, to b: PixelPoint, into frame: FrameBuffer) {
        let d = b - a
        let steps = max(1, Int(max(abs(d.x), abs(d.y)).rounded(.up)))
        for s in 0...steps {
            let p = a + d * (Double(s) / Double(steps))
            let x = Int(p.x.rounded(.down)), y = Int(p.y.rounded(.down))
            plot(x, y, frame); plot(x + 1, y, frame); plot(x, y + 1, frame)
        }
    }

    private static func plot(_ x: Int, _ y: Int, _ frame: FrameBuffer) {
        let g = frame.geometry
        guard x >= 0, y >= 0, x < g.widthPx, y < g.heightPx else { return }
        frame.luma.storeBytes(of: g.chroma.hasChroma ? 82 : 255, toByteOffset: y * g.widthPx + x, as: UInt8.self)
        guard g.chroma.hasChroma else { return }
        let (sx, sy) = g.chroma.subsamplingShift
        let c = (y >> sy) * g.chromaWidthPx + (x >> sx)
        frame.cb.storeBytes(of: 90, toByteOffset: c, as: UInt8.self)
        frame.cr.storeBytes(of: 240, toByteOffset: c, as: UInt8.self)
    }
}
