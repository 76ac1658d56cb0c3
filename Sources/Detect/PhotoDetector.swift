import ColorcamCore

/// Finds rectangular photos (prints) in a frame.
///
/// Pipeline: box-downscale luma and chroma to a coarse grid (~240 px on the short side) → Canny-style edges at two
/// sensitivities → regions the table background cannot reach (`RegionExtractor`) → largest quad on each region's
/// hull (`QuadFitter`) → shape checks → full-resolution edge refinement and scoring (`EdgeRefiner`) → parameter
/// filters (aspect, right angles, size, confidence) → overlap suppression, best first.
///
/// Usage:
/// ```swift
/// let detector = PhotoDetector(geometry: frame.geometry)
/// let observations = detector.detect(frame)   // [Observation], best first
/// ```
///
/// With a learned segmenter (`PrintSegmenter`) the candidate regions can also come from its maps (`mode`): the
/// cells it calls inside a print and not on an edge, 8-connected, each region's hull then placed by the same
/// full-resolution steps; a region that cannot be placed as one print is split by the outlines its cells predict,
/// when the segmenter predicts them (`PhotoDetector+Learned.swift`, `CornerVoting`).
///
/// Ownership and threading: all working memory is allocated in `init` for one `FrameGeometry`; `detect` allocates
/// nothing once the result array and scratch lists have reached their working size (after the first few frames).
/// One thread at a time (the capture thread); the frame must not change during `detect`. Not `Sendable`. The
/// detector holds its segmenter and calls it on the same thread, once per `detect` in `learned` and `both` modes.
public final class PhotoDetector {
    public let geometry: FrameGeometry
    public var parameters: DetectorParameters
    /// Which candidate regions `detect` searches (see `DetectorMode`).
    public let mode: DetectorMode
    /// The learned front-end; nil in `classic` mode when none was given.
    public let segmenter: PrintSegmenter?
    /// A close look's regions and foreground (nil when the segmenter takes no close looks).
    let closeLook: CloseLookScratch?
    /// How the segmenter's maps become regions and where their edges are searched.
    public var learnedParameters = LearnedRegionParameters()
    /// The segmenter's grid-sized regions and foreground mask (nil without a segmenter).
    let learnedRegions: RegionExtractor?
    let foreground: UnsafeMutablePointer<UInt8>?
    /// Groups a learned region's cells by the print they vote for, when the segmenter predicts corners, and those
    /// groups — or a split region's parts (`regionSplitter`) — as regions (nil without a segmenter).
    let cornerVoting: CornerVoting?
    let voteGroups: RegionExtractor?
    /// Splits a learned region that holds several prints joined through a neck (nil without a segmenter).
    let regionSplitter: RegionSplitter?
    private let coarse: CoarseFrame
    private let edgeDetector: EdgeDetector
    private let regions: RegionExtractor
    private var fitter = QuadFitter()
    /// Fits a region's enclosing quad when its inscribed one could not be placed (a print partly hidden).
    private var enclosingFitter = EnclosingQuadFitter()
    /// The full-resolution edge search (also the map outlines', `PhotoDetector+MapOutline.swift`).
    var refiner = EdgeRefiner()
    /// Outlines read off the segmenter's interior map (`PhotoDetector+MapOutline.swift`).
    var mapOutline = MapOutline()
    private let borderCompleter = BorderCompleter()
    let uniformBorderFinder = UniformBorderFinder()
    var candidates: [Observation] = []
    private var results: [Observation] = []
    /// The classic passes, in order. Per pass: edge sensitivity (1 = default thresholds; lower finds weaker outlines),
    /// the radius edges are dilated by before the background flood (closes gaps in an outline, but also joins prints
    /// lying close together), the opening radius (removes fingers and edge bands thinner than 2r+1 coarse px), and
    /// whether it runs beside a segmenter (`both` mode; every pass runs in `classic`). The third pass bridges
    /// outlines with long weak stretches (a print whose picture matches the table along part of its edge). Beside a
    /// segmenter the second (weaker edges, no bridging) finds no print that the learned regions do not: on the
    /// training-split tuning sets of unseen tables (seeds 90 / 91, 300 scenes each) recall / precision at Jaccard
    /// ≥ 0.9 read 89.2 / 94.4 and 90.3 / 94.7 % with all three passes, 89.2 / 94.2 and 90.7 / 95.1 % without it, the
    /// 500-scene benchmark 99.5 / 99.7 % either way. The third stays: without it (the first pass alone: 89.2 / 94.2,
    /// 90.7 / 95.3 %) a still print on tracking benchmark seed 50, touching its neighbour, was outlined 4.7 px off
    /// for 50 frames (jitter 6.3 px; 0.04 with it). `tools/profile/results/detect-maps-alone.txt`.
    var passes: [(sensitivity: Float, dilationRadius: Int, openingRadius: Int, besideSegmenter: Bool)] = [
        (1.0, 1, 2, true), (0.6, 0, 2, false), (0.55, 2, 3, true)
    ]
    /// A candidate needs this fraction of edge samples on its weakest side and on average.
    var minimumSideSupport = 0.15
    var minimumMeanSupport = 0.5
    /// A refined outline this well supported (weakest side, mean) may move far from its coarse region.
    var strongSideSupport = 0.6
    var strongMeanSupport = 0.8
    /// `refine` fails when a corner moved further than this from the quad it started from, px.
    var maximumRefineCornerShiftPx = 8.0
    /// A learned outline replaces an earlier one inside it when larger by at least this fraction of its area
    /// (`considerRegion`'s `enclosingEarlier`).
    var enclosedAreaFraction = 0.1
    /// An outline of the second pass to run (classic or learned, `LearnedRegionParameters.learnedFirst`) replaces
    /// one of the first's on the same print when its edge support is higher by at least this (`considerRegion`'s
    /// `outsupportingFirst`).
    var outsupportMargin = 0.1
    /// How many of `candidates` the first pass placed (they come first); set by `detect`.
    private(set) var firstPassCount = 0
    /// Whether the last `refine` kept one unfound side from its input quad (a guess, not a measurement).
    public private(set) var lastRefineWasProvisional = false
    /// Whether the last `considerRegion` found its region inside an outline already placed (nothing more to try;
    /// also when it replaced that outline with the larger one around it, `enclosingEarlier`).
    private(set) var lastRegionWasDuplicate = false
    /// Diagnostics: when set, called with one line per candidate region saying where it was rejected or kept.
    package var trace: ((String) -> Void)?

