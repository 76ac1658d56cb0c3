import ColorcamCore

/// Placing one candidate region: its coarse quad (`coarseOutline`), the full-resolution edge search and repairs
/// (`considerRegion`), the white border around a picture, and the checks every outline passes (`checkedOutline`). The
/// classic passes, the learned regions and the close looks all place their regions here.
///
/// Threading and ownership as `PhotoDetector`'s: the caller's thread, the detector's working memory; nothing
/// allocated once `candidates` has grown.
extension PhotoDetector {
    /// Where `considerRegion` searches for a region's edges at full resolution, frame pixels.
    struct RegionSearch {
        /// The region's quad (its hull's, scaled) is first grown by this on every side (0: used as it is).
        var outlineOffsetPx: Double
        /// The first edge search's reach inside and outside each side …
        var inwardPx: Double
        var outwardPx: Double
        /// … and the second's, when a side finds no edge in the first.
        var wideInwardPx: Double
        var wideOutwardPx: Double
        /// A refined corner further than this from the grown quad counts as moved (more than two: rejected unless
        /// clearly supported).
        var maximumCornerShiftPx: Double
    }

    /// Places one candidate region's outline and appends it to `candidates` when it passes the checks.
    /// - Parameters:
    ///   - extractor: the extractor `region` came from (its hull points are in its grid's units).
    ///   - f: frame pixels per grid unit (the coarse factor, or the segmenter's cell size).
    ///   - originPx: the frame pixel where the grid's (0, 0) lies (a close look's window; zero otherwise).
    ///   - enclosing: start from the smallest quad enclosing the region's hull instead of the largest inscribed one
    ///     (`coarseOutline`).
    ///   - enclosingEarlier: a region inside one outline already placed is still placed, and replaces that outline
    ///     when its own encloses it and is at least `enclosedAreaFraction` larger (a learned region is the whole
    ///     paper, amodal: an earlier pass may have placed the picture inside a white border the table hides).
    ///   - outsupportingFirst: a region inside an outline of the first pass (one of the first `firstPassCount`) that
    ///     edges support by less than 1 − `outsupportMargin` is still placed, and replaces it when its own outline is
    ///     supported by at least `outsupportMargin` more and is not the picture inside its white border
    ///     (`isPictureInsideBorder`). In `both` mode, for the second pass's regions: the classic passes take a side
    ///     on a stripe, a shadow or a line in the picture, the segmenter's region runs into a neighbour or a shadow.
    func considerRegion(
        _ region: RegionExtractor.Region, of extractor: RegionExtractor, sampler: PlaneSampler,
        scale f: Double, originPx: PixelPoint = .zero, search: RegionSearch, minimumSidePx: Double,
        enclosing: Bool = false, enclosingEarlier: Bool = false, outsupportingFirst: Bool = false
    ) {
        lastRegionWasDuplicate = false
        let hull = extractor.hullPoints[region.hullStart..<(region.hullStart + region.hullCount)]
        func q(_ quad: Quad) -> String { tracedCorners(quad) }
        func reject(_ why: @autoclosure () -> String) {  // builds the text only when tracing
            let x = Int(originPx.x), y = Int(originPx.y)
            trace?(
                "region x \(x + region.minX * Int(f))...\(x + region.maxX * Int(f)) y \(y + region.minY * Int(f))...\(y + region.maxY * Int(f)): \(why())"
            )
        }
        guard
            let scaled = coarseOutline(
                region, hull: hull, scale: f, originPx: originPx, offsetPx: search.outlineOffsetPx,
                enclosing: enclosing, reject: reject)
        else { return }
        // Cheap checks before the full-resolution work, with slack for the coarse fit's error.
        let centre = scaled.centroid
        // Found in an earlier pass.
        var inside: Int?
        for index in candidates.indices where candidates[index].quad.contains(centre) {
            lastRegionWasDuplicate = true
            guard enclosingEarlier || outsupportingFirst, inside == nil else { reject("dup of earlier pass"); return }
            inside = index
        }
        // Worth placing (a full edge search) only when the region's quad, grown to where the paper's edge should be,
        // is already that much larger (around a correctly placed outline it is about the same), or over an outline
        // of the first pass that can be outsupported.
        if let inside {
            let earlier = candidates[inside]
            let mayEnclose = enclosingEarlier && scaled.area >= (1 + enclosedAreaFraction) * earlier.quad.area
            let mayOutsupport =
                outsupportingFirst && inside < firstPassCount && earlier.confidence <= 1 - outsupportMargin
            guard mayEnclose || mayOutsupport else { reject("dup of earlier pass"); return }
        }
        let coarseFit = shape(of: scaled)
        guard coarseFit.angleDeviationDegrees <= parameters.quadratureTolerance + 15 else {
            reject("coarse angles"); return
        }
        let coarseSides = scaled.meanSideLengthsPx
        let coarseShort = min(coarseSides.width, coarseSides.height)
        guard coarseShort >= 0.8 * minimumSidePx, coarseFit.aspect >= parameters.minimumAspectRatio - 0.15
        else { reject("coarse size/aspect"); return }
        // Search the edges near the region's sides (`search`), wider when a side finds none there, then once more
        // tightly.
        guard
            let first = refiner.refine(scaled, in: sampler, inwardPx: search.inwardPx, outwardPx: search.outwardPx)
                ?? refiner.refine(
                    scaled, in: sampler, inwardPx: search.wideInwardPx,
                    outwardPx: search.wideOutwardPx),
            first.quad.isConvex,
            var second = refiner.refine(first.quad, in: sampler, inwardPx: 2, outwardPx: 2),
            second.quad.isConvex
        else {
            reject(
                "refine failed from \(q(scaled)) side \(refiner.failedSide) \(refiner.failedSidePoints)/\(refiner.failedSideSamples)"
            ); return
        }
        // A side with little support may be a cut across a lost corner: try moving it out to the real edge.
        let size = second.quad.area.squareRoot()
        second = repairingWeakSides(
            second, below: 0.85, inwardPx: 2, outwardPx: 0.6 * size, minimumSupportAfter: 0,
            in: sampler)
        // A side that under half of its samples support may lie on the table beside the print (the coarse region
        // took in a shadow or a strip of textured table, and the search near it found only that): look inwards for
        // the paper's edge, keeping the move only when every side then has its edge under at least half its samples.
        second = repairingWeakSides(
            second, below: 0.5, inwardPx: 0.1 * size, outwardPx: 2, minimumSupportAfter: 0.5,
            in: sampler)
        guard second.minSupport >= minimumSideSupport, second.meanSupport >= minimumMeanSupport else {
            reject("low support \(second.sideSupport) \(q(second.quad))"); return
        }
        // The refined quad must stay near the coarse one (a line that wandered off found some other edge).
        var moved = 0
        let shift = search.maximumCornerShiftPx
        for i in 0..<4 {
            let d = second.quad[i] - scaled[i]
            if (d * d).sum() > shift * shift { moved += 1 }
        }
        // A clearly supported outline may move further: the coarse region took in a shadow or a neighbour.
        if moved > 2 && !(second.minSupport >= strongSideSupport && second.meanSupport >= strongMeanSupport) {
            reject("moved from \(q(scaled)) to \(q(second.quad))"); return
        }
        var quad = second.quad.canonicallyOrdered()
        var support = second.meanSupport
        if let outer = whiteBorderOutline(around: second.quad, sampler: sampler) {
            quad = outer.quad.canonicallyOrdered()
            support = outer.meanSupport
        } else if let completed = borderCompleter.complete(second.quad, in: sampler), completed.isConvex {
            // Some sides ran along the picture inside a white border: move them out to the paper's edge (refined
            // where that edge is visible).
            if let tight = refiner.refine(completed, in: sampler, inwardPx: 1.5, outwardPx: 1.5), tight.quad.isConvex,
                tight.minSupport >= 0.5
            {
                quad = tight.quad.canonicallyOrdered()
            } else {
                quad = completed.canonicallyOrdered()
            }
            trace?("border completed \(q(second.quad)) -> \(q(quad))")
        }
        if let inside {
            let earlier = candidates[inside]
            let encloses =
                enclosingEarlier && quad.encloses(earlier.quad, tolerancePx: 2)
                && quad.area >= (1 + enclosedAreaFraction) * earlier.quad.area
            let outsupports =
                outsupportingFirst && inside < firstPassCount && support >= earlier.confidence + outsupportMargin
                && !isPictureInsideBorder(quad, of: earlier.quad, sampler: sampler)
            guard encloses || outsupports,
                let observation = checkedOutline(quad, support: support, minimumSidePx: minimumSidePx, reject: reject)
            else { reject("dup of earlier pass (placed at \(q(quad)), support \(support))"); return }
            candidates[inside] = observation
            reject(
                "kept over \(encloses ? "the outline inside it" : "a less supported outline") \(q(earlier.quad)),"
                    + " confidence \(observation.confidence)")
            return
        }
        acceptOutline(quad, support: support, minimumSidePx: minimumSidePx, reject: reject)
    }

