import CV4L2

#if canImport(Glibc)
    import Glibc
#endif

/// One entry of `VIDIOC_ENUM_FMT`.
public struct V4L2FormatDescription: Sendable, Hashable {
    public let pixelFormat: V4L2PixelFormat
    public let description: String
    public let isCompressed: Bool
    /// Set by libv4l2 for formats it converts in software from another native format.
    public let isEmulated: Bool
}

/// What `VIDIOC_ENUM_FRAMESIZES` reports for one format.
public enum V4L2FrameSizes: Sendable, Hashable {
    case discrete([(widthPx: Int, heightPx: Int)])
    case stepwise(
        minWidthPx: Int, maxWidthPx: Int, stepWidthPx: Int, minHeightPx: Int, maxHeightPx: Int, stepHeightPx: Int)

    public static func == (a: V4L2FrameSizes, b: V4L2FrameSizes) -> Bool { a.description == b.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    /// `640x360 640x480` or `16x16-1920x1080 step 2x2`.
    public var description: String {
        switch self {
        case .discrete(let sizes): return sizes.map { "\($0.widthPx)x\($0.heightPx)" }.joined(separator: " ")
        case let .stepwise(minW, maxW, stepW, minH, maxH, stepH):
            return "\(minW)x\(minH)-\(maxW)x\(maxH) step \(stepW)x\(stepH)"
        }
    }

    /// Whether `widthPx × heightPx` is one of the sizes.
    public func contains(widthPx: Int, heightPx: Int) -> Bool {
        switch self {
        case .discrete(let sizes): return sizes.contains { $0.widthPx == widthPx && $0.heightPx == heightPx }
        case let .stepwise(minW, maxW, stepW, minH, maxH, stepH):
            return (minW...maxW).contains(widthPx) && (minH...maxH).contains(heightPx)
                && (widthPx - minW) % max(stepW, 1) == 0 && (heightPx - minH) % max(stepH, 1) == 0
        }
    }
}

/// A frame interval as a fraction of seconds (`timeperframe`): 1/30 is 30 fps.
public struct V4L2Fraction: Sendable, Hashable, CustomStringConvertible {
    public let numerator: Int
    public let denominator: Int
    public init(_ numerator: Int, _ denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }
    /// Frames per second this interval gives (0 for an invalid 0/x or x/0 interval).
    public var framesPerSecond: Double {
        numerator > 0 && denominator > 0 ? Double(denominator) / Double(numerator) : 0
    }
    /// The interval in nanoseconds (0 when invalid).
    public var intervalNs: Int64 {
        numerator > 0 && denominator > 0 ? Int64(numerator) * 1_000_000_000 / Int64(denominator) : 0
    }
    /// `30`, `12.5`.
    public var description: String {
        let fps = framesPerSecond
        return fps == fps.rounded() ? String(Int(fps)) : String(fps)
    }
}

/// What `VIDIOC_ENUM_FRAMEINTERVALS` reports for one format and size.
public enum V4L2FrameIntervals: Sendable, Hashable {
    case discrete([V4L2Fraction])
    /// Stepwise or continuous (step 0): any interval in `min...max`.
    case range(min: V4L2Fraction, max: V4L2Fraction)
    /// The driver does not enumerate intervals.
    case unknown

    /// `1 2 5 30 fps` or `1-30 fps`.
    public var description: String {
        switch self {
        case .discrete(let list):
            return list.sorted { $0.framesPerSecond < $1.framesPerSecond }.map(\.description).joined(separator: " ")
                + " fps"
        case .range(let min, let max): return "\(max)-\(min) fps"
        case .unknown: return "? fps"
        }
    }
}

extension V4L2Device {
    /// The capture formats the device offers, in the driver's order (`VIDIOC_ENUM_FMT`).
    /// - Throws: `StreamError` `.unavailable` if the enumeration fails other than by ending.
    public func formats() throws -> [V4L2FormatDescription] {
        precondition(state != .closed, "formats() on a closed device")
        var result: [V4L2FormatDescription] = []
        for index in 0..<256 {
            var desc = v4l2_fmtdesc()
            desc.index = UInt32(index)
            desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            if try ioctl(.enumFormat, &desc, allowing: .endOfList) != 0 { break }
            result.append(
                V4L2FormatDescription(
                    pixelFormat: V4L2PixelFormat(rawValue: desc.pixelformat),
                    description: V4L2Device.string(desc.description),
                    isCompressed: desc.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                    isEmulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0))
        }
        return result
    }

    /// The frame sizes offered for `format` (`VIDIOC_ENUM_FRAMESIZES`); nil when the driver does not enumerate.
    public func frameSizes(for format: V4L2PixelFormat) throws -> V4L2FrameSizes? {
        var sizes: [(widthPx: Int, heightPx: Int)] = []
        for index in 0..<1024 {
            var size = v4l2_frmsizeenum()
            size.index = UInt32(index)
            size.pixel_format = format.rawValue
            if try ioctl(.enumFrameSizes, &size, allowing: .endOfList) != 0 { break }
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append((Int(size.discrete.width), Int(size.discrete.height)))
            } else {
                let s = size.stepwise
                return .stepwise(
                    minWidthPx: Int(s.min_width), maxWidthPx: Int(s.max_width),
                    stepWidthPx: size.type == V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue ? 1 : Int(s.step_width),
                    minHeightPx: Int(s.min_height), maxHeightPx: Int(s.max_height),
                    stepHeightPx: size.type == V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue ? 1 : Int(s.step_height))
            }
        }
        return sizes.isEmpty ? nil : .discrete(sizes)
    }

    /// The frame intervals offered for `format` at `widthPx × heightPx` (`VIDIOC_ENUM_FRAMEINTERVALS`).
    public func frameIntervals(for format: V4L2PixelFormat, widthPx: Int, heightPx: Int) throws -> V4L2FrameIntervals {
        var list: [V4L2Fraction] = []
        for index in 0..<256 {
            var ival = v4l2_frmivalenum()
            ival.index = UInt32(index)
            ival.pixel_format = format.rawValue
            ival.width = UInt32(widthPx)
            ival.height = UInt32(heightPx)
            if try ioctl(.enumFrameIntervals, &ival, allowing: .endOfList) != 0 { break }
            if ival.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                list.append(V4L2Fraction(Int(ival.discrete.numerator), Int(ival.discrete.denominator)))
            } else {
                let s = ival.stepwise
                return .range(
                    min: V4L2Fraction(Int(s.min.numerator), Int(s.min.denominator)),
                    max: V4L2Fraction(Int(s.max.numerator), Int(s.max.denominator)))
            }
        }
        return list.isEmpty ? .unknown : .discrete(list)
    }
}
