import ColorcamCore
import Detect

/// The print segmenter's input tensor, from a frame: float32 `[1, 3, H, W]` with `H × W` the grid's padded size
/// (`SegmentationGrid`), channels planar.
///
/// Per cell, from the frame's full-range BT.601 planes averaged over the cell: channel 0 = Y/255 − 0.5, channel 1 =
/// (Cb − 128)/128, channel 2 = (Cr − 128)/128. Y is averaged over the cell's `cellPx × cellPx` pixels, Cb and Cr over
/// the chroma samples covering them (for 4:2:0 the `(cellPx/2)²` block; 4:2:2 and 4:4:4 likewise by their
/// subsampling); a frame without chroma has channels 1 and 2 at 0. Columns right of the grid repeat its last column,
/// rows below it its last row.
public enum SegmenterInput {
    /// Fills `tensor` (`3 × grid.paddedHeightCells × grid.paddedWidthCells` floats) from `frame`: the grid's cells
    /// laid from frame pixel (`originXPx`, `originYPx`) — (0, 0) for the frame's own grid, a window's origin for a
    /// close look (even, so that a 4:2:0 cell starts on a chroma sample; the cells wholly inside the frame).
    /// Allocates nothing; any thread, with the frame unchanged during the call.
    public static func fill(
        from frame: FrameBuffer, grid: SegmentationGrid, originXPx: Int = 0, originYPx: Int = 0,
        into tensor: UnsafeMutablePointer<Float>
    ) {
        let g = frame.geometry
        precondition(
            originXPx >= 0 && originYPx >= 0 && originXPx % 2 == 0 && originYPx % 2 == 0
                && originXPx + grid.widthCells * grid.cellPx <= g.widthPx
                && originYPx + grid.heightCells * grid.cellPx <= g.heightPx,
            "segmenter window at (\(originXPx), \(originYPx)) of \(grid) outside \(g)")
        let wp = grid.paddedWidthCells, hp = grid.paddedHeightCells, plane = wp * hp
        let gw = grid.widthCells, gh = grid.heightCells, c = grid.cellPx
        guard gw > 0, gh > 0 else {
            tensor.update(repeating: 0, count: 3 * plane)
            return
        }
        let luma =
            UnsafePointer(frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self))
            + originYPx * g.widthPx + originXPx
        fillChannel(
            tensor, source: luma, sourceWidth: g.widthPx, grid: grid, blockWidth: c, blockHeight: c,
            scale: 1 / Float(255 * c * c), offset: -0.5)
        if g.chroma.hasChroma {
            let (sx, sy) = g.chroma.subsamplingShift
            let bw = c >> sx, bh = c >> sy
            let scale = 1 / Float(128 * bw * bh)
            let chromaOrigin = (originYPx >> sy) * g.chromaWidthPx + (originXPx >> sx)
            let cb = UnsafePointer(frame.cb.baseAddress!.assumingMemoryBound(to: UInt8.self)) + chromaOrigin
            let cr = UnsafePointer(frame.cr.baseAddress!.assumingMemoryBound(to: UInt8.self)) + chromaOrigin
            fillChannel(
                tensor + plane, source: cb, sourceWidth: g.chromaWidthPx, grid: grid,
                blockWidth: bw, blockHeight: bh, scale: scale, offset: -1)
            fillChannel(
                tensor + 2 * plane, source: cr, sourceWidth: g.chromaWidthPx, grid: grid,
                blockWidth: bw, blockHeight: bh, scale: scale, offset: -1)
        } else {
            (tensor + plane).update(repeating: 0, count: 2 * plane)
        }
    }

    /// One channel: each cell's `blockWidth × blockHeight` block of `source` summed, times `scale`, plus `offset`;
    /// then the padding. The sums are accumulated in the output row (exact in Float: even a 16384-px frame's
    /// 136-px cells sum to at most 255 × 136² < 2²⁴).
    private static func fillChannel(
        _ out: UnsafeMutablePointer<Float>, source: UnsafePointer<UInt8>,
        sourceWidth: Int, grid: SegmentationGrid, blockWidth bw: Int, blockHeight bh: Int,
        scale: Float, offset: Float
    ) {
        let wp = grid.paddedWidthCells, hp = grid.paddedHeightCells
        let gw = grid.widthCells, gh = grid.heightCells
        for j in 0..<gh {
            let row = out + j * wp
            row.update(repeating: 0, count: gw)
            for dy in 0..<bh {
                let src = source + (j * bh + dy) * sourceWidth
                if bw == 4 {
                    // The frame's own luma cells (4 px at 640×480): one 32-bit load per cell, its bytes summed in
                    // pairs (the same integer sum).
                    for i in 0..<gw {
                        let v = UnsafeRawPointer(src + 4 * i).loadUnaligned(as: UInt32.self)
                        let pairs = (v & 0x00FF_00FF) &+ ((v >> 8) & 0x00FF_00FF)
                        row[i] += Float((pairs & 0xFFFF) &+ (pairs >> 16))
                    }
                } else if bw == 2 {
                    for i in 0..<gw { row[i] += Float(Int(src[2 * i]) &+ Int(src[2 * i + 1])) }
                } else {
                    for i in 0..<gw {
                        let cell = src + i * bw
                        var sum = 0
                        for dx in 0..<bw { sum &+= Int(cell[dx]) }
                        row[i] += Float(sum)
                    }
                }
            }
            for i in 0..<gw { row[i] = row[i] * scale + offset }
            let last = row[gw - 1]
            for i in gw..<wp { row[i] = last }
        }
        let lastRow = out + (gh - 1) * wp
        for j in gh..<hp { (out + j * wp).update(from: lastRow, count: wp) }
    }
}