    /// A region's quad (its hull's largest inscribed quad, `f` frame pixels per grid unit; clockwise on screen, as
    /// the hull) grown by `offsetPx` on every side, when the region is quad-shaped and solid (its hull hugs the quad
    /// and its pixels fill the hull) and the quad convex; nil (and `reject` told why) otherwise. With `enclosing`,
    /// the smallest quad enclosing the hull on its sides (`EnclosingQuadFitter`), which may exceed the hull by half
    /// its area (a hidden corner).
    func coarseOutline(
        _ region: RegionExtractor.Region, hull: ArraySlice<PixelPoint>, scale f: Double,
        originPx: PixelPoint = .zero, offsetPx: Double, enclosing: Bool = false,
        reject: (@autoclosure () -> String) -> Void
    ) -> Quad? {
        guard let coarseQuad = enclosing ? enclosingFitter.fit(hull) : fitter.fit(hull) else {
            reject(enclosing ? "no enclosing quad" : "no quad"); return nil
        }
        let quadArea = coarseQuad.area
        guard quadArea > 0 else { reject("zero area"); return nil }
        var hullArea = 0.0
        for k in 0..<region.hullCount {
            let p = hull[hull.startIndex + k], q = hull[hull.startIndex + (k + 1) % region.hullCount]
            hullArea += p.x * q.y - q.x * p.y
        }
        hullArea = abs(hullArea) / 2
        let quadShaped = enclosing ? quadArea <= hullArea * 1.5 : hullArea <= quadArea * 1.3
        guard quadShaped, Double(region.pixelCount) >= 0.75 * hullArea else {
            reject(enclosing ? "enclosing quad: not solid/quad-shaped" : "not solid/quad-shaped"); return nil
        }
        var scaled = coarseQuad
        for i in 0..<4 { scaled[i] = coarseQuad[i] * f + originPx }
        guard scaled.isConvex else { reject("coarse not convex"); return nil }
        guard offsetPx != 0 else { return scaled }
        guard let grown = scaled.offsettingSides(byPx: offsetPx), grown.isConvex else {
            reject("coarse not convex"); return nil
        }
        return grown
    }

