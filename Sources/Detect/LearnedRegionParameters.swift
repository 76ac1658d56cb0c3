/// How `PhotoDetector` turns a segmenter's maps into candidate regions and where it searches for their edges.
///
/// Units: probabilities 0…1, distances in grid cells (`SegmentationGrid.cellPx` frame pixels each). The thresholds
/// are the model contract's 0.5. The offset and the opening were chosen with maps painted from the truth the way the
/// trainer labels (an oracle segmenter) on 120 rendered tuning-set scenes (render.py scenes --set tuning --seed 31,
/// 223 prints), learned mode, prints placed within 3 px / 1 px: offset 1.0 cell with a radius-1 opening 201 / 185,
/// 1.5 with it 197 / 180, 1.5 without 206 / 187, 2.0 without 204 / 190 (the classic passes: 188 / 178). Measured
/// once on 120 benchmark scenes (seed 21, 211 prints) with the chosen values: 201 / 190 (classic 192 / 177).
public struct LearnedRegionParameters: Sendable, Hashable {
    /// A cell is foreground when its interior probability is at least this …
    public var interiorThreshold: Float = 0.5
    /// … and its edge probability is below this (an edge line separates prints whose interiors touch).
    public var edgeThreshold: Float = 0.5
    /// The foreground is opened with a (2r+1)² square of cells (removes one-cell spurs and bridges, but also cuts a
    /// rotated print's corners, which moves the fitted quad's corners inwards); 0 = none.
    public var openingRadiusCells = 0
    /// The region's hull runs through the centres of its outer cells, which lie inside the paper's edge (the edge
    /// cells are not foreground): its quad's sides are moved out by this much before the edge search. With the
    /// trainer's labels (`tools/scenes/dr_render.py` `targets`: a 1.5-cell line centred on the edge, edge target
    /// 1.5 × its coverage, so cells a third covered are edge) the outer foreground cells' centres lie 0.9–1.9 cells
    /// inside the edge; the hull touches the outermost of them, and the largest quad on the hull lies inside it
    /// again (its corners are hull vertices, its sides chords).
    public var outlineOffsetCells = 1.5
    /// The first full-resolution edge search reaches this far inside and outside each side …
    public var searchInwardCells = 1.5
    public var searchOutwardCells = 1.5
    /// … and, when a side finds no edge there, the second this far (twice as wide, as the classic path does).
    public var wideSearchInwardCells = 3.0
    public var wideSearchOutwardCells = 3.0
    /// The refined outline may move more than this from the region's quad at up to two corners (more only when
    /// clearly supported), as the classic path's 6 coarse px (3 cells of 2 coarse px).
    public var maximumCornerShiftCells = 3.0
    /// Whether outlines are also placed on the interior map (`MapOutline`, `PhotoDetector+MapOutline.swift`): a
    /// region the edge search cannot place from its coarse quad is placed from the map's outline, and a candidate
    /// the map places elsewhere moves to the map's outline. On by default since 2026-12-06 (detect-default v6): on
    /// the five unseen-table tuning sets (`detect_heldout.py --split train --count 300 --texture-instances
    /// 9000:10000`, seeds 90–92 to choose, 93–94 to confirm) recall / precision went 89.39 / 94.28 → 89.92 / 94.64 %
    /// and 89.47 / 93.13 → 90.03 / 93.51 %, no condition bucket lower; a full-search frame costs the same within the
    /// host's noise. (It was off from b86b7ea, when two real-time remote-inference tests failed with it on.)
    public var usesMapOutlines = true
    /// A candidate whose map outline lies further than this from it (mean corner distance, cells) is placed again
    /// from the map's outline (the map's own sides lie a median 0.3 cells from the paper's edge) …
    public var mapDisagreementCells = 0.4
    /// … and moves there when the edges found along the map's outline support it at least this fraction as well as
    /// the candidate's own (on the tuning scenes 0.8 moved 11 prints right and 2 wrong, 1.0 moved 7 right and none
    /// wrong; on the tracking benchmark 0.8 took five still prints' outlines 3–7 px off the paper, 1.0 none).
    public var mapSupportFraction = 1.0

    /// Whether a learned region that no other step placed is placed on the maps alone
    /// (`PhotoDetector.considerOutlineOnMapsAlone`: its quad's sides moved to the edge map's ridge, kept where the
    /// segmenter sees paper all over it and table around it). Such a print's edges are too faint, blurred or glared
    /// for the full-resolution search, or its hull's quad lies too far off to search from. On the training-split
    /// tuning sets of unseen tables (seeds 90 / 91, 300 scenes each) recall at Jaccard ≥ 0.9 went 88.6 → 89.2 % and
    /// 90.1 → 90.3 %, precision 94.3 → 94.4 % and 94.7 % unchanged, no bucket lower.
    public var placesOnMapsAlone = true
    /// How far either side of the region's quad's sides the ridge is searched, cells: a blurred or glared corner
    /// skews the hull's quad by up to ~5 cells (tuning seed 90: 3 cells placed 2 prints, 6 placed 4; seed 91: 4, 6
    /// and 8 cells the same).
    public var mapsAloneReachCells = 6.0
    /// The confidence such an outline is given: the lowest mean edge support that an outline the edge search places
    /// may have (`PhotoDetector.minimumMeanSupport`), so that one of those on the same print outranks it.
    public var mapsAloneConfidence = 0.5

    /// Whether a region that could not be placed from its hull's largest inscribed quad is tried once more from the
    /// smallest quad enclosing its hull (`EnclosingQuadFitter`: a print with a corner under another print).
    public var usesEnclosingQuads = true

    /// Whether a region that could not be placed is split where it narrows (`RegionSplitter`) and its parts placed.
    public var splitsJoinedRegions = true
    /// A split part's outline is kept only with at least this confidence (edge support): a part is a guess at
    /// where one print ends, and an outline the edges barely support lies across a print and the table.
    public var splitPartMinimumConfidence = 0.6

    /// Whether a region inside an outline an earlier pass placed is still placed, replacing that outline when its
    /// own encloses it and is larger by `PhotoDetector.enclosedAreaFraction` (the classic passes place the picture
    /// inside a white border that a light table hides; the segmenter's interior is the whole paper).
    public var replacesEnclosedOutlines = true

    /// Whether a small region is looked at again closer (`PhotoDetector+CloseLook.swift`), when the segmenter takes
    /// close looks: its window's maps, at cells half the size, placed the same way; the better supported outline
    /// of the two looks is kept.
    public var usesCloseLook = true
    /// A region is small enough for a close look when its box grown by this on every side fits in the window
    /// (cells of the frame's grid) …
    public var closeLookMarginCells = 4.0
    /// … and it is looked at again only when no outline was placed on it, or the one placed is supported by less
    /// than this (`Observation.confidence`).
    public var closeLookBelowConfidence = 1.0

    /// Whether a candidate the classic passes placed is dropped when it holds two or more of the segmenter's
    /// print-sized regions (`PhotoDetector.droppingCandidatesAcrossRegions`: an outline across several prints).
    public var dropsCandidatesAcrossRegions = true

    /// In `both` mode, whether the learned regions are placed before the classic passes run (a classic region inside
    /// a learned outline then replaces it only when clearly better supported) or after them (the other way round).
    public var learnedFirst = false

    public init() {}
}
