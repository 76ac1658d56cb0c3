import ColorcamCore
import Testing

@testable import Detect

/// The classic passes' vectorised loops (Sobel, non-maximum suppression, the opening's row pass) against plain
/// per-pixel forms written here, on sizes whose rows end in a partial vector: the results must be the same bits.
@Suite struct VectorPassesTests {
    /// Coarse planes of rectangles on a noisy ground: steps in luma and chroma, flat parts and texture.
    private func scene(_ w: Int, _ h: Int, seed: UInt64) -> CoarseFrame {
        let coarse = CoarseFrame(geometry: FrameGeometry(widthPx: w, heightPx: h, chroma: .yuv420(.jpeg)))
        #expect(coarse.widthPx == w && coarse.heightPx == h)
        var noise = SplitMix(seed)
        for plane in [coarse.luma, coarse.cb, coarse.cr] {
            for k in 0..<(w * h) { plane[k] = Float(100 + noise.below(9)) }
            for _ in 0..<6 {
                let x0 = noise.below(w), y0 = noise.below(h)
                let x1 = min(w - 1, x0 + noise.below(w / 2 + 1)), y1 = min(h - 1, y0 + noise.below(h / 2 + 1))
                let value = Float(noise.below(256))
                for y in y0...y1 { for x in x0...x1 { plane[y * w + x] = value + Float(noise.below(3)) } }
            }
        }
        return coarse
    }

    /// The Sobel magnitude (strongest weighted plane per pixel) and the Canny edges, per pixel.
    private func referenceEdges(_ coarse: CoarseFrame, chromaWeight: Float, low: Float, high: Float)
        -> (magnitude: [Float], edges: [UInt8])
    {
        let w = coarse.widthPx, h = coarse.heightPx
        var m2 = [Float](repeating: 0, count: w * h), gx = m2, gy = m2
        for (index, plane) in [coarse.luma, coarse.cb, coarse.cr].enumerated() {
            let weight2: Float = index == 0 ? 1 : chromaWeight * chromaWeight
            for j in 1..<(h - 1) {
                for i in 1..<(w - 1) {
                    func p(_ x: Int, _ y: Int) -> Float { plane[y * w + x] }
                    let x =
                        (p(i + 1, j - 1) + 2 * p(i + 1, j) + p(i + 1, j + 1))
                        - (p(i - 1, j - 1) + 2 * p(i - 1, j) + p(i - 1, j + 1))
                    let y =
                        (p(i - 1, j + 1) + 2 * p(i, j + 1) + p(i + 1, j + 1))
                        - (p(i - 1, j - 1) + 2 * p(i, j - 1) + p(i + 1, j - 1))
                    let s = (x * x + y * y) * weight2
                    if index == 0 || s > m2[j * w + i] { m2[j * w + i] = s; gx[j * w + i] = x; gy[j * w + i] = y }
                }
            }
        }
        let magnitude = m2.map { $0.squareRoot() }
        var peaks = [Float](repeating: 0, count: w * h)
        let tan22: Float = 0.41421356
        for j in 1..<(h - 1) {
            for i in 1..<(w - 1) {
                let c = j * w + i, ax = abs(gx[c]), ay = abs(gy[c])
                let across =
                    ay <= tan22 * ax ? 1 : ax <= tan22 * ay ? w : (gx[c] > 0) == (gy[c] > 0) ? w + 1 : w - 1
                if magnitude[c] >= magnitude[c - across] && magnitude[c] > magnitude[c + across] {
                    peaks[c] = magnitude[c]
                }
            }
        }
        var edges = peaks.map { $0 >= high ? UInt8(1) : $0 >= low && $0 > 0 ? 2 : 0 }
        var grown = true
        while grown {
            grown = false
            for j in 1..<(h - 1) {
                for i in 1..<(w - 1) where edges[j * w + i] == 2 {
                    let near = [-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1].contains { edges[j * w + i + $0] == 1 }
                    if near { edges[j * w + i] = 1; grown = true }
                }
            }
        }
        return (magnitude, edges.map { $0 == 1 ? 1 : 0 })
    }

