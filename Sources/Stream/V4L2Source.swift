import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// What happened on the device before the frame `readFrame` just returned: what the pipeline traces as drops.
public struct V4L2FrameInfo: Sendable, Hashable {
    /// Driver sequence numbers that never arrived between the previous returned frame and this one (the driver
    /// dropped them): trace one `driver_gap` drop per missing number. Frames colorcam itself skipped for
    /// decimation are not counted.
    public var skippedSequenceCount: Int = 0
    /// Buffers dequeued since the previous returned frame that could not be used (driver `V4L2_BUF_FLAG_ERROR`,
    /// short buffer, undecodable MJPEG): trace one `decode_error` drop each.
    public var decodeErrorCount: Int = 0
    /// Whether frames are being decimated (device faster than the requested rate).
    public var isDecimating: Bool = false
}

/// Where `captureTimestampNs` comes from.
public enum V4L2TimestampSource: Sendable, Equatable {
    /// The driver's `CLOCK_MONOTONIC` buffer timestamp, shifted onto the pipeline clock.
    case driver
    /// The pipeline clock read right after `VIDIOC_DQBUF` (driver timestamps not monotonic, or the pipeline clock
    /// is not `SystemClock`).
    case dequeue
}

/// A live V4L2 camera as a `FrameSource`: negotiates format/size/rate, streams with mmap buffers, and converts
/// each frame into colorcam's planar `FrameBuffer`.
///
/// Per frame `readFrame` polls, dequeues, converts and requeues the buffer at once (so the driver never waits on
/// the pipeline); frames beyond the requested rate are decimated by sequence number (e.g. every second one of a
/// 60 fps device when 30 is asked), evenly in time even across driver gaps.
///
/// Frame fields set by `readFrame`:
/// - `sequence`: the driver's sequence number (unwrapped to keep increasing past 2³²);
/// - `captureTimestampNs`: capture time on the pipeline clock (see `timestampSource`);
/// - `sourceTimestampNs`: the same value (what `record` writes as `Xts_us`).
/// `lastFrameInfo` then says how many driver frames were lost or unusable before it.
///
/// Configuration notes (size/format/rate differences, decimation, timestamp fallback) go to `warn` once each,
/// and are kept in `notes` for the trace's config event.
///
/// Threading: one thread at a time (the capture thread); `readFrame` blocks in `poll` and allocates nothing.
public final class V4L2Source: FrameSource {
    public let device: V4L2Device
    public let configuration: V4L2Configuration
    public let geometry: FrameGeometry
    public let nominalFrameIntervalNs: Int64
    public let frameRate: (numerator: Int, denominator: Int)
    public var name: String { device.path }
    public var canRewind: Bool { false }
    public private(set) var lastFrameInfo = V4L2FrameInfo()
    public private(set) var timestampSource: V4L2TimestampSource
    /// Every note said on stderr so far, in order.
    public private(set) var notes: [String] = []
    /// The device rate decimation is based on (G_PARM, or measured if the device turned out faster); nil if unknown.
    public private(set) var deviceFramesPerSecond: Double?

    private let clock: MonotonicClock
    private let requestedFramesPerSecond: Double
    private let bufferCount: Int
    private let stallTimeoutMs: Int32
    private let warn: (String) -> Void
    private let decoder: MJPEGDecoder?
    /// Pipeline clock minus raw CLOCK_MONOTONIC, when the pipeline clock is a SystemClock.
    private let monotonicOffsetNs: Int64?

    private var isDecimating: Bool
    private var lastSequence: UInt32?
    private var unwrappedSequence = 0
    private var firstSequenceUnwrapped = 0
    private var lastKeptSlot = -1
    private var pendingGap = 0
    private var pendingErrors = 0
    private var warnedFallback = false
    private var rateProbe: (firstSequence: Int, firstNs: Int64, checked: Bool)?

