/// One photo found in one frame.
public struct Observation: Sendable, Hashable {
    /// Corners in frame pixels, clockwise on screen from the one nearest the frame's top-left (see `PixelPoint`).
    public var quad: Quad
    /// 0...1: the fraction of the outline where the frame shows a clear edge on the fitted sides.
    public var confidence: Double
    /// The photo's estimated true aspect ratio, short side / long side, 0...1.
    public var aspectRatio: Double
    /// A re-found outline with a side that was not seen and kept its predicted line (`PhotoDetector.refine`): its
    /// corners say nothing about how the outline deforms, so a tracker predicts it with the shared motion only.
    public var isProvisional = false

    public init(quad: Quad, confidence: Double, aspectRatio: Double) {
        self.quad = quad
        self.confidence = confidence
        self.aspectRatio = aspectRatio
    }
}
