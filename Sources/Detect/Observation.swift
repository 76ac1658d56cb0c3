/// One photo found in one frame.
public struct Observation: Sendable, Hashable {
    /// Corners in frame pixels, clockwise on screen from the one nearest the frame's top-left (see `PixelPoint`).
    public var quad: Quad
    /// 0...1: the fraction of the outline where the frame shows a clear edge on the fitted sides.
    public var confidence: Double
    /// The photo's estimated true aspect ratio, short side / long side, 0...1.
    public var aspectRatio: Double
    /// Bit i: side i (corner i to corner i+1) lies out of view, so its line is not measured but where the track
    /// predicted it (a re-find of a photo partly outside the frame). 0 for a full search's observations.
    public var outOfViewSides: Int
    /// Bit i: side i was not measured but kept where the track predicted it — out of view, or without a clear edge
    /// (a re-find's "provisional" sides). Includes `outOfViewSides`.
    public var unmeasuredSides: Int

    public init(quad: Quad, confidence: Double, aspectRatio: Double, outOfViewSides: Int = 0, unmeasuredSides: Int = 0)
    {
        self.quad = quad
        self.confidence = confidence
        self.aspectRatio = aspectRatio
        self.outOfViewSides = outOfViewSides
        self.unmeasuredSides = unmeasuredSides | outOfViewSides
    }
}
