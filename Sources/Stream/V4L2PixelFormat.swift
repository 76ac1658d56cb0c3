import ColorcamCore

/// A V4L2 pixel format code (a FourCC such as `YUYV`), as the `pixelformat` fields of the V4L2 API carry it.
public struct V4L2PixelFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Builds the code from its four ASCII characters, e.g. `"YUYV"`; nil unless exactly four ASCII characters.
    public init?(fourCC: String) {
        let bytes = Array(fourCC.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// The four characters (trailing spaces kept, e.g. `"Y16 "`); non-printable bytes become `.`.
    public var fourCC: String {
        let bytes = (0..<4).map { UInt8((rawValue >> (8 * UInt32($0))) & 0xFF) }
        return String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x2E }, as: UTF8.self)
    }

    public var description: String { fourCC }

    private static func code(_ text: StaticString) -> V4L2PixelFormat {
        let p = text.utf8Start
        return V4L2PixelFormat(rawValue: UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24)
    }

    /// The corresponding C constant is `V4L2_PIX_FMT_YUYV` (Y0 Cb Y1 Cr).
    public static let yuyv = code("YUYV")
    /// The corresponding C constant is `V4L2_PIX_FMT_YVYU` (Y0 Cr Y1 Cb).
    public static let yvyu = code("YVYU")
    /// The corresponding C constant is `V4L2_PIX_FMT_UYVY` (Cb Y0 Cr Y1).
    public static let uyvy = code("UYVY")
    /// The corresponding C constant is `V4L2_PIX_FMT_VYUY` (Cr Y0 Cb Y1).
    public static let vyuy = code("VYUY")
    /// The corresponding C constant is `V4L2_PIX_FMT_YUV422P` (planar Y, Cb, Cr; 4:2:2).
    public static let yuv422p = code("422P")
    /// The corresponding C constant is `V4L2_PIX_FMT_YUV420` (`YU12`: planar Y, Cb, Cr; 4:2:0).
    public static let yuv420 = code("YU12")
    /// The corresponding C constant is `V4L2_PIX_FMT_YVU420` (`YV12`: planar Y, Cr, Cb; 4:2:0).
    public static let yvu420 = code("YV12")
    /// The corresponding C constant is `V4L2_PIX_FMT_NV12` (Y plane, interleaved CbCr plane; 4:2:0).
    public static let nv12 = code("NV12")
    /// The corresponding C constant is `V4L2_PIX_FMT_NV21` (Y plane, interleaved CrCb plane; 4:2:0).
    public static let nv21 = code("NV21")
    /// The corresponding C constant is `V4L2_PIX_FMT_NV16` (Y plane, interleaved CbCr plane; 4:2:2).
    public static let nv16 = code("NV16")
    /// The corresponding C constant is `V4L2_PIX_FMT_NV61` (Y plane, interleaved CrCb plane; 4:2:2).
    public static let nv61 = code("NV61")
    /// The corresponding C constant is `V4L2_PIX_FMT_NV24` (Y plane, interleaved CbCr plane; 4:4:4).
    public static let nv24 = code("NV24")
    /// The corresponding C constant is `V4L2_PIX_FMT_NV42` (Y plane, interleaved CrCb plane; 4:4:4).
    public static let nv42 = code("NV42")
    /// The corresponding C constant is `V4L2_PIX_FMT_GREY` (8-bit luma).
    public static let grey = code("GREY")
    /// The corresponding C constant is `V4L2_PIX_FMT_Y10` (10-bit luma in 16-bit little-endian words).
    public static let y10 = code("Y10 ")
    /// The corresponding C constant is `V4L2_PIX_FMT_Y12` (12-bit luma in 16-bit little-endian words).
    public static let y12 = code("Y12 ")
    /// The corresponding C constant is `V4L2_PIX_FMT_Y16` (16-bit little-endian luma).
    public static let y16 = code("Y16 ")
    /// The corresponding C constant is `V4L2_PIX_FMT_RGB24` (R G B in memory).
    public static let rgb24 = code("RGB3")
    /// The corresponding C constant is `V4L2_PIX_FMT_BGR24` (B G R in memory).
    public static let bgr24 = code("BGR3")
    /// The corresponding C constant is `V4L2_PIX_FMT_XBGR32` (B G R X in memory).
    public static let xbgr32 = code("XR24")
    /// The corresponding C constant is `V4L2_PIX_FMT_ABGR32` (B G R A in memory).
    public static let abgr32 = code("AR24")
    /// The corresponding C constant is `V4L2_PIX_FMT_BGRX32` (X B G R in memory).
    public static let bgrx32 = code("RX24")
    /// The corresponding C constant is `V4L2_PIX_FMT_BGRA32` (A B G R in memory).
    public static let bgra32 = code("RA24")
    /// The corresponding C constant is `V4L2_PIX_FMT_RGBX32` (R G B X in memory).
    public static let rgbx32 = code("XB24")
    /// The corresponding C constant is `V4L2_PIX_FMT_RGBA32` (R G B A in memory).
    public static let rgba32 = code("AB24")
    /// The corresponding C constant is `V4L2_PIX_FMT_XRGB32` (X R G B in memory).
    public static let xrgb32 = code("BX24")
    /// The corresponding C constant is `V4L2_PIX_FMT_ARGB32` (A R G B in memory).
    public static let argb32 = code("BA24")
    /// The corresponding C constant is `V4L2_PIX_FMT_MJPEG` (Motion-JPEG: one JPEG image per buffer).
    public static let mjpeg = code("MJPG")
    /// The corresponding C constant is `V4L2_PIX_FMT_JPEG`.
    public static let jpeg = code("JPEG")

    /// Formats colorcam picks by itself, best first: those that convert by copying bytes (no arithmetic)
    /// come first, then compressed, then the RGB ones that need a colour-space conversion.
    public static let preferenceOrder: [V4L2PixelFormat] = [
        .yuyv, .uyvy, .yvyu, .vyuy, .nv12, .yuv420, .nv21, .yvu420, .yuv422p, .nv16, .nv61, .nv24, .nv42,
        .mjpeg, .jpeg, .grey, .y16, .y12, .y10,
        .rgb24, .bgr24, .xbgr32, .abgr32, .bgrx32, .bgra32, .rgbx32, .rgba32, .xrgb32, .argb32
    ]

    /// The chroma layout colorcam's planar frame gets for this source format, or nil if colorcam cannot convert it.
    ///
    /// Every YCbCr format keeps its own subsampling, so conversion is a lossless byte shuffle (packed 4:2:2 becomes
    /// planar 4:2:2, NV12 becomes planar 4:2:0, …) and captured pixels can be compared byte for byte with the
    /// driver's. RGB becomes 4:4:4 (BT.601, limited range); MJPEG becomes 4:2:2, the usual UVC subsampling.
    public var planarChroma: ChromaFormat? {
        switch self {
        case .yuyv, .yvyu, .uyvy, .vyuy, .yuv422p, .nv16, .nv61, .mjpeg, .jpeg: return .yuv422
        case .yuv420, .yvu420, .nv12, .nv21: return .yuv420(.mpeg2)
        case .nv24, .nv42: return .yuv444
        case .grey, .y10, .y12, .y16: return .mono
        case .rgb24, .bgr24, .xbgr32, .abgr32, .bgrx32, .bgra32, .rgbx32, .rgba32, .xrgb32, .argb32: return .yuv444
        default: return nil
        }
    }

    /// Whether buffers hold compressed data of varying size (`bytesused` < buffer size).
    public var isCompressed: Bool { self == .mjpeg || self == .jpeg }
}
