/// One photo found in one frame.
public struct Observation: Sendable, Hashable {
    /// Corners in frame pixels, clockwise on screen from the one nearest the frame's top-left (see `PixelPoint`).
    public var quad: Quad
    /// 0...1: the fraction of the outline where the frame shows a clear edge on the fitted sides.
    public var confidence: Double
    /// The photo's estimated true aspect ratio, short side / long side, 0...1.
    public var aspectRatio: Double

    public init(quad: Quad, confidence: Double, aspectRatio: Double) {
        self.quad = quad
        self.confidence = confidence
        self.aspectRatio = aspectRatio
    }
}
