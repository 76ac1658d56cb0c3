/// A point in frame pixel coordinates (origin top-left, x right, y down).
public struct PreviewPoint: Sendable, Equatable {
    public var xPx: Float
    public var yPx: Float
    public init(xPx: Float, yPx: Float) { self.xPx = xPx; self.yPx = yPx }
}

/// The outline of one tracked photo: four corners in frame pixels, in order around the quadrilateral.
public struct PreviewQuad: Sendable, Equatable {
    public var corners: (PreviewPoint, PreviewPoint, PreviewPoint, PreviewPoint)
    /// The tracker's id for the photo (stable across frames while it is tracked).
    public var trackId: Int

    public init(_ a: PreviewPoint, _ b: PreviewPoint, _ c: PreviewPoint, _ d: PreviewPoint, trackId: Int) {
        corners = (a, b, c, d)
        self.trackId = trackId
    }

    public static func == (lhs: PreviewQuad, rhs: PreviewQuad) -> Bool {
        lhs.trackId == rhs.trackId && lhs.corners.0 == rhs.corners.0 && lhs.corners.1 == rhs.corners.1
            && lhs.corners.2 == rhs.corners.2 && lhs.corners.3 == rhs.corners.3
    }
}

/// The live figures the page and `/stats.json` show, as the pipeline last published them.
///
/// Plain scalars (plus the model name, which the pipeline changes only on reload) so publishing copies without
/// allocating. Drop counts by reason are not here: they come from the `PreviewMetrics` counters, the one source.
public struct PreviewStats: Sendable, Equatable {
    /// Output frames per second over the pipeline's last second.
    public var outputFps: Double
    /// Capture-to-output lag of the last frame, milliseconds.
    public var lagMs: Double
    /// Inference requests in flight (0 or 1 in colorcam).
    public var inFlight: Int
    /// Name of the loaded model (file name), empty when none.
    public var model: String

    public init(outputFps: Double = 0, lagMs: Double = 0, inFlight: Int = 0, model: String = "") {
        self.outputFps = outputFps
        self.lagMs = lagMs
        self.inFlight = inFlight
        self.model = model
    }
}

/// Whether the frame source is delivering, as the pipeline reports it; `/healthz` answers from it.
public enum PreviewHealth: Sendable, Equatable {
    case ok
    /// The camera is gone or erroring; the reason is shown on the page and in `/healthz`'s 503 body.
    case deviceLost(reason: String)
}
