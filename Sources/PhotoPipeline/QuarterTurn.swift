import Infer

/// Quarter turns of square grids and of pictures, counterclockwise as NumPy's `rot90` turns an image (the orientation head was
/// trained on pictures turned that way): turned once, a grid's last column becomes its first row. Turns are taken
/// modulo 4, so −1 is a clockwise quarter turn and `turn(by: k)` is undone by `turn(by: -k)`.
enum QuarterTurn {
    /// Writes `source` turned `turns` quarter turns into `destination`: grids of `sidePx` × `sidePx` cells, each cell
    /// `stride` consecutive elements kept together (1 for a picture plane; a cell's kept bins for suggestions).
    /// `source` and `destination` must not overlap. Allocates nothing; any thread.
    static func turn<T>(
        _ source: UnsafePointer<T>, into destination: UnsafeMutablePointer<T>, sidePx n: Int, turns: Int,
        stride s: Int = 1
    ) {
        let last = n - 1
        for y in 0..<n {
            for x in 0..<n {
                // The source cell that lands at (x, y).
                let from: Int
                switch ((turns % 4) + 4) % 4 {
                case 0: from = y * n + x
                case 1: from = x * n + (last - y)
                case 2: from = (last - y) * n + (last - x)
                default: from = (last - x) * n + y
                }
                (destination + (y * n + x) * s).update(from: source + from * s, count: s)
            }
        }
    }

    /// A point given as fractions of a square grid's side (`u` across, `v` down) where it lies once the grid is turned
    /// `turns` quarter turns.
    static func turn(u: Float, v: Float, turns: Int) -> (u: Float, v: Float) {
        var (u, v) = (u, v)
        for _ in 0..<((turns % 4) + 4) % 4 { (u, v) = (v, 1 - u) }
        return (u, v)
    }

    /// `image` turned `turns` quarter turns (an odd number swaps its width and height): the same turn as `turn(_:into:)`
    /// for a picture of any shape. Allocates its result; for the saver, not the frame loop.
    static func turned(_ image: RGBImage, turns: Int) -> RGBImage {
        let k = ((turns % 4) + 4) % 4
        guard k != 0 else { return image }
        let (w, h) = (image.widthPx, image.heightPx)
        let (outW, outH) = k == 2 ? (w, h) : (h, w)
        var pixels = [UInt8](repeating: 0, count: 3 * w * h)
        for y in 0..<outH {
            for x in 0..<outW {
                // The source pixel that lands at (x, y).
                let (sx, sy): (Int, Int)
                switch k {
                case 1: (sx, sy) = (w - 1 - y, x)
                case 2: (sx, sy) = (w - 1 - x, h - 1 - y)
                default: (sx, sy) = (y, h - 1 - x)
                }
                let from = 3 * (sy * w + sx), to = 3 * (y * outW + x)
                pixels[to] = image.pixels[from]
                pixels[to + 1] = image.pixels[from + 1]
                pixels[to + 2] = image.pixels[from + 2]
            }
        }
        return RGBImage(widthPx: outW, heightPx: outH, pixels: pixels)
    }

    /// The corners of a quad (clockwise from its top-left, as `Quad` holds them) listed from the top-left of its
    /// picture once that picture is turned `turns` quarter turns: turned once, the picture's top-right corner becomes
    /// its top-left.
    static func cornerOrder(turns: Int) -> [Int] {
        let k = ((turns % 4) + 4) % 4
        return (0..<4).map { ($0 + k) % 4 }
    }
}
