/// How chroma is stored relative to luma in a planar 8-bit YCbCr frame.
///
/// The names follow YUV4MPEG2's `C` header tag; `siting` matters only for 4:2:0 and is carried through
/// unchanged so a file written back has the tag it was read with.
public enum ChromaFormat: Sendable, Hashable, CustomStringConvertible {
    /// 4:2:0, chroma halved in both directions. The siting names the Y4M tag.
    case yuv420(ChromaSiting)
    /// 4:2:2, chroma halved horizontally.
    case yuv422
    /// 4:4:4, full-resolution chroma.
    case yuv444
    /// Luma only (Y4M `Cmono`).
    case mono

    /// The YUV4MPEG2 `C` tag value, e.g. `420jpeg`.
    public var y4mTag: String {
        switch self {
        case .yuv420(let siting): return siting.y4mTag
        case .yuv422: return "422"
        case .yuv444: return "444"
        case .mono: return "mono"
        }
    }

    public var description: String { y4mTag }

    /// Parses a Y4M `C` tag value; nil for anything colorcam does not read (e.g. `420p10`, `444alpha`).
    public init?(y4mTag: String) {
        switch y4mTag {
        case "420jpeg": self = .yuv420(.jpeg)
        case "420paldv": self = .yuv420(.paldv)
        case "420mpeg2": self = .yuv420(.mpeg2)
        case "420": self = .yuv420(.unspecified)
        case "422": self = .yuv422
        case "444": self = .yuv444
        case "mono": self = .mono
        default: return nil
        }
    }

    /// Horizontal and vertical chroma subsampling shifts (0 = full resolution, 1 = halved).
    public var subsamplingShift: (x: Int, y: Int) {
        switch self {
        case .yuv420: return (1, 1)
        case .yuv422: return (1, 0)
        case .yuv444, .mono: return (0, 0)
        }
    }

    public var hasChroma: Bool { self != .mono }
}

/// Where 4:2:0 chroma samples sit, as the Y4M tags name it.
public enum ChromaSiting: Sendable, Hashable {
    /// `420jpeg`: centred between luma samples (JPEG / MPEG-1).
    case jpeg
    /// `420paldv`: co-sited top-left (PAL DV).
    case paldv
    /// `420mpeg2`: co-sited horizontally, centred vertically (MPEG-2).
    case mpeg2
    /// `420`: the tag without siting.
    case unspecified

    var y4mTag: String {
        switch self {
        case .jpeg: return "420jpeg"
        case .paldv: return "420paldv"
        case .mpeg2: return "420mpeg2"
        case .unspecified: return "420"
        }
    }
}

/// Size and layout of one planar 8-bit frame: Y plane, then Cb, then Cr, each tightly packed (stride = width).
///
/// All sizes are in pixels or bytes as their names say. Chroma planes round up for odd sizes
/// (a 321×241 4:2:0 frame has 161×121 chroma planes), as YUV4MPEG2 and ffmpeg do.
public struct FrameGeometry: Sendable, Hashable, CustomStringConvertible {
    public let widthPx: Int
    public let heightPx: Int
    public let chroma: ChromaFormat

    /// Largest width or height colorcam accepts (guards against headers claiming absurd frames).
    public static let maxDimensionPx = 16_384
    /// Largest frame colorcam accepts, in bytes (a 16k × 16k 4:4:4 frame is 768 MiB; this is 512 MiB).
    public static let maxFrameBytes = 512 << 20

    public init(widthPx: Int, heightPx: Int, chroma: ChromaFormat) {
        precondition(widthPx > 0 && heightPx > 0, "frame dimensions must be positive")
        self.widthPx = widthPx
        self.heightPx = heightPx
        self.chroma = chroma
    }

    public var lumaBytes: Int { widthPx * heightPx }
    public var chromaWidthPx: Int {
        chroma.hasChroma ? (widthPx + (1 << chroma.subsamplingShift.x) - 1) >> chroma.subsamplingShift.x : 0
    }
    public var chromaHeightPx: Int {
        chroma.hasChroma ? (heightPx + (1 << chroma.subsamplingShift.y) - 1) >> chroma.subsamplingShift.y : 0
    }
    /// Bytes in one chroma plane (0 for mono).
    public var chromaPlaneBytes: Int { chromaWidthPx * chromaHeightPx }
    /// Bytes of one whole frame: Y + Cb + Cr.
    public var frameBytes: Int { lumaBytes + 2 * chromaPlaneBytes }

    public var description: String { "\(widthPx)x\(heightPx) \(chroma)" }
}
