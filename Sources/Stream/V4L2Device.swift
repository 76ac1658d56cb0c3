import CV4L2
import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// One V4L2 request: the code passed to `ioctl` and the name error messages use.
public struct V4L2Request: Sendable, Hashable, CustomStringConvertible {
    public let code: UInt
    public let name: String
    public var description: String { name }

    public static let queryCap = V4L2Request(code: CCV4L2_VIDIOC_QUERYCAP, name: "VIDIOC_QUERYCAP")
    public static let enumFormat = V4L2Request(code: CCV4L2_VIDIOC_ENUM_FMT, name: "VIDIOC_ENUM_FMT")
    public static let enumFrameSizes = V4L2Request(code: CCV4L2_VIDIOC_ENUM_FRAMESIZES, name: "VIDIOC_ENUM_FRAMESIZES")
    public static let enumFrameIntervals = V4L2Request(
        code: CCV4L2_VIDIOC_ENUM_FRAMEINTERVALS, name: "VIDIOC_ENUM_FRAMEINTERVALS")
    public static let getFormat = V4L2Request(code: CCV4L2_VIDIOC_G_FMT, name: "VIDIOC_G_FMT")
    public static let setFormat = V4L2Request(code: CCV4L2_VIDIOC_S_FMT, name: "VIDIOC_S_FMT")
    public static let getParm = V4L2Request(code: CCV4L2_VIDIOC_G_PARM, name: "VIDIOC_G_PARM")
    public static let setParm = V4L2Request(code: CCV4L2_VIDIOC_S_PARM, name: "VIDIOC_S_PARM")
    public static let requestBuffers = V4L2Request(code: CCV4L2_VIDIOC_REQBUFS, name: "VIDIOC_REQBUFS")
    public static let queryBuffer = V4L2Request(code: CCV4L2_VIDIOC_QUERYBUF, name: "VIDIOC_QUERYBUF")
    public static let queueBuffer = V4L2Request(code: CCV4L2_VIDIOC_QBUF, name: "VIDIOC_QBUF")
    public static let dequeueBuffer = V4L2Request(code: CCV4L2_VIDIOC_DQBUF, name: "VIDIOC_DQBUF")
    public static let streamOn = V4L2Request(code: CCV4L2_VIDIOC_STREAMON, name: "VIDIOC_STREAMON")
    public static let streamOff = V4L2Request(code: CCV4L2_VIDIOC_STREAMOFF, name: "VIDIOC_STREAMOFF")
}

/// What `VIDIOC_QUERYCAP` said about a device.
public struct V4L2Capabilities: Sendable, Hashable {
    public let driver: String
    public let card: String
    public let busInfo: String
    /// The node's capability bits (`device_caps` when the driver sets `V4L2_CAP_DEVICE_CAPS`, else `capabilities`).
    public let deviceCaps: UInt32

    /// `V4L2_CAP_VIDEO_CAPTURE`: single-planar video capture.
    public var canCapture: Bool { deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 }
    /// `V4L2_CAP_STREAMING`: the streaming I/O (mmap) API.
    public var canStream: Bool { deviceCaps & UInt32(V4L2_CAP_STREAMING) != 0 }
    /// `V4L2_CAP_VIDEO_CAPTURE_MPLANE`: multi-planar capture (colorcam does not use that API).
    public var isMultiplanarCapture: Bool { deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0 }
}

/// A V4L2 video-capture device opened through libv4l2.
///
/// Lifecycle: `closed → opened` (init: open + `VIDIOC_QUERYCAP`) `→ configured` (`configure`) `→ streaming`
/// (`startStreaming`) and back (`stopStreaming` → configured, `close` → closed; deinit closes). Calls made in the
/// wrong state are programming errors (precondition).
///
/// Every ioctl goes through one funnel (`ioctl(_:_:allowing:)`) that retries `EINTR` and throws a `StreamError`
/// naming the device, the request and the errno. Errors are `.unavailable` (exit 69): the device is missing,
/// busy, gone, or refuses what colorcam needs.
///
/// Threading: one thread at a time (the capture thread); not Sendable.
public final class V4L2Device {
    public enum State: Sendable, Equatable { case closed, opened, configured, streaming }

    /// The device node path, e.g. `/dev/video0`.
    public let path: String
    public private(set) var state: State = .closed
    public let capabilities: V4L2Capabilities
    let syscalls: V4L2Syscalls
    var fd: Int32
    /// Filled by `configure`.
    public internal(set) var configuration: V4L2Configuration?
    /// Mapped buffers while streaming (index = V4L2 buffer index).
    var mappedBuffers: [(address: UnsafeMutableRawPointer, length: Int)] = []
    /// Buffers dequeued since STREAMON (names the frame in error messages).
    var dequeuedCount = 0