    /// - Parameters:
    ///   - segmenter: a learned front-end made for `geometry`'s grid; the detector keeps it and calls it from `detect`.
    ///   - mode: default `both` with a segmenter, `classic` without.
    /// - Precondition: `parameters.validationError() == nil`; a mode other than `classic` has a segmenter, and the
    ///   segmenter's grid is `SegmentationGrid(geometry: geometry)`.
    public init(
        geometry: FrameGeometry, parameters: DetectorParameters = DetectorParameters(),
        segmenter: PrintSegmenter? = nil, mode: DetectorMode? = nil
    ) {
        precondition(parameters.validationError() == nil, parameters.validationError() ?? "")
        let mode = mode ?? (segmenter == nil ? .classic : .both)
        precondition(!mode.usesSegmenter || segmenter != nil, "detector mode \(mode) needs a segmenter")
        self.geometry = geometry
        self.parameters = parameters
        self.mode = mode
        self.segmenter = segmenter
        if let segmenter, mode.usesSegmenter {
            let grid = SegmentationGrid(geometry: geometry)
            precondition(segmenter.grid == grid, "segmenter made for \(segmenter.grid), frames need \(grid)")
            learnedRegions = RegionExtractor(widthPx: grid.widthCells, heightPx: grid.heightCells)
            foreground = .allocate(capacity: max(1, grid.cellCount))
            foreground!.initialize(repeating: 0, count: max(1, grid.cellCount))
            cornerVoting = CornerVoting(widthCells: grid.widthCells, heightCells: grid.heightCells, cellPx: grid.cellPx)
            voteGroups = RegionExtractor(widthPx: grid.widthCells, heightPx: grid.heightCells)
            regionSplitter = RegionSplitter(widthCells: grid.widthCells, heightCells: grid.heightCells)
            closeLook = segmenter.closeLookGrid.map(CloseLookScratch.init)
        } else {
            closeLook = nil
            learnedRegions = nil
            foreground = nil
            cornerVoting = nil
            voteGroups = nil
            regionSplitter = nil
        }
        coarse = CoarseFrame(geometry: geometry)
        edgeDetector = EdgeDetector(widthPx: coarse.widthPx, heightPx: coarse.heightPx)
        regions = RegionExtractor(widthPx: coarse.widthPx, heightPx: coarse.heightPx)
        candidates.reserveCapacity(64)
        results.reserveCapacity(64)
    }

    deinit { foreground?.deallocate() }

