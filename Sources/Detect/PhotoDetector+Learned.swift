import ColorcamCore

extension PhotoDetector {
    /// The learned pass: the segmenter's maps for `frame` → foreground cells (inside a print and not on an edge, so
    /// an edge line separates prints whose interiors touch) → 8-connected regions, opened → each region's hull
    /// placed by `considerRegion` like a classic region's, its quad first grown out to where the paper's edge should
    /// be (`LearnedRegionParameters`).
    ///
    /// Runs on the caller's thread; allocates nothing once the region lists have grown.
    func considerLearnedRegions(_ maps: SegmentationMaps, sampler: PlaneSampler, minimumSidePx: Double) {
        guard let segmenter, let learnedRegions, let foreground else { return }
        let grid = segmenter.grid
        guard grid.widthCells >= 3, grid.heightCells >= 3 else { return }
        let p = learnedParameters
        let c = Double(grid.cellPx)
        var search = RegionSearch(outlineOffsetPx: p.outlineOffsetCells * c, inwardPx: p.searchInwardCells * c,
                                  outwardPx: p.searchOutwardCells * c, wideInwardPx: p.wideSearchInwardCells * c,
                                  wideOutwardPx: p.wideSearchOutwardCells * c,
                                  maximumCornerShiftPx: p.maximumCornerShiftCells * c)
        for pass in 0..<2 {
            let edgeThreshold = pass == 0 ? p.edgeThreshold : p.secondPassEdgeThreshold
            guard edgeThreshold > 0 else { continue }
            search.rejectsEnclosing = pass == 1  // regions not cut by edges may hold several prints
            for j in 0..<grid.heightCells {
                let interior = maps.interior + j * maps.rowStride, edge = maps.edge + j * maps.rowStride
                let out = foreground + j * grid.widthCells
                for i in 0..<grid.widthCells {
                    out[i] = interior[i] >= p.interiorThreshold && edge[i] < edgeThreshold ? 1 : 0
                }
            }
            learnedRegions.extract(foreground: foreground, minimumSidePx: max(3, Int(minimumSidePx / c * 0.8)),
                                   openingRadius: p.openingRadiusCells)
            trace?("learned (edge < \(edgeThreshold)): \(learnedRegions.regions.count) regions")
            for region in learnedRegions.regions {
                considerRegion(region, of: learnedRegions, sampler: sampler, scale: c, search: search,
                               minimumSidePx: minimumSidePx)
            }
        }
    }

    /// `both` mode: drops the candidates found so far (the classic passes') that the segmenter does not see as a
    /// print — fewer than half of 25 points inside the quad (a 5 × 5 lattice from 10 % to 90 % of the way between
    /// opposite sides) in cells whose interior probability reaches `interiorThreshold`. The edge passes find
    /// outlines in table texture, in a picture's own content and across two prints; the segmenter knows what a
    /// print looks like. In place, without allocating.
    func droppingCandidatesTheSegmenterDoesNotSee(_ maps: SegmentationMaps) {
        guard let segmenter else { return }
        let grid = segmenter.grid, c = Double(grid.cellPx)
        let threshold = learnedParameters.interiorThreshold
        var kept = 0
        for index in candidates.indices {
            let quad = candidates[index].quad
            var inside = 0
            for a in 0..<5 {
                let u = 0.1 + 0.2 * Double(a)
                for b in 0..<5 {
                    let v = 0.1 + 0.2 * Double(b)
                    let top = quad[0] + (quad[1] - quad[0]) * u, bottom = quad[3] + (quad[2] - quad[3]) * u
                    let p = top + (bottom - top) * v
                    let i = min(grid.widthCells - 1, max(0, Int(p.x / c)))
                    let j = min(grid.heightCells - 1, max(0, Int(p.y / c)))
                    if maps.interior[j * maps.rowStride + i] >= threshold { inside += 1 }
                }
            }
            if inside * 2 >= 25 {
                candidates[kept] = candidates[index]
                kept += 1
            } else {
                trace?("dropped (the segmenter sees \(inside) of 25 points inside): \(candidates[index].quad)")
            }
        }
        candidates.removeLast(candidates.count - kept)
    }