    /// Opens and configures `path` (closed → opened → configured); streaming starts with `start()` or the first
    /// `readFrame`.
    ///
    /// - Parameters:
    ///   - clock: the pipeline clock. A `SystemClock` gets driver timestamps mapped onto it; any other clock is
    ///     read at DQBUF.
    ///   - bufferCount: mmap buffers (2…8; 3 by default: one filling, one converting, one spare).
    ///   - stallTimeoutMs: a device that delivers nothing this long is reported unavailable.
    ///   - warn: where one-line notes go (stderr by default).
    /// - Throws: `StreamError` `.unavailable` (exit 69) naming the device and the failing request.
    public init(
        path: String, request: V4L2CaptureRequest, clock: MonotonicClock, bufferCount: Int = 3,
        stallTimeoutMs: Int32 = 3000, syscalls: V4L2Syscalls = .live,
        warn: @escaping (String) -> Void = V4L2Source.writeToStderr
    ) throws {
        precondition(request.framesPerSecond > 0, "requested rate must be positive")
        device = try V4L2Device(path: path, syscalls: syscalls)
        configuration = try device.configure(request)
        let chroma = configuration.pixelFormat.planarChroma!
        geometry = FrameGeometry(widthPx: configuration.widthPx, heightPx: configuration.heightPx, chroma: chroma)
        decoder = configuration.pixelFormat.isCompressed ? try MJPEGDecoder(geometry: geometry) : nil
        self.clock = clock
        self.bufferCount = bufferCount
        self.stallTimeoutMs = stallTimeoutMs
        self.warn = warn
        requestedFramesPerSecond = request.framesPerSecond
        deviceFramesPerSecond = configuration.deviceInterval?.framesPerSecond
        isDecimating = configuration.isDecimating
        // Deliver the requested rate, or the device's if it is slower.
        let deliveredFps = min(request.framesPerSecond, deviceFramesPerSecond ?? request.framesPerSecond)
        let fraction = V4L2Device.fraction(forFramesPerSecond: deliveredFps)
        frameRate = (fraction.denominator, fraction.numerator)
        nominalFrameIntervalNs = fraction.intervalNs
        if clock is SystemClock {
            monotonicOffsetNs = V4L2Source.measureOffset(clock)
            timestampSource = .driver
        } else {
            monotonicOffsetNs = nil
            timestampSource = .dequeue
        }
        for note in configuration.notes { say(note) }
    }

    /// Starts streaming (configured → streaming). Idempotent.
    public func start() throws {
        if device.state == .streaming { return }
        try device.startStreaming(bufferCount: bufferCount)
    }

    /// Stops streaming and closes the device. Idempotent.
    public func close() { device.close() }

    public func rewind() throws {
        throw StreamError(.usage, file: device.path, "a camera cannot rewind (--loop needs a file)")
    }

    /// Reads the next kept frame into `buffer` (see the type's doc for the fields set).
    /// - Returns: true (a live device has no end; it fails instead).
    /// - Throws: `StreamError` `.unavailable` when the device fails, vanishes or stalls.
    public func readFrame(into buffer: FrameBuffer) throws -> Bool {
        precondition(buffer.geometry == geometry, "frame geometry differs from the source's")
        if device.state != .streaming { try start() }
        while true {
            let filled = try device.dequeue(timeoutMs: stallTimeoutMs)
            let dequeuedNs = clock.nowNs()
            let sequence = advanceSequence(filled.sequence)
            let captureNs = captureTime(filled, dequeuedNs: dequeuedNs)
            probeRate(sequence: sequence, captureNs: captureNs)
            if !keep(sequence) {
                try device.requeue(filled)
                continue
            }
            let ok: Bool
            if filled.hasError {
                ok = false
            } else if let decoder {
                ok = decoder.decode(filled.bytes, into: buffer)
            } else {
                ok = V4L2Converter.convert(
                    configuration.pixelFormat, source: filled.bytes,
                    bytesPerLine: configuration.bytesPerLine, into: buffer)
            }
            try device.requeue(filled)
            if !ok {
                pendingErrors += 1
                continue
            }
            buffer.sequence = sequence
            buffer.captureTimestampNs = captureNs
            buffer.sourceTimestampNs = captureNs
            lastFrameInfo = V4L2FrameInfo(
                skippedSequenceCount: pendingGap, decodeErrorCount: pendingErrors,
                isDecimating: isDecimating)
            pendingGap = 0
            pendingErrors = 0
            return true
        }
    }

