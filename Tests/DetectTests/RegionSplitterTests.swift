import Testing

@testable import Detect

/// A grid of `w × h` cells with the rectangles `rects` (x0, y0, x1, y1, inclusive) set; an edge plane of zeros.
private struct Cells {
    let w: Int, h: Int
    var on: [Bool]
    var edge: [Float]

    init(_ w: Int, _ h: Int, _ rects: [(Int, Int, Int, Int)]) {
        self.w = w
        self.h = h
        on = Array(repeating: false, count: w * h)
        edge = Array(repeating: 0, count: w * h)
        for (x0, y0, x1, y1) in rects { for y in y0...y1 { for x in x0...x1 { on[y * w + x] = true } } }
    }

    func split(_ splitter: RegionSplitter) -> Int {
        edge.withUnsafeBufferPointer { e in
            splitter.split(minX: 0, minY: 0, maxX: w - 1, maxY: h - 1, edge: e.baseAddress!, edgeRowStride: w) {
                on[$0]
            }
        }
    }
}

/// Two blocks joined by a neck two cells wide split into two groups, each block wholly in its own group and every
/// cell of the region in one of them.
@Test func twoBlocksJoinedByANeckSplitIntoTwo() {
    let cells = Cells(40, 30, [(2, 2, 15, 13), (16, 7, 19, 8), (20, 5, 35, 20)])
    let splitter = RegionSplitter(widthCells: 40, heightCells: 30)
    #expect(cells.split(splitter) == 2)
    let a = splitter.cellLabels[5 * 40 + 5], b = splitter.cellLabels[15 * 40 + 30]
    #expect(a >= 0 && b >= 0 && a != b)
    for y in 0..<30 {
        for x in 0..<40 {
            let label = splitter.cellLabels[y * 40 + x]
            #expect((label >= 0) == cells.on[y * 40 + x], "cell \(x),\(y)")
            if x <= 15, cells.on[y * 40 + x] { #expect(label == a, "cell \(x),\(y)") }
            if x >= 20, cells.on[y * 40 + x] { #expect(label == b, "cell \(x),\(y)") }
        }
    }
}

/// A solid block does not split, nor do two blocks side by side along a whole side (no neck: a print twice as
/// wide is not split by erosion); every label stays -1.
@Test func aBlockWithoutANeckDoesNotSplit() {
    let splitter = RegionSplitter(widthCells: 40, heightCells: 30)
    for cells in [Cells(40, 30, [(3, 3, 30, 20)]), Cells(40, 30, [(2, 5, 17, 18), (18, 5, 33, 18)])] {
        #expect(cells.split(splitter) == 0)
        #expect((0..<(40 * 30)).allSatisfy { splitter.cellLabels[$0] == -1 })
    }
}

/// A faint edge line (0.3: under the foreground's 0.5, over the splitter's 0.25) across a block is where it
/// splits; at 0.2 it is not an edge to the splitter.
@Test func aFaintEdgeLineSplitsARegion() {
    for (strength, groups) in [(Float(0.3), 2), (Float(0.2), 0)] {
        var cells = Cells(40, 30, [(2, 4, 37, 22)])
        for y in 4...22 { cells.edge[y * 40 + 20] = strength }
        let splitter = RegionSplitter(widthCells: 40, heightCells: 30)
        #expect(cells.split(splitter) == groups, "edge \(strength)")
        if groups == 2 { #expect(splitter.cellLabels[10 * 40 + 5] != splitter.cellLabels[10 * 40 + 30]) }
    }
}

/// The depth a neck needs: blocks joined by a neck 6 cells wide split (the cores 4 cells deep part), one 10 cells
/// wide does not (`maximumDepthCells` 4); a neck as deep as the blocks is no neck. A 3-cell speck beside a block,
/// joined by one cell, is under `minimumCoreCells` and splits nothing off.
@Test func aWiderNeckSplitsOnlyWithinTheDeepestErosion() {
    let splitter = RegionSplitter(widthCells: 60, heightCells: 40)
    let blocks = [(2, 2, 21, 37), (30, 2, 49, 37)]
    for (neckRows, groups) in [(6, 2), (10, 0)] {
        let top = 20 - neckRows / 2
        let cells = Cells(60, 40, blocks + [(22, top, 29, top + neckRows - 1)])
        #expect(cells.split(splitter) == groups, "neck \(neckRows) rows")
        if groups == 2 {
            #expect(splitter.cellLabels[20 * 60 + 10] != splitter.cellLabels[20 * 60 + 40])
            #expect((0..<(60 * 40)).allSatisfy { (splitter.cellLabels[$0] >= 0) == cells.on[$0] })
        } else {
            #expect((0..<(60 * 40)).allSatisfy { splitter.cellLabels[$0] == -1 })
        }
    }
    let speck = Cells(60, 40, [(2, 2, 21, 37), (22, 20, 22, 20), (23, 19, 25, 21)])
    #expect(speck.split(splitter) == 0)
}
