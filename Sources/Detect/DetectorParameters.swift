/// What `PhotoDetector` looks for. Names and defaults follow Apple Vision's `VNDetectRectanglesRequest` where the
/// meaning is the same.
///
/// All fractions are of the frame's shorter side; angles in degrees; aspect ratios are short side / long side of the
/// photo's estimated true (rectified) shape, so 1.0 is a square.
public struct DetectorParameters: Sendable, Hashable {
    /// Smallest accepted aspect ratio (short/long), 0...1. Vision's default: 0.5.
    public var minimumAspectRatio: Double = 0.5
    /// Largest accepted aspect ratio (short/long), 0...1. Vision's default: 1.0.
    public var maximumAspectRatio: Double = 1.0
    /// How far each corner angle may be from 90° in the image, degrees (0...45). Vision's default: 30.
    public var quadratureTolerance: Double = 30
    /// Smallest photo, as a fraction of the frame's shorter side, measured on the photo's shorter side.
    /// Vision's default is 0.2; colorcam's 0.08 finds five or six prints lying side by side on a table, seen
    /// from a tilted camera (2.5 % of the generator's training-split prints have a short side under 0.1 of the
    /// frame's; on its tuning scenes 0.08 instead of 0.1 found 79.8 % instead of 78.2 % at precision 90.6 / 90.4 %).
    public var minimumSize: Double = 0.08
    /// Observations below this confidence (0...1) are dropped. Vision's default is 0; colorcam's detector already
    /// rejects weak candidates internally, so 0 keeps everything it believes is a photo.
    public var minimumConfidence: Double = 0.0
    /// Most observations returned, best first; 0 means unlimited. Vision's default is 1; colorcam's is 8.
    public var maximumObservations: Int = 8
    /// Use the chroma planes too (a print differs from the table in colour as well as in brightness).
    public var useChroma: Bool = true

    public init() {}

    /// Checks ranges; returns a one-line description of the first bad field, or nil when all are valid.
    public func validationError() -> String? {
        if !(0...1).contains(minimumAspectRatio) {
            return "minimumAspectRatio must be in 0...1, got \(minimumAspectRatio)"
        }
        if !(0...1).contains(maximumAspectRatio) {
            return "maximumAspectRatio must be in 0...1, got \(maximumAspectRatio)"
        }
        if minimumAspectRatio > maximumAspectRatio {
            return "minimumAspectRatio \(minimumAspectRatio) exceeds maximumAspectRatio \(maximumAspectRatio)"
        }
        if !(0...45).contains(quadratureTolerance) {
            return "quadratureTolerance must be in 0...45, got \(quadratureTolerance)"
        }
        if !(0...1).contains(minimumSize) { return "minimumSize must be in 0...1, got \(minimumSize)" }
        if !(0...1).contains(minimumConfidence) {
            return "minimumConfidence must be in 0...1, got \(minimumConfidence)"
        }
        if maximumObservations < 0 {
            return "maximumObservations must be 0 (unlimited) or more, got \(maximumObservations)"
        }
        return nil
    }
}