    /// Unwraps the 32-bit driver sequence and adds any skipped numbers to the pending gap.
    private func advanceSequence(_ raw: UInt32) -> Int {
        if let last = lastSequence {
            let delta = raw &- last
            if delta == 0 || delta > UInt32.max / 2 {
                // Repeated or backwards (driver restarted its count): no gap, keep increasing.
                unwrappedSequence += 1
            } else {
                unwrappedSequence += Int(delta)
                pendingGap += Int(delta) - 1
            }
        } else {
            unwrappedSequence = Int(raw)
            firstSequenceUnwrapped = unwrappedSequence
        }
        lastSequence = raw
        return unwrappedSequence
    }

    private func captureTime(_ filled: V4L2FilledBuffer, dequeuedNs: Int64) -> Int64 {
        if let offset = monotonicOffsetNs, let driverNs = filled.monotonicTimestampNs {
            return driverNs + offset
        }
        if !warnedFallback {
            warnedFallback = true
            timestampSource = .dequeue
            if monotonicOffsetNs != nil {
                say("driver timestamps are not CLOCK_MONOTONIC: using the clock at VIDIOC_DQBUF instead")
            }
        }
        return dequeuedNs
    }

    /// Decimation by sequence number: frame n (counted from the first) is kept when ⌊n·requested/device⌋ moves on.
    private func keep(_ sequence: Int) -> Bool {
        guard isDecimating, let deviceFps = deviceFramesPerSecond, deviceFps > 0 else { return true }
        let n = sequence - firstSequenceUnwrapped
        let slot = Int((Double(n) * requestedFramesPerSecond / deviceFps + 1e-9).rounded(.down))
        if slot > lastKeptSlot {
            lastKeptSlot = slot
            return true
        }
        return false
    }

    /// After ~1 s of frames, checks the device's real rate; a device faster than it claimed (the "60 fps bug")
    /// turns decimation on and says so.
    private func probeRate(sequence: Int, captureNs: Int64) {
        guard let probe = rateProbe else {
            rateProbe = (sequence, captureNs, false)
            return
        }
        if probe.checked { return }
        let frames = sequence - probe.firstSequence
        let elapsedNs = captureNs - probe.firstNs
        guard frames >= 30, elapsedNs > 0 else { return }
        rateProbe = (probe.firstSequence, probe.firstNs, true)
        let measuredFps = Double(frames) * 1e9 / Double(elapsedNs)
        if !isDecimating && measuredFps > requestedFramesPerSecond * 1.2 {
            let reported = deviceFramesPerSecond.map { String(Int($0.rounded())) } ?? "no rate"
            deviceFramesPerSecond = measuredFps
            isDecimating = true
            // Start decimating with this frame (kept), in step with its slot.
            lastKeptSlot =
                Int(
                    (Double(sequence - firstSequenceUnwrapped) * requestedFramesPerSecond / measuredFps
                        + 1e-9).rounded(.down)) - 1
            say(
                "device delivers \(Int(measuredFps.rounded())) fps although it reported \(reported): decimating to \(V4L2Fraction.format(requestedFramesPerSecond)) fps"
            )
        }
    }

    private func say(_ note: String) {
        notes.append(note)
        warn("\(device.path): \(note)")
    }

    /// Pipeline clock minus raw CLOCK_MONOTONIC, from the tightest of a few bracketed readings.
    private static func measureOffset(_ clock: MonotonicClock) -> Int64 {
        var best: (spanNs: Int64, offsetNs: Int64) = (.max, 0)
        for _ in 0..<5 {
            let before = SystemClock.rawNs()
            let pipelineNs = clock.nowNs()
            let after = SystemClock.rawNs()
            if after - before < best.spanNs { best = (after - before, pipelineNs - (before + (after - before) / 2)) }
        }
        return best.offsetNs
    }

    /// Writes `colorcam: LINE` to stderr.
    public static func writeToStderr(_ line: String) {
        let text = "colorcam: " + line + "\n"
        text.withCString { _ = write(2, $0, strlen($0)) }
    }
}

extension V4L2Source {
    public var isLive: Bool { true }
    public var gapBeforeLastFrame: Int { lastFrameInfo.skippedSequenceCount }
    public var decodeErrorsBeforeLastFrame: Int { lastFrameInfo.decodeErrorCount }
}