    @Test(arguments: [(75, 47), (320, 240), (11, 5), (3, 3)])
    func edgesMatchThePerPixelForm(size: (Int, Int)) {
        let (w, h) = size
        for seed in UInt64(1)...3 {
            let coarse = scene(w, h, seed: seed &* 7919 &+ UInt64(w))
            let detector = EdgeDetector(widthPx: w, heightPx: h)
            detector.detect(coarse, useChroma: true, sensitivity: 1)
            let reference = referenceEdges(
                coarse, chromaWeight: detector.chromaWeight, low: detector.lowThreshold, high: detector.highThreshold)
            let magnitude = Array(UnsafeBufferPointer(start: detector.magnitude, count: w * h))
            let magnitudeMismatches = zip(magnitude, reference.magnitude).filter { $0.bitPattern != $1.bitPattern }
                .count
            #expect(magnitudeMismatches == 0, "\(w)x\(h) seed \(seed): magnitude differs at \(magnitudeMismatches) px")
            let edges = Array(UnsafeBufferPointer(start: detector.edges, count: w * h)).map { $0 == 1 ? 1 : 0 }
            let edgeMismatches = zip(edges, reference.edges).filter { $0 != Int($1) }.count
            #expect(edgeMismatches == 0, "\(w)x\(h) seed \(seed): edges differ at \(edgeMismatches) px")
            #expect(w < 20 || edges.contains(1), "the scene has edges")
        }
    }

    /// Opening by a (2r+1)² square, outside the frame background, then the border ring cleared.
    private func referenceOpening(_ mask: [UInt8], _ w: Int, _ h: Int, radius r: Int) -> [Bool] {
        func pass(_ m: [UInt8], erode: Bool) -> [UInt8] {
            var out = m
            for y in 0..<h {
                for x in 0..<w {
                    var ones = 0
                    for dy in -r...r {
                        for dx in -r...r where (0..<w).contains(x + dx) && (0..<h).contains(y + dy) {
                            ones += Int(m[(y + dy) * w + x + dx])
                        }
                    }
                    out[y * w + x] = (erode ? ones == (2 * r + 1) * (2 * r + 1) : ones > 0) ? 1 : 0
                }
            }
            return out
        }
        let opened = pass(pass(mask, erode: true), erode: false)
        return (0..<(w * h)).map { k in
            let x = k % w, y = k / w
            return opened[k] == 1 && x > 0 && y > 0 && x < w - 1 && y < h - 1
        }
    }

    @Test(arguments: [(53, 41), (16, 9), (97, 20)])
    func openingMatchesThePerPixelForm(size: (Int, Int)) {
        let (w, h) = size
        var noise = SplitMix(UInt64(w * 1000 + h))
        for radius in [0, 1, 2, 3, 4, 70] {  // 70: a window wider than the vector path takes
            var mask = [UInt8](repeating: 0, count: w * h)
            for _ in 0..<12 {
                let x0 = noise.below(w), y0 = noise.below(h)
                let x1 = min(w - 1, x0 + noise.below(w / 2 + 1)), y1 = min(h - 1, y0 + noise.below(h / 2 + 1))
                for y in y0...y1 { for x in x0...x1 { mask[y * w + x] = 1 } }
            }
            for _ in 0..<(w * h / 10) { mask[noise.below(w * h)] ^= 1 }
            let extractor = RegionExtractor(widthPx: w, heightPx: h)
            mask.withUnsafeBufferPointer {
                extractor.extract(foreground: $0.baseAddress!, minimumSidePx: 1, openingRadius: radius)
            }
            let inRegions = (0..<(w * h)).map { k in extractor.regions.contains { extractor.contains($0, pixel: k) } }
            let reference = referenceOpening(mask, w, h, radius: radius)
            let mismatches = zip(inRegions, reference).filter { $0 != $1 }.count
            #expect(mismatches == 0, "\(w)x\(h) radius \(radius): the opening differs at \(mismatches) px")
            #expect(radius > 2 || h < 20 || reference.contains(true), "something survives the opening")
        }
    }