    /// Detects photos in `frame` (whose geometry must equal `geometry`).
    /// - Returns: observations sorted by confidence, best first, at most `parameters.maximumObservations` (0 = all).
    ///   The returned array shares storage with the detector's: copy it before the next `detect` if you keep it.
    public func detect(_ frame: FrameBuffer) -> [Observation] {
        precondition(frame.geometry == geometry, "PhotoDetector made for \(geometry), given \(frame.geometry)")
        candidates.removeAll(keepingCapacity: true)
        results.removeAll(keepingCapacity: true)
        let shortSide = Double(min(geometry.widthPx, geometry.heightPx))
        let minimumSidePx = max(8.0, parameters.minimumSize * shortSide)
        guard coarse.widthPx >= 16, coarse.heightPx >= 16, minimumSidePx < shortSide else { return results }
        let sampler = PlaneSampler(frame)
        // In `both`, one pass runs first (`LearnedRegionParameters.learnedFirst`); a region of the second whose
        // centre lies in an outline already placed is that print, and replaces its outline only when its own is
        // clearly better supported (`outsupportMargin`). Classic candidates the segmenter does not see as a print, or
        // that span several of its prints, are dropped before the learned regions are placed (or right after the
        // classic passes when those run second).
        var maps: SegmentationMaps?
        if mode.usesSegmenter, let segmenter {
            let frameMaps = segmenter.segment(frame)
            extractLearnedRegions(frameMaps, minimumSidePx: minimumSidePx)
            maps = frameMaps
        }
        let learnedFirst = mode == .learned || (mode == .both && learnedParameters.learnedFirst)
        firstPassCount = 0
        if learnedFirst, let maps {
            considerLearnedRegions(maps, frame: frame, sampler: sampler, minimumSidePx: minimumSidePx)
            firstPassCount = candidates.count
        }
        if mode != .learned {
            let start = candidates.count
            considerClassicRegions(frame, sampler: sampler, minimumSidePx: minimumSidePx)
            if mode == .both, let maps {
                droppingCandidatesTheSegmenterDoesNotSee(maps, in: start..<candidates.count)
                if learnedParameters.dropsCandidatesAcrossRegions {
                    droppingCandidatesAcrossRegions(in: start..<candidates.count, minimumSidePx: minimumSidePx)
                }
            }
        }
        if !learnedFirst, let maps {
            firstPassCount = candidates.count
            considerLearnedRegions(maps, frame: frame, sampler: sampler, minimumSidePx: minimumSidePx)
        }
        if let maps {
            if learnedParameters.usesMapOutlines {
                movingCandidatesTheMapPlacesElsewhere(maps, sampler: sampler, minimumSidePx: minimumSidePx)
            }
            wideningCandidatesToTheirBorders(maps, sampler: sampler)
        }
        // Best first. Overlapping candidates are one photo found twice (or a picture inside its own white border, or
        // a shape inside a picture): keep the larger unless it is clearly less certain.
        insertionSortByConfidence()
        for candidate in candidates {
            let centre = candidate.quad.centroid
            var duplicateOf = -1
            for (k, kept) in results.enumerated()
            where kept.quad.contains(centre) || candidate.quad.contains(kept.quad.centroid) {
                duplicateOf = k
                break
            }
            if duplicateOf >= 0 {
                let kept = results[duplicateOf]
                // The larger outline wins when it encloses the other (a picture inside its own white border; prints
                // do not lie inside prints) and is itself well supported.
                if candidate.quad.area > 1.1 * kept.quad.area && candidate.quad.contains(kept.quad.centroid)
                    && (candidate.confidence >= 0.6 || candidate.confidence >= kept.confidence - 0.2)
                {
                    results[duplicateOf] = candidate
                }
                continue
            }
            results.append(candidate)
        }
        if parameters.maximumObservations > 0 && results.count > parameters.maximumObservations {
            results.removeLast(results.count - parameters.maximumObservations)
        }
        return results
    }

    /// The classic passes (`passes`; beside a segmenter, those marked so): coarse edges at each pass's sensitivity →
    /// regions the table cannot reach → candidates. The first pass computes the gradients, later ones relink them.
    private func considerClassicRegions(_ frame: FrameBuffer, sampler: PlaneSampler, minimumSidePx: Double) {
        coarse.load(from: frame)
        let f = Double(coarse.factor)
        let minimumCoarseSide = max(4, Int(minimumSidePx / f * 0.8))
        // The hull runs through the centres of the region's outer pixels, which include the 1-px dilation around
        // the edge: search from 4 coarse px inside to 2 outside (twice that when a side finds no edge: the region
        // took in a shadow or lost a corner, so the coarse sides lie several px off).
        let search = RegionSearch(
            outlineOffsetPx: 0, inwardPx: 4 * f, outwardPx: 2 * f, wideInwardPx: 8 * f,
            wideOutwardPx: 4 * f, maximumCornerShiftPx: 6 * f)
        for (index, pass) in passes.enumerated() where mode == .classic || pass.besideSegmenter {
            if index == 0 {
                edgeDetector.detect(coarse, useChroma: parameters.useChroma, sensitivity: pass.sensitivity)
            } else {
                edgeDetector.relink(sensitivity: pass.sensitivity)
            }
            regions.extract(
                edges: edgeDetector.edges, minimumSidePx: minimumCoarseSide,
                dilationRadius: pass.dilationRadius, openingRadius: pass.openingRadius)
            trace?("pass \(index): \(regions.regions.count) regions")
            for region in regions.regions {
                considerRegion(
                    region, of: regions, sampler: sampler, scale: f, search: search,
                    minimumSidePx: minimumSidePx, outsupportingFirst: mode == .both && learnedParameters.learnedFirst)
            }
        }
    }

