/// What the detector takes for white paper: a band of luma samples — a print's white border — that is bright and
/// even. One definition for both places that look for a border: the band between a picture and the outline around
/// it (`PhotoDetector.bandIsPaper`) and the outer band of a side whose paper edge faded (`BorderCompleter`).
enum PaperBand {
    /// Least mean luma (0–255) of paper.
    static let minimumMeanLuma = 140.0
    /// Most standard deviation of luma across the band (texture, shading, the picture's edge) for paper.
    static let maximumStdDevLuma = 25.0

    /// Whether a band whose samples have this mean and standard deviation (luma) is paper.
    @inline(__always)
    static func isPaper(meanLuma: Double, stdDevLuma: Double) -> Bool {
        meanLuma >= minimumMeanLuma && stdDevLuma <= maximumStdDevLuma
    }
}