    /// The pixels a pixel-by-pixel 4-connected flood from the border cannot reach without crossing an edge, less the
    /// frame's outermost ring: what `extract(edges:…)` keeps with no dilation or opening.
    private func referenceEnclosed(_ edges: [UInt8], _ w: Int, _ h: Int) -> [Bool] {
        var reached = [Bool](repeating: false, count: w * h)
        var stack: [Int] = []
        for k in 0..<(w * h) where edges[k] == 0 {
            let x = k % w, y = k / w
            if x == 0 || y == 0 || x == w - 1 || y == h - 1 { reached[k] = true; stack.append(k) }
        }
        while let k = stack.popLast() {
            let x = k % w, y = k / w
            for (nx, ny) in [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)]
            where nx >= 0 && ny >= 0 && nx < w && ny < h {
                let n = ny * w + nx
                if !reached[n] && edges[n] == 0 { reached[n] = true; stack.append(n) }
            }
        }
        return (0..<(w * h)).map { k in
            let x = k % w, y = k / w
            return !reached[k] && x > 0 && y > 0 && x < w - 1 && y < h - 1
        }
    }

    @Test(arguments: [(64, 48), (97, 20), (17, 61), (3, 3)])
    func backgroundFloodMatchesThePerPixelForm(size: (Int, Int)) {
        let (w, h) = size
        var noise = SplitMix(UInt64(w * 7919 + h))
        for trial in 0..<6 {
            var edges = [UInt8](repeating: 0, count: w * h)
            // Rectangle outlines, some with a gap; a comb whose teeth make the flood turn back up and down; noise.
            for _ in 0..<6 {
                let x0 = noise.below(w), y0 = noise.below(h)
                let x1 = min(w - 1, x0 + noise.below(w / 2 + 1)), y1 = min(h - 1, y0 + noise.below(h / 2 + 1))
                for x in x0...x1 { edges[y0 * w + x] = 1; edges[y1 * w + x] = 1 }
                for y in y0...y1 { edges[y * w + x0] = 1; edges[y * w + x1] = 1 }
                if noise.below(2) == 0 { edges[y0 * w + (x0 + x1) / 2] = 0 }
            }
            if h > 6 && w > 6 {
                let top = noise.below(h / 3), bottom = h - 1 - noise.below(h / 3)
                for x in stride(from: 2, to: w - 2, by: 2) {
                    for y in (x % 4 == 0 ? top : top + 2)...(x % 4 == 0 ? bottom - 2 : bottom) { edges[y * w + x] = 1 }
                }
            }
            for _ in 0..<(w * h * trial / 20) { edges[noise.below(w * h)] ^= 1 }
            let extractor = RegionExtractor(widthPx: w, heightPx: h)
            edges.withUnsafeBufferPointer {
                extractor.extract(edges: $0.baseAddress!, minimumSidePx: 1, dilationRadius: 0, openingRadius: 0)
            }
            let kept = (0..<(w * h)).map { k in extractor.regions.contains { extractor.contains($0, pixel: k) } }
            let reference = referenceEnclosed(edges, w, h)
            let mismatches = zip(kept, reference).filter { $0 != $1 }.count
            #expect(mismatches == 0, "\(w)x\(h) trial \(trial): the flood differs at \(mismatches) px")
            #expect(w < 10 || reference.contains(true), "something is enclosed")
        }
    }

    /// The 8-connected components of `mask` (frame ring left out), each as its sorted pixel indices, in the raster
    /// order of their first pixel.
    private func referenceComponents(_ mask: [UInt8], _ w: Int, _ h: Int) -> [[Int]] {
        var seen = [Bool](repeating: false, count: w * h)
        var components: [[Int]] = []
        func inside(_ x: Int, _ y: Int) -> Bool { x > 0 && y > 0 && x < w - 1 && y < h - 1 && mask[y * w + x] != 0 }
        for start in 0..<(w * h) where !seen[start] && inside(start % w, start / w) {
            var pixels: [Int] = [], stack = [start]
            seen[start] = true
            while let k = stack.popLast() {
                pixels.append(k)
                for dy in -1...1 {
                    for dx in -1...1 where inside(k % w + dx, k / w + dy) {
                        let n = k + dy * w + dx
                        if !seen[n] { seen[n] = true; stack.append(n) }
                    }
                }
            }
            components.append(pixels.sorted())
        }
        return components
    }

    @Test(arguments: [(64, 48), (97, 20), (5, 5)])
    func regionsAreThe8ConnectedComponentsWithTheirCountsAndBoxes(size: (Int, Int)) {
        let (w, h) = size
        var noise = SplitMix(UInt64(w * 104_729 + h))
        for trial in 0..<5 {
            var mask = [UInt8](repeating: 0, count: w * h)
            for _ in 0..<(w * h * (trial + 1) / 12) { mask[noise.below(w * h)] = 1 }
            let extractor = RegionExtractor(widthPx: w, heightPx: h)
            mask.withUnsafeBufferPointer {
                extractor.extract(foreground: $0.baseAddress!, minimumSidePx: 1, openingRadius: 0)
            }
            let reference = referenceComponents(mask, w, h)
            #expect(extractor.regions.count == reference.count, "\(w)x\(h) trial \(trial): region count")
            for (region, pixels) in zip(extractor.regions, reference) {
                let got = (0..<(w * h)).filter { extractor.contains(region, pixel: $0) }
                #expect(got == pixels && region.pixelCount == pixels.count, "\(w)x\(h) trial \(trial): a region")
                let xs = pixels.map { $0 % w }, ys = pixels.map { $0 / w }
                #expect(
                    (region.minX, region.maxX, region.minY, region.maxY)
                        == (xs.min()!, xs.max()!, ys.min()!, ys.max()!), "\(w)x\(h) trial \(trial): a box")
                #expect(region.hullCount >= 1)
            }
            #expect(w < 10 || reference.count > 1, "the noise makes several components")
            // The same pixels given as labels (one per component) make the same regions.
            var cellLabels = [Int32](repeating: -1, count: w * h)
            for (i, pixels) in reference.enumerated() { for k in pixels { cellLabels[k] = Int32(i) } }
            let byLabel = RegionExtractor(widthPx: w, heightPx: h)
            cellLabels.withUnsafeBufferPointer {
                byLabel.extract(labels: $0.baseAddress!, labelCount: reference.count, minimumSidePx: 1)
            }
            #expect(byLabel.regions.count == reference.count)
            if trial == 0 {  // a label on a row's last pixel and the next row's first: two runs, not one
                var wrap = [Int32](repeating: -1, count: w * h)
                wrap[2 * w - 1] = 0
                wrap[2 * w] = 0
                let wrapped = RegionExtractor(widthPx: w, heightPx: h)
                wrap.withUnsafeBufferPointer {
                    wrapped.extract(labels: $0.baseAddress!, labelCount: 1, minimumSidePx: 1)
                }
                let r = wrapped.regions.first
                #expect(r.map { ($0.pixelCount, $0.minX, $0.maxX, $0.minY, $0.maxY) == (2, 0, w - 1, 1, 2) } == true)
            }
            for (a, b) in zip(extractor.regions, byLabel.regions) {
                #expect(
                    (a.pixelCount, a.minX, a.maxX, a.minY, a.maxY) == (b.pixelCount, b.minX, b.maxX, b.minY, b.maxY))
                #expect(
                    Array(extractor.hullPoints[a.hullStart..<(a.hullStart + a.hullCount)])
                        == Array(byLabel.hullPoints[b.hullStart..<(b.hullStart + b.hullCount)]))
            }
        }
    }
}

extension SplitMix {
    /// A value in 0..<n.
    fileprivate mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
