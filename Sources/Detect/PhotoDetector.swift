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
    var fitter = QuadFitter()
    /// Fits a region's enclosing quad when its inscribed one could not be placed (a print partly hidden).
    var enclosingFitter = EnclosingQuadFitter()
    /// The full-resolution edge search (also the map outlines', `PhotoDetector+MapOutline.swift`).
    var refiner = EdgeRefiner()
    /// Outlines read off the segmenter's interior map (`PhotoDetector+MapOutline.swift`).
    var mapOutline = MapOutline()
    let borderCompleter = BorderCompleter()
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
    /// How many of `candidates` the first pass placed (they come first); set by `detect`, and kept right by
    /// `considerSplitRegion` while an outline of the first pass steps aside.
    var firstPassCount = 0
    /// Whether the last `refine` kept one unfound side from its input quad (a guess, not a measurement).
    public private(set) var lastRefineWasProvisional = false
    /// Whether the last `considerRegion` found its region inside an outline already placed (nothing more to try;
    /// also when it replaced that outline with the larger one around it, `enclosingEarlier`).
    var lastRegionWasDuplicate = false
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
}