    /// Sorts `candidates` by confidence, best first, in place without allocating (there are few).
    private func insertionSortByConfidence() {
        candidates.withUnsafeMutableBufferPointer { insertionSort($0) { $0.confidence > $1.confidence } }
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

    /// Re-finds one known photo near `quad` (e.g. a track's predicted corners) with the full-resolution edge search
    /// only: no coarse search, about a tenth of `detect`'s cost. Same checks as `detect` (support, shape,
    /// parameters).
    /// - Returns: the observation, or nil when the outline is not clearly there. After a non-nil result,
    ///   `lastRefineWasProvisional` says whether one side was not found and kept its line from `quad`.
    public func refine(_ quad: Quad, in frame: FrameBuffer) -> Observation? {
        precondition(frame.geometry == geometry, "PhotoDetector made for \(geometry), given \(frame.geometry)")
        lastRefineWasProvisional = false
        let sampler = PlaneSampler(frame)
        var start = quad
        if start.signedArea < 0 { start = Quad(quad[3], quad[2], quad[1], quad[0]) }
        // Up to two adjacent sides may fade out (a white border's edge on a light table): they keep their predicted
        // lines, moved with the opposite sides, while the others are clearly there. Each edge search keeps to the
        // peak nearest the predicted side, so the outline does not creep from one edge to another.
        guard start.isConvex,
            let first = refiner.refine(
                start, in: sampler, inwardPx: 3, outwardPx: 3, keepingUnfoundSides: true,
                nearestPeak: true),
            first.quad.isConvex,
            let second = refiner.refine(
                first.quad, in: sampler, inwardPx: 2, outwardPx: 2,
                keepingUnfoundSides: true, nearestPeak: true),
            second.quad.isConvex
        else { return nil }
        var weakSides = 0, weakMask = 0
        for side in 0..<4 where second.support(of: side) < minimumSideSupport { weakSides += 1; weakMask |= 1 << side }
        guard weakSides <= 1 || (weakSides == 2 && weakMask != 0b0101 && weakMask != 0b1010) else { return nil }
        // The searches reach 3 + 2 px from each side: a corner that moved much further came from nearly parallel
        // lines meeting far away (a side slid onto another edge), not from the photo.
        for i in 0..<4 {
            let d = second.quad[i] - start[i]
            if (d * d).sum() > maximumRefineCornerShiftPx * maximumRefineCornerShiftPx { return nil }
        }
        lastRefineWasProvisional = weakSides > 0
        let result = second.quad.canonicallyOrdered()
        let shortSide = Double(min(geometry.widthPx, geometry.heightPx))
        let sides = result.meanSideLengthsPx
        let shortPx = min(sides.width, sides.height), longPx = max(sides.width, sides.height)
        guard longPx > 0, shortPx >= parameters.minimumSize * shortSide,
            case let fit = shape(of: result), fit.angleDeviationDegrees <= parameters.quadratureTolerance,
            fit.aspect >= parameters.minimumAspectRatio - 1e-9,
            fit.aspect <= parameters.maximumAspectRatio + 1e-9,
            second.meanSupport >= parameters.minimumConfidence
        else { return nil }
        // The kept and out-of-view sides in the canonical numbering (a rotation of `second.quad`'s).
        var outOfViewSides = 0, keptSides = 0
        if second.keptSides != 0, let start = (0..<4).first(where: { second.quad[$0] == result[0] }) {
            outOfViewSides = Quad.sideMask(second.outOfViewSides, shiftedBy: start)
            keptSides = Quad.sideMask(second.keptSides, shiftedBy: start)
        }
        return Observation(
            quad: result, confidence: min(1, second.meanSupport), aspectRatio: fit.aspect,
            outOfViewSides: outOfViewSides, unmeasuredSides: keptSides)
    }

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