    /// Moves each learned candidate's sides (from index `first` on) to where the segmenter says the paper ends: a side along which the interior map
    /// is high just outside (a line in the picture, or the picture's edge inside a white border, taken for the
    /// paper's edge) slides outwards, one along which it is low just inside (a shadow or the table taken in) slides
    /// inwards — each to the nearest clear edge where the map agrees (`EdgeRefiner.repairSide`), then every side
    /// is refined tightly; kept when the outline still passes the shape checks. The edge search places the outline
    /// to a pixel; the maps know which edge is the paper's. In place, without allocating.
    func correctingSidesAgainstTheSegmenter(_ maps: SegmentationMaps, sampler: PlaneSampler, from first: Int = 0) {
        guard let segmenter else { return }
        let grid = segmenter.grid, c = Double(grid.cellPx)
        let p = learnedParameters
        let probePx = p.sideProbeCells * c
        // Bilinear interior probability at a frame point (cell centres at (i + 0.5) c).
        func interior(_ q: PixelPoint) -> Double {
            let fx = min(max(q.x / c - 0.5, 0), Double(grid.widthCells - 1))
            let fy = min(max(q.y / c - 0.5, 0), Double(grid.heightCells - 1))
            let i0 = Int(fx), j0 = Int(fy)
            let i1 = min(i0 + 1, grid.widthCells - 1), j1 = min(j0 + 1, grid.heightCells - 1)
            let ax = Float(fx - Double(i0)), ay = Float(fy - Double(j0))
            let row0 = maps.interior + j0 * maps.rowStride, row1 = maps.interior + j1 * maps.rowStride
            let top = row0[i0] + (row0[i1] - row0[i0]) * ax, bottom = row1[i0] + (row1[i1] - row1[i0]) * ax
            return Double(top + (bottom - top) * ay)
        }
        // Mean interior probability along a side's middle 70 %, `offsetPx` outside it (negative: inside).
        func along(_ a: PixelPoint, _ b: PixelPoint, offsetPx: Double) -> Double {
            var d = b - a
            let length = (d * d).sum().squareRoot()
            guard length > 1 else { return 0.5 }
            d /= length
            let n = PixelPoint(d.y, -d.x)  // outward for a clockwise quad
            var sum = 0.0
            for k in 0..<7 { sum += interior(a + (b - a) * (0.15 + 0.7 * Double(k) / 6) + n * offsetPx) }
            return sum / 7
        }
        for index in first..<candidates.count {
            var quad = candidates[index].quad
            if quad.signedArea < 0 { quad = Quad(quad[3], quad[2], quad[1], quad[0]) }
            let size = quad.area.squareRoot()
            var changed = false
            for side in 0..<4 {
                let a = quad[side], b = quad[side + 1]
                let outside = along(a, b, offsetPx: probePx), inside = along(a, b, offsetPx: -probePx)
                let inwards: Bool
                if outside >= p.sideOutsideLimit {
                    inwards = false
                } else if inside < p.sideInsideLimit {
                    inwards = true
                } else {
                    continue
                }
                // Positions where the map agrees: paper just inside, table just outside.
                let repaired = refiner.repairSide(
                    quad, side: side, currentSupport: 0, in: sampler,
                    maximumOffsetPx: inwards ? -2 : p.sideSearchFraction * size,
                    inwardPx: inwards ? p.sideSearchFraction * size : -2,
                    admits: { a, b in
                        along(a, b, offsetPx: probePx) < 0.5 && along(a, b, offsetPx: -probePx) >= 0.5
                    })
                guard let repaired, repaired.isConvex else { continue }
                trace?("side \(side) moved \(inwards ? "in" : "out") by the segmenter's map: \(tracedCorners(quad))"
                       + " -> \(tracedCorners(repaired))")
                quad = repaired
                changed = true
            }
            guard changed, let tight = refiner.refine(quad, in: sampler, inwardPx: 2, outwardPx: 2),
                  tight.quad.isConvex, tight.minSupport >= minimumSideSupport, tight.meanSupport >= minimumMeanSupport
            else { continue }
            let result = tight.quad.canonicallyOrdered()
            let fit = shape(of: result)
            let sides = result.meanSideLengthsPx
            guard fit.angleDeviationDegrees <= parameters.quadratureTolerance,
                  fit.aspect >= parameters.minimumAspectRatio - 1e-9,
                  fit.aspect <= parameters.maximumAspectRatio + 1e-9,
                  min(sides.width, sides.height)
                    >= parameters.minimumSize * Double(min(geometry.widthPx, geometry.heightPx))
            else { continue }
            candidates[index] = Observation(quad: result, confidence: min(1, tight.meanSupport),
                                            aspectRatio: fit.aspect)
        }
    }
}