    /// Appends `quad` (canonical order) to `candidates` when it passes `checkedOutline`.
    func acceptOutline(
        _ quad: Quad, support: Double, minimumSidePx: Double,
        reject: (@autoclosure () -> String) -> Void
    ) {
        guard let observation = checkedOutline(quad, support: support, minimumSidePx: minimumSidePx, reject: reject)
        else { return }
        candidates.append(observation)
        reject("kept, confidence \(observation.confidence)")
    }

    /// `quad` (canonical order) as an observation when it passes the parameters' checks (angles, size, aspect,
    /// confidence) and lies in the frame; `support` (0…1) is its confidence. nil (and `reject` told why) otherwise.
    func checkedOutline(
        _ quad: Quad, support: Double, minimumSidePx: Double,
        reject: (@autoclosure () -> String) -> Void
    ) -> Observation? {
        let fit = shape(of: quad)
        guard fit.angleDeviationDegrees <= parameters.quadratureTolerance else {
            reject("angles \(fit.angleDeviationDegrees) \(tracedCorners(quad))"); return nil
        }
        let sides = quad.meanSideLengthsPx
        let shortSide = min(sides.width, sides.height), longSide = max(sides.width, sides.height)
        guard longSide > 0, shortSide >= minimumSidePx else { reject("small"); return nil }
        let aspect = fit.aspect
        guard aspect >= parameters.minimumAspectRatio - 1e-9, aspect <= parameters.maximumAspectRatio + 1e-9 else {
            reject("aspect \(aspect) \(tracedCorners(quad))"); return nil
        }
        for i in 0..<4 {
            let p = quad[i]
            if p.x < -2 || p.y < -2 || p.x > Double(geometry.widthPx) + 2 || p.y > Double(geometry.heightPx) + 2 {
                reject("off frame"); return nil
            }
        }
        let confidence = min(1, max(0, support))
        guard confidence >= parameters.minimumConfidence else { reject("confidence"); return nil }
        return Observation(quad: quad, confidence: confidence, aspectRatio: aspect)
    }