    /// Opens `path` and checks it is a single-planar video-capture device with streaming I/O.
    ///
    /// - Throws: `StreamError` `.unavailable` when the node is missing, busy or not a capture device
    ///   (`.missingInput` is not used: a camera that is not there is an unavailable device, exit 69).
    public init(path: String, syscalls: V4L2Syscalls = .live) throws {
        self.path = path
        self.syscalls = syscalls
        fd = try V4L2Device.openNode(path, syscalls, what: "device")
        var cap = v4l2_capability()
        let err = V4L2Device.rawIoctl(syscalls, fd, .queryCap, &cap)
        guard err == 0 else {
            syscalls.close(fd)
            throw StreamError(
                .unavailable, file: path, "VIDIOC_QUERYCAP failed: \(V4L2Errno(err)) (not a V4L2 device?)")
        }
        let caps = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        capabilities = V4L2Capabilities(
            driver: V4L2Device.string(cap.driver), card: V4L2Device.string(cap.card),
            busInfo: V4L2Device.string(cap.bus_info), deviceCaps: caps)
        state = .opened
        guard capabilities.canCapture else {
            close()
            let why =
                capabilities.isMultiplanarCapture
                ? "only multi-planar capture, which colorcam does not support" : "no video capture"
            throw StreamError(.unavailable, file: path, "not a capture device (\(capabilities.driver): \(why))")
        }
        guard capabilities.canStream else {
            close()
            throw StreamError(
                .unavailable, file: path, "\(capabilities.driver) has no streaming I/O (V4L2_CAP_STREAMING)")
        }
    }

    deinit { close() }

    /// Stops streaming if needed and closes the descriptor. Idempotent; never throws (teardown errors of a device
    /// that is already gone are expected and ignored).
    public func close() {
        if state == .closed { return }
        if state == .streaming { stopStreamingIgnoringErrors() }
        syscalls.close(fd)
        fd = -1
        state = .closed
    }

    func setState(_ newState: State) { state = newState }

    /// Opens a V4L2 node (capture or output).
    /// - Parameter what: the node's role in the "cannot open …" message ("device", "output device").
    /// - Returns: the descriptor.
    /// - Throws: `StreamError` `.unavailable`: "not a V4L2 device (VIDIOC_QUERYCAP: ENOTTY …)" for another kind of
    ///   file, else "cannot open WHAT: ERRNO".
    static func openNode(_ path: String, _ syscalls: V4L2Syscalls, what: String) throws -> Int32 {
        let fdOrErrno = syscalls.open(path)
        guard fdOrErrno >= 0 else {
            let err = V4L2Errno(-fdOrErrno)
            throw StreamError(
                .unavailable, file: path,
                err.code == ENOTTY
                    ? "not a V4L2 device (VIDIOC_QUERYCAP: \(err))" : "cannot open \(what): \(err)")
        }
        return fdOrErrno
    }

    /// A single-planar `VIDIOC_S_FMT` request for `type` (capture or output), progressive.
    static func formatRequest(_ type: UInt32, widthPx: Int, heightPx: Int, pixelFormat: V4L2PixelFormat) -> v4l2_format
    {
        var fmt = v4l2_format()
        fmt.type = type
        fmt.fmt.pix.width = UInt32(widthPx)
        fmt.fmt.pix.height = UInt32(heightPx)
        fmt.fmt.pix.pixelformat = pixelFormat.rawValue
        fmt.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        return fmt
    }

    // MARK: - The ioctl funnel

    /// Issues `request` with `arg`, retrying `EINTR`.
    ///
    /// - Parameter allowing: errnos that are expected outcomes (e.g. `EINVAL` ending an enumeration, `EAGAIN` on a
    ///   non-blocking DQBUF); they are returned instead of thrown.
    /// - Returns: 0 on success, or one of `allowing`.
    /// - Throws: `StreamError` `.unavailable`: "`VIDIOC_X failed: ERRNO (text)`", with the frame while streaming.
    @discardableResult
    func ioctl<T>(_ request: V4L2Request, _ arg: inout T, allowing: ExpectedErrno = .none) throws -> Int32 {
        let err = V4L2Device.rawIoctl(syscalls, fd, request, &arg)
        if err == 0 || allowing.contains(err) { return err }
        throw failure(request.name, V4L2Errno(err))
    }

    /// Up to two errnos a request may return as an expected outcome (a fixed-size value: the funnel is called per
    /// frame and must not allocate).
    struct ExpectedErrno {
        let first: Int32
        let second: Int32
        static let none = ExpectedErrno(first: 0, second: 0)
        /// The end of an enumeration (`EINVAL`), or a driver that does not enumerate at all (`ENOTTY`).
        static let endOfList = ExpectedErrno(first: EINVAL, second: ENOTTY)
        /// Nothing ready on a non-blocking descriptor.
        static let wouldBlock = ExpectedErrno(first: EAGAIN, second: 0)
        func contains(_ err: Int32) -> Bool { err != 0 && (err == first || err == second) }
    }

    /// The EINTR loop under the funnel (also used by init before `self` is complete).
    static func rawIoctl<T>(_ syscalls: V4L2Syscalls, _ fd: Int32, _ request: V4L2Request, _ arg: inout T) -> Int32 {
        withUnsafeMutableBytes(of: &arg) { raw in
            Errno.codeRetryingInterrupts { syscalls.ioctl(fd, request.code, raw.baseAddress!) }
        }
    }

    /// The error for a failed request: `DEVICE: frame N: REQUEST failed: ERRNO (text)`.
    func failure(_ what: String, _ err: V4L2Errno) -> StreamError {
        StreamError(
            .unavailable, file: path, frame: state == .streaming ? dequeuedCount : nil, "\(what) failed: \(err)")
    }

    /// A NUL-terminated C char array (imported as a tuple) as a String.
    static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix(while: { $0 != 0 })
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
