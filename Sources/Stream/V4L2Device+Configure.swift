import CV4L2
import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// What colorcam asks of a capture device.
public struct V4L2CaptureRequest: Sendable, Hashable {
    public var widthPx: Int
    public var heightPx: Int
    /// A specific format, or nil to pick the best one the device offers (`V4L2PixelFormat.preferenceOrder`).
    public var pixelFormat: V4L2PixelFormat?
    /// The rate the pipeline wants, frames per second.
    public var framesPerSecond: Double
    /// Run the device at this rate instead of the slowest offered rate ≥ `framesPerSecond` (tests use it to hold a
    /// device at 60 fps; a camera that only offers 60 behaves the same way). Nil = automatic.
    public var deviceFramesPerSecond: Double?

    public init(
        widthPx: Int, heightPx: Int, pixelFormat: V4L2PixelFormat? = nil, framesPerSecond: Double,
        deviceFramesPerSecond: Double? = nil
    ) {
        self.widthPx = widthPx
        self.heightPx = heightPx
        self.pixelFormat = pixelFormat
        self.framesPerSecond = framesPerSecond
        self.deviceFramesPerSecond = deviceFramesPerSecond
    }
}

/// What the driver actually set (read back with S_FMT's answer and `VIDIOC_G_PARM`).
public struct V4L2Configuration: Sendable, Hashable {
    public let pixelFormat: V4L2PixelFormat
    public let widthPx: Int
    public let heightPx: Int
    /// Bytes per row of the (first) plane, from the driver (may exceed the packed width).
    public let bytesPerLine: Int
    /// Bytes of one whole uncompressed image (maximum for compressed formats).
    public let sizeImageBytes: Int
    /// The device's frame interval after S_PARM, read back with G_PARM; nil if the driver does not report one.
    public let deviceInterval: V4L2Fraction?
    /// The rate colorcam delivers, frames per second (≤ the device rate; lower means decimation).
    public let requestedFramesPerSecond: Double
    /// Things that differ from the request (size, format, rate), one line each, for stderr and the trace.
    public let notes: [String]

    /// Whether the device runs faster than requested (by more than 1 %), so frames are decimated.
    public var isDecimating: Bool {
        guard let deviceInterval else { return false }
        return deviceInterval.framesPerSecond > requestedFramesPerSecond * 1.01
    }
}

extension V4L2Device {
    /// Negotiates format, size and frame rate: `opened → configured`.
    ///
    /// Format: the requested one, else the first of `V4L2PixelFormat.preferenceOrder` the device offers natively
    /// at that size. Rate: `deviceFramesPerSecond` if given, else the slowest offered rate that is at least the
    /// requested one (the fastest if none is), set with S_PARM and verified with G_PARM.
    ///
    /// - Throws: `StreamError` `.unavailable` when no convertible format is offered or a request fails.
    @discardableResult
    public func configure(_ request: V4L2CaptureRequest) throws -> V4L2Configuration {
        precondition(state == .opened || state == .configured, "configure() needs an opened, idle device")
        var notes: [String] = []
        let offered = try formats()
        let format = try chooseFormat(request, offered: offered)

        var fmt = V4L2Device.formatRequest(
            V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue, widthPx: request.widthPx,
            heightPx: request.heightPx, pixelFormat: format)
        try ioctl(.setFormat, &fmt)
        let pix = fmt.fmt.pix
        let actualFormat = V4L2PixelFormat(rawValue: pix.pixelformat)
        guard actualFormat.planarChroma != nil else {
            throw StreamError(
                .unavailable, file: path,
                "VIDIOC_S_FMT: asked for \(format), driver set \(actualFormat), which colorcam cannot convert")
        }
        if actualFormat != format { notes.append("driver chose format \(actualFormat) instead of \(format)") }
        let widthPx = Int(pix.width), heightPx = Int(pix.height)
        guard widthPx > 0, heightPx > 0, widthPx <= FrameGeometry.maxDimensionPx,
            heightPx <= FrameGeometry.maxDimensionPx
        else {
            throw StreamError(
                .unavailable, file: path, "VIDIOC_S_FMT: driver set an unusable size \(widthPx)x\(heightPx)")
        }
        if widthPx != request.widthPx || heightPx != request.heightPx {
            notes.append("driver set \(widthPx)x\(heightPx) instead of \(request.widthPx)x\(request.heightPx)")
        }
        let field = pix.field
        guard field != V4L2_FIELD_ALTERNATE.rawValue, field != V4L2_FIELD_TOP.rawValue,
            field != V4L2_FIELD_BOTTOM.rawValue
        else {
            throw StreamError(.unavailable, file: path, "VIDIOC_S_FMT: driver delivers single fields (field \(field))")
        }
        let minimumLine = V4L2Converter.minimumBytesPerLine(actualFormat, widthPx: widthPx)
        let bytesPerLine = actualFormat.isCompressed ? 0 : max(Int(pix.bytesperline), minimumLine)
        let sizeImage = Int(pix.sizeimage)
        if !actualFormat.isCompressed {
            let needed = V4L2Converter.minimumImageBytes(
                actualFormat, bytesPerLine: bytesPerLine, widthPx: widthPx,
                heightPx: heightPx)
            guard sizeImage >= needed else {
                throw StreamError(
                    .unavailable, file: path,
                    "VIDIOC_S_FMT: sizeimage \(sizeImage) < \(needed) bytes needed for \(actualFormat) \(widthPx)x\(heightPx)"
                )
            }
        }

        let deviceInterval = try setFrameRate(
            request, format: actualFormat, widthPx: widthPx, heightPx: heightPx,
            notes: &notes)
        let configuration = V4L2Configuration(
            pixelFormat: actualFormat, widthPx: widthPx, heightPx: heightPx, bytesPerLine: bytesPerLine,
            sizeImageBytes: sizeImage, deviceInterval: deviceInterval,
            requestedFramesPerSecond: request.framesPerSecond, notes: notes)
        self.configuration = configuration
        setState(.configured)
        return configuration
    }