    /// `result` with each side that under `weakSupport` of its samples support moved to where
    /// `EdgeRefiner.repairSide` finds the edge (searching from `inwardPx` inside the side to `outwardPx` outside it)
    /// and refined tightly. Sides 0…3 in turn, each on the outline as repaired so far; a move is kept when the mean
    /// support rises and every side then has at least `minimumSupportAfter`.
    private func repairingWeakSides(
        _ result: EdgeRefiner.Result, below weakSupport: Double, inwardPx: Double,
        outwardPx: Double, minimumSupportAfter: Double,
        in sampler: PlaneSampler
    ) -> EdgeRefiner.Result {
        var result = result
        for side in 0..<4 {
            let support = result.support(of: side)
            guard support < weakSupport,
                let repaired = refiner.repairSide(
                    result.quad, side: side, currentSupport: support, in: sampler,
                    maximumOffsetPx: outwardPx, inwardPx: inwardPx),
                repaired.isConvex,
                let tight = refiner.refine(repaired, in: sampler, inwardPx: 2, outwardPx: 2), tight.quad.isConvex,
                tight.meanSupport > result.meanSupport, tight.minSupport >= minimumSupportAfter
            else { continue }
            trace?(
                "side \(side) (support \(support)) repaired: \(tracedCorners(result.quad))"
                    + " -> \(tracedCorners(tight.quad))")
            result = tight
        }
        return result
    }
}

extension PhotoDetector {
    /// `quad`'s corner-angle deviation and aspect as the print it images (`Quad.rectangleFit`: a tilted camera's
    /// perspective taken out), for the shape checks against `parameters`.
    func shape(of quad: Quad) -> (angleDeviationDegrees: Double, aspect: Double) {
        quad.rectangleFit(frameWidthPx: geometry.widthPx, frameHeightPx: geometry.heightPx)
    }
}

/// A quad's corners as rounded pixels, for the trace: "(x,y) (x,y) (x,y) (x,y)".
private func tracedCorners(_ quad: Quad) -> String {
    (0..<4).map { "(\(Int(quad[$0].x.rounded())),\(Int(quad[$0].y.rounded())))" }.joined(separator: " ")
}
