import ColorcamCore

/// The coarse grid a learned print segmenter works on, for one frame geometry.
///
/// Cell `(i, j)` covers frame pixels `[i·cellPx, (i+1)·cellPx) × [j·cellPx, (j+1)·cellPx)`; its centre is the frame
/// point `((i + 0.5)·cellPx, (j + 0.5)·cellPx)`. `cellPx = 2 × CoarseFrame.factor` (640×480 → 4 px, a 160×120 grid;
/// 1280×720 → 6 px, 213×120). Frame pixels right of `widthCells·cellPx` or below `heightCells·cellPx` belong to no
/// cell. The model's tensors are the grid padded on the right and bottom to `paddedWidthCells × paddedHeightCells`
/// (multiples of `multiple`), the padding replicating the last column and row.
public struct SegmentationGrid: Sendable, Hashable, CustomStringConvertible {
    /// Cell side, frame pixels (always even, so a 4:2:0 cell holds whole chroma samples).
    public let cellPx: Int
    public let widthCells: Int
    public let heightCells: Int
    /// The tensor's width and height: the grid's rounded up to a multiple of `multiple` (at least one multiple).
    public let paddedWidthCells: Int
    public let paddedHeightCells: Int
    /// The model's spatial size must be a multiple of this (its downsampling).
    public static let multiple = 8

    public init(geometry: FrameGeometry) {
        let factor = max(1, min(geometry.widthPx, geometry.heightPx) / 240)  // CoarseFrame's factor
        cellPx = 2 * factor
        widthCells = geometry.widthPx / cellPx
        heightCells = geometry.heightPx / cellPx
        let m = SegmentationGrid.multiple
        paddedWidthCells = max(m, (widthCells + m - 1) / m * m)
        paddedHeightCells = max(m, (heightCells + m - 1) / m * m)
    }

    /// A window's grid (a close look, `PrintSegmenter.closeLookGrid`): `widthCells × heightCells` cells of `cellPx`,
    /// both multiples of `multiple` (so nothing is padded).
    public init(cellPx: Int, widthCells: Int, heightCells: Int) {
        let m = SegmentationGrid.multiple
        precondition(cellPx > 0 && widthCells >= m && heightCells >= m, "a window grid needs cells")
        precondition(widthCells % m == 0 && heightCells % m == 0, "a window grid's size is a multiple of \(m)")
        self.cellPx = cellPx
        self.widthCells = widthCells
        self.heightCells = heightCells
        paddedWidthCells = widthCells
        paddedHeightCells = heightCells
    }

    public var cellCount: Int { widthCells * heightCells }
    public var description: String { "\(widthCells)x\(heightCells) cells of \(cellPx) px" }
}

/// A segmenter's output for one frame: per grid cell, the probability (0…1) that the cell lies inside a print
/// (paper including a white border, also where a hand covers it) and that a print's visible paper edge passes
/// through it; optionally, per cell, where the corners of the print it lies in are.
///
/// Layout: row-major planes, cell `(i, j)` at `interior[j * rowStride + i]` for `i < grid.widthCells`,
/// `j < grid.heightCells`; `rowStride >= grid.widthCells` (a padded tensor's rows are read in place). `corners`, when
/// present, holds eight such planes `planeStride` floats apart: x0, y0, x1, y1, x2, y2, x3, y3, each corner's offset
/// from the cell's centre in cells (clockwise on screen, any corner first; amodal: a corner under a hand or out of
/// view is where it should be), meaningful only in cells inside a print.
/// Ownership: the pointers belong to the segmenter and stay valid until its next `segment` call or its deinit.
public struct SegmentationMaps {
    public let interior: UnsafePointer<Float>
    public let edge: UnsafePointer<Float>
    /// Floats from one row to the next.
    public let rowStride: Int
    /// The eight corner-offset planes (nil: the segmenter predicts maps only).
    public let corners: UnsafePointer<Float>?
    /// Floats from one corner plane to the next.
    public let planeStride: Int

    public init(
        interior: UnsafePointer<Float>, edge: UnsafePointer<Float>, rowStride: Int,
        corners: UnsafePointer<Float>? = nil, planeStride: Int = 0
    ) {
        precondition(corners == nil || planeStride > 0, "corner planes need their stride")
        self.interior = interior
        self.edge = edge
        self.rowStride = rowStride
        self.corners = corners
        self.planeStride = planeStride
    }
}

/// A learned front-end that predicts where prints are on a frame's coarse grid (`SegmentationGrid`).
/// `PhotoDetector` turns its maps into candidate regions (interior and not edge), which the full-resolution edge
/// search then places.
///
/// Contract: made for one frame geometry (`grid == SegmentationGrid(geometry:)`). `segment` runs on the calling
/// thread (the capture thread), synchronously, one call at a time; it must not allocate (buffers are allocated
/// once, when the segmenter is made) and must not fail: a segmenter that cannot run is refused when it is made.
/// The frame is only read, and must not change during the call.
public protocol PrintSegmenter: AnyObject {
    /// The grid the maps cover.
    var grid: SegmentationGrid { get }
    /// Predicts the maps for `frame` (whose geometry the segmenter was made for). The returned pointers stay valid
    /// until the next call.
    func segment(_ frame: FrameBuffer) -> SegmentationMaps
    /// The grid of a close look (`segment(_:windowOriginXPx:windowOriginYPx:)`): a fixed window of cells half the
    /// size of `grid`'s, so that a small print is seen at twice the scale; nil when the segmenter takes none.
    var closeLookGrid: SegmentationGrid? { get }
    /// A close look: the maps of the window of `closeLookGrid` whose top-left cell starts at frame pixel
    /// (`windowOriginXPx`, `windowOriginYPx`) — even, and the window wholly inside the frame. Cell `(i, j)` of the
    /// maps covers frame pixels from `origin + (i, j) · closeLookGrid.cellPx`. The pointers stay valid until the
    /// next close look; a close look leaves the last `segment(_:)` maps valid, and `segment(_:)` the close look's.
    func segment(_ frame: FrameBuffer, windowOriginXPx: Int, windowOriginYPx: Int) -> SegmentationMaps
}

extension PrintSegmenter {
    /// No close looks unless a segmenter provides them.
    public var closeLookGrid: SegmentationGrid? { nil }
    public func segment(_ frame: FrameBuffer, windowOriginXPx: Int, windowOriginYPx: Int) -> SegmentationMaps {
        preconditionFailure("\(Self.self) takes no close looks (closeLookGrid is nil)")
    }
}

/// Which candidate regions `PhotoDetector.detect` searches.
public enum DetectorMode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Only the learned segmenter's regions.
    case learned
    /// Only the classic passes (edges → background flood → regions), as before the segmenter existed.
    case classic
    /// The segmenter's regions first, then the classic passes; a classic region whose quad's centre lies in an
    /// outline already kept is skipped.
    case both

    public var description: String { rawValue }
    /// Whether this mode runs the segmenter.
    public var usesSegmenter: Bool { self != .classic }
}