    private func chooseFormat(_ request: V4L2CaptureRequest, offered: [V4L2FormatDescription]) throws -> V4L2PixelFormat
    {
        if let wanted = request.pixelFormat {
            guard offered.contains(where: { $0.pixelFormat == wanted }) else {
                let list = offered.map(\.pixelFormat.fourCC).joined(separator: " ")
                throw StreamError(.unavailable, file: path, "format \(wanted) not offered (offers: \(list))")
            }
            guard wanted.planarChroma != nil else {
                throw StreamError(
                    .unavailable, file: path, "format \(wanted) is offered but colorcam cannot convert it")
            }
            return wanted
        }
        func fits(_ f: V4L2FormatDescription) throws -> Bool {
            guard let sizes = try frameSizes(for: f.pixelFormat) else { return true }
            return sizes.contains(widthPx: request.widthPx, heightPx: request.heightPx)
        }
        for emulatedPass in [false, true] {
            for candidate in V4L2PixelFormat.preferenceOrder {
                if let f = offered.first(where: { $0.pixelFormat == candidate && $0.isEmulated == emulatedPass }),
                    try fits(f)
                {
                    return candidate
                }
            }
        }
        if let any = offered.first(where: { $0.pixelFormat.planarChroma != nil }) { return any.pixelFormat }
        let list = offered.map(\.pixelFormat.fourCC).joined(separator: " ")
        throw StreamError(.unavailable, file: path, "no format colorcam can convert (offers: \(list))")
    }

    /// Picks, sets (S_PARM) and reads back (G_PARM) the device frame interval.
    private func setFrameRate(
        _ request: V4L2CaptureRequest, format: V4L2PixelFormat, widthPx: Int, heightPx: Int,
        notes: inout [String]
    ) throws -> V4L2Fraction? {
        let target: V4L2Fraction
        if let deviceFps = request.deviceFramesPerSecond {
            target = V4L2Device.fraction(forFramesPerSecond: deviceFps)
        } else {
            let intervals = try frameIntervals(for: format, widthPx: widthPx, heightPx: heightPx)
            target = V4L2Device.chooseInterval(intervals, framesPerSecond: request.framesPerSecond)
        }
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        let getErr = try ioctl(.getParm, &parm, allowing: .endOfList)
        if getErr != 0 {
            notes.append("driver does not report its frame rate (VIDIOC_G_PARM: \(V4L2Errno(getErr)))")
            return nil
        }
        if parm.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 {
            parm.parm.capture.timeperframe.numerator = UInt32(target.numerator)
            parm.parm.capture.timeperframe.denominator = UInt32(target.denominator)
            try ioctl(.setParm, &parm)
            parm = v4l2_streamparm()
            parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            try ioctl(.getParm, &parm)
        } else {
            notes.append("driver cannot set its frame rate (no V4L2_CAP_TIMEPERFRAME)")
        }
        let tpf = parm.parm.capture.timeperframe
        let actual = V4L2Fraction(Int(tpf.numerator), Int(tpf.denominator))
        guard actual.framesPerSecond > 0 else {
            notes.append("driver reports an invalid frame interval \(tpf.numerator)/\(tpf.denominator)")
            return nil
        }
        if actual.framesPerSecond > request.framesPerSecond * 1.01 {
            notes.append(
                "device runs at \(actual) fps, faster than the requested \(V4L2Fraction.format(request.framesPerSecond)) fps: decimating to \(V4L2Fraction.format(request.framesPerSecond)) fps"
            )
        } else if actual.framesPerSecond < request.framesPerSecond * 0.99 {
            notes.append(
                "device runs at \(actual) fps, slower than the requested \(V4L2Fraction.format(request.framesPerSecond)) fps"
            )
        }
        return actual
    }

    /// The slowest offered interval whose rate is at least `framesPerSecond` (0.5 % tolerance), else the fastest;
    /// for a range, the requested rate clamped into it; when unknown, the requested rate.
    static func chooseInterval(_ intervals: V4L2FrameIntervals, framesPerSecond: Double) -> V4L2Fraction {
        switch intervals {
        case .discrete(let list):
            let fastEnough = list.filter { $0.framesPerSecond >= framesPerSecond * 0.995 }
            if let slowest = fastEnough.min(by: { $0.framesPerSecond < $1.framesPerSecond }) { return slowest }
            return list.max(by: { $0.framesPerSecond < $1.framesPerSecond })!
        case .range(let min, let max):
            let clamped = Swift.min(Swift.max(framesPerSecond, max.framesPerSecond), min.framesPerSecond)
            return fraction(forFramesPerSecond: clamped)
        case .unknown:
            return fraction(forFramesPerSecond: framesPerSecond)
        }
    }

    /// 30 → 1/30, 12.5 → 2/25, 29.97 → 100/2997.
    static func fraction(forFramesPerSecond fps: Double) -> V4L2Fraction {
        if fps == fps.rounded() { return V4L2Fraction(1, Int(fps)) }
        var numerator = 1000, denominator = Int((fps * 1000).rounded())
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let g = gcd(numerator, denominator)
        numerator /= g
        denominator /= g
        return V4L2Fraction(numerator, denominator)
    }
}

extension V4L2Fraction {
    /// A rate as it is written in messages: `30`, `12.5`.
    static func format(_ fps: Double) -> String { fps == fps.rounded() ? String(Int(fps)) : String(fps) }
}
