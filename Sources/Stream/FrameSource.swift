import ColorcamCore

/// A stream of frames: a `.y4m` file or pipe, a folder of PNGs, a V4L2 device.
///
/// Lifecycle: created open (headers read, geometry known) → `readFrame` until it returns false → deallocated.
/// Threading: used from one thread at a time (the capture thread); not Sendable.
public protocol FrameSource: AnyObject {
    /// Size and chroma layout of every frame (a source never changes geometry mid-stream).
    var geometry: FrameGeometry { get }
    /// Nominal frame interval from the source's header (Y4M `F` tag) or configuration, in nanoseconds.
    var nominalFrameIntervalNs: Int64 { get }
    /// Nominal rate as a fraction (numerator, denominator) — written back into Y4M headers.
    var frameRate: (numerator: Int, denominator: Int) { get }
    /// What to call this source in messages: the path, `-`, or the device.
    var name: String { get }
    /// Whether `rewind()` works (files yes, stdin and devices no).
    var canRewind: Bool { get }

    /// Fills `buffer` (same geometry) with the next frame: pixels, `sequence` (0-based index in the source)
    /// and `sourceTimestampNs` (from the file, or nil). Does not touch `captureTimestampNs`.
    /// - Returns: false at a clean end of stream.
    /// - Throws: `StreamError` (`.badData` for a truncated or malformed frame, naming byte offset and frame).
    func readFrame(into buffer: FrameBuffer) throws -> Bool

    /// Goes back to the first frame (for `--loop`). Throws when `canRewind` is false.
    func rewind() throws

    /// True for live devices: they deliver frames at their own pace and stamp `sequence` (the driver's) and
    /// `captureTimestampNs` (on the pipeline clock) themselves; the pipeline neither paces nor renumbers them.
    var isLive: Bool { get }
    /// Frames the device lost just before the frame last read (sequence-number gaps): traced as `driver_gap`.
    var gapBeforeLastFrame: Int { get }
    /// Frames that could not be decoded just before the frame last read: traced as `decode_error`.
    var decodeErrorsBeforeLastFrame: Int { get }
}

extension FrameSource {
    public var isLive: Bool { false }
    public var gapBeforeLastFrame: Int { 0 }
    public var decodeErrorsBeforeLastFrame: Int { 0 }
}

/// Where frames go: a `.y4m` file or stdout.
///
/// Files are written under a temporary name and renamed into place by `finish()`, so an interrupted run never
/// leaves a file that looks complete. Threading: one thread at a time (the output thread).
public protocol FrameSink: AnyObject {
    /// Appends one frame (geometry must match what the sink was opened with).
    func write(_ frame: FrameBuffer) throws
    /// Flushes and publishes the output (rename into place). Idempotent.
    func finish() throws
    /// Removes a partial output (temporary file). Safe to call after a failure, idempotent.
    func abort()
}
