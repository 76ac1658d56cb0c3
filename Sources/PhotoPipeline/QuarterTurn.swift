/// Quarter turns of square grids, counterclockwise as NumPy's `rot90` turns an image (the orientation head was
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
}
