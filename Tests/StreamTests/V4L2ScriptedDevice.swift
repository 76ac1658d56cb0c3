import CV4L2
import ColorcamCore
import Foundation
import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// One frame a scripted device delivers.
struct ScriptedFrame {
    var sequence: UInt32
    /// Driver timestamp, ns of CLOCK_MONOTONIC.
    var timestampNs: Int64
    var monotonic = true
    var errorFlag = false
    /// Bytes the driver says it filled; nil = the whole image.
    var bytesUsed: Int?
    /// The image bytes (copied into the mmap buffer at DQBUF); nil = fill with `sequence & 0xFF`.
    var bytes: [UInt8]?
}

/// A V4L2 device played from a script, behind the `V4L2Syscalls` seam: it answers QUERYCAP, ENUM_*, G/S_FMT,
/// G/S_PARM, REQBUFS, QUERYBUF, QBUF, DQBUF, STREAMON/OFF like a driver, hands out heap memory for mmap, and can
/// inject errnos. Tests only; every call is serialised by one lock.
final class ScriptedV4L2: @unchecked Sendable {
    // Invariant for @unchecked Sendable: all mutable state is in `state`, accessed only under `lock` (via `with`).
    struct State {
        var deviceCaps: UInt32 = UInt32(V4L2_CAP_VIDEO_CAPTURE) | UInt32(V4L2_CAP_STREAMING)
        var formats: [V4L2PixelFormat] = [.yuyv]
        var sizes: [(Int, Int)] = [(8, 4)]
        var intervals: [V4L2Fraction] = [V4L2Fraction(1, 30)]
        var canSetRate = true
        var timePerFrame = V4L2Fraction(1, 30)
        var format: V4L2PixelFormat = .yuyv
        var widthPx = 8
        var heightPx = 4
        /// Extra bytes the driver adds to each row (padding).
        var rowPaddingBytes = 0
        var frames: [ScriptedFrame] = []
        var nextFrame = 0
        var buffers: [UnsafeMutableRawPointer] = []
        var bufferLength = 0
        var queued: [Int] = []
        var streaming = false
        /// errnos to return, in order, the next times the named request is issued.
        var inject: [String: [Int32]] = [:]
        /// After the script's frames run out: true → poll reports POLLERR and DQBUF fails ENODEV (unplugged);
        /// false → poll times out (a stalled device).
        var disconnectAtEnd = false
        var calls: [String] = []
        var mapped = 0
        var unmapped = 0
        var closed = 0
    }
    private var state = State()
    private let lock = NSLock()

    init(_ configure: (inout State) -> Void = { _ in }) {
        configure(&state)
    }

    deinit {
        for b in state.buffers { b.deallocate() }
    }

    /// Runs `body` on the device state under the lock.
    func with<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    var calls: [String] { with { $0.calls } }

    static func name(_ code: UInt) -> String {
        let all: [V4L2Request] = [
            .queryCap, .enumFormat, .enumFrameSizes, .enumFrameIntervals, .getFormat, .setFormat,
            .getParm, .setParm, .requestBuffers, .queryBuffer, .queueBuffer, .dequeueBuffer,
            .streamOn, .streamOff
        ]
        return all.first { $0.code == code }?.name ?? "ioctl \(code)"
    }

    /// Bytes per line and image size for the current format.
    static func layout(_ s: State) -> (bytesPerLine: Int, sizeImage: Int) {
        let bpl = V4L2Converter.minimumBytesPerLine(s.format, widthPx: s.widthPx) + s.rowPaddingBytes
        if s.format.isCompressed { return (0, s.widthPx * s.heightPx * 2) }
        return (
            bpl,
            V4L2Converter.minimumImageBytes(
                s.format, bytesPerLine: bpl, widthPx: s.widthPx,
                heightPx: s.heightPx)
        )
    }

    var syscalls: V4L2Syscalls {
        V4L2Syscalls(
            open: { path in path.hasPrefix("/dev/missing") ? -ENOENT : 42 },
            close: { _ in self.with { $0.closed += 1 } },
            ioctl: { _, code, arg in self.with { self.ioctl(&$0, code, arg) } },
            mmap: { _, length, offset in
                self.with { s in
                    let index = Int(offset) / 4096
                    guard index < s.buffers.count, length <= s.bufferLength else { return .failure(V4L2Errno(EINVAL)) }
                    s.mapped += 1
                    return .success(s.buffers[index])
                }
            },
            munmap: { _, _ in self.with { $0.unmapped += 1 } },
            poll: { _, _ in
                self.with { s in
                    if s.nextFrame >= s.frames.count {
                        return s.disconnectAtEnd ? Int32(POLLERR) : 0
                    }
                    return s.queued.isEmpty ? 0 : Int32(POLLIN)
                }
            })
    }

    private func ioctl(_ s: inout State, _ code: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        let name = ScriptedV4L2.name(code)
        s.calls.append(name)
        if var pending = s.inject[name], !pending.isEmpty {
            let err = pending.removeFirst()
            s.inject[name] = pending
            if err != 0 { return err }
        }
        switch code {
        case V4L2Request.queryCap.code:
            let cap = arg.assumingMemoryBound(to: v4l2_capability.self)
            cap.pointee = v4l2_capability()
            withUnsafeMutableBytes(of: &cap.pointee.driver) { raw in
                for (i, byte) in "scripted".utf8.enumerated() { raw[i] = byte }
            }
            cap.pointee.capabilities = s.deviceCaps | UInt32(V4L2_CAP_DEVICE_CAPS)
            cap.pointee.device_caps = s.deviceCaps
        case V4L2Request.enumFormat.code:
            let d = arg.assumingMemoryBound(to: v4l2_fmtdesc.self)
            let i = Int(d.pointee.index)
            guard i < s.formats.count else { return EINVAL }
            d.pointee.pixelformat = s.formats[i].rawValue
        case V4L2Request.enumFrameSizes.code:
            let e = arg.assumingMemoryBound(to: v4l2_frmsizeenum.self)
            let i = Int(e.pointee.index)
            guard i < s.sizes.count else { return EINVAL }
            e.pointee.type = V4L2_FRMSIZE_TYPE_DISCRETE.rawValue
            e.pointee.discrete.width = UInt32(s.sizes[i].0)
            e.pointee.discrete.height = UInt32(s.sizes[i].1)
        case V4L2Request.enumFrameIntervals.code:
            let e = arg.assumingMemoryBound(to: v4l2_frmivalenum.self)
            let i = Int(e.pointee.index)
            guard i < s.intervals.count else { return EINVAL }
            e.pointee.type = V4L2_FRMIVAL_TYPE_DISCRETE.rawValue
            e.pointee.discrete.numerator = UInt32(s.intervals[i].numerator)
            e.pointee.discrete.denominator = UInt32(s.intervals[i].denominator)
        case V4L2Request.setFormat.code, V4L2Request.getFormat.code:
            let f = arg.assumingMemoryBound(to: v4l2_format.self)
            if code == V4L2Request.setFormat.code {
                let wanted = V4L2PixelFormat(rawValue: f.pointee.fmt.pix.pixelformat)
                if s.formats.contains(wanted) { s.format = wanted }
                // Like a discrete-size camera: the nearest offered size.
                let w = Int(f.pointee.fmt.pix.width), h = Int(f.pointee.fmt.pix.height)
                let best = s.sizes.min { abs($0.0 - w) + abs($0.1 - h) < abs($1.0 - w) + abs($1.1 - h) }!
                (s.widthPx, s.heightPx) = best
            }
            let (bpl, size) = ScriptedV4L2.layout(s)
            f.pointee.fmt.pix.width = UInt32(s.widthPx)
            f.pointee.fmt.pix.height = UInt32(s.heightPx)
            f.pointee.fmt.pix.pixelformat = s.format.rawValue
            f.pointee.fmt.pix.field = V4L2_FIELD_NONE.rawValue
            f.pointee.fmt.pix.bytesperline = UInt32(bpl)
            f.pointee.fmt.pix.sizeimage = UInt32(size)
        case V4L2Request.getParm.code, V4L2Request.setParm.code:
            let p = arg.assumingMemoryBound(to: v4l2_streamparm.self)
            if code == V4L2Request.setParm.code {
                guard s.canSetRate else { return EINVAL }
                let t = p.pointee.parm.capture.timeperframe
                let wanted = V4L2Fraction(Int(t.numerator), Int(t.denominator))
                // Like a driver: the nearest offered interval.
                s.timePerFrame = s.intervals.min {
                    abs($0.framesPerSecond - wanted.framesPerSecond) < abs($1.framesPerSecond - wanted.framesPerSecond)
                }!
            }
            p.pointee.parm.capture.capability = s.canSetRate ? UInt32(V4L2_CAP_TIMEPERFRAME) : 0
            p.pointee.parm.capture.timeperframe.numerator = UInt32(s.timePerFrame.numerator)
            p.pointee.parm.capture.timeperframe.denominator = UInt32(s.timePerFrame.denominator)
        case V4L2Request.requestBuffers.code:
            let r = arg.assumingMemoryBound(to: v4l2_requestbuffers.self)
            for b in s.buffers { b.deallocate() }
            s.buffers = []
            s.queued = []
            s.bufferLength = ScriptedV4L2.layout(s).sizeImage
            for _ in 0..<Int(r.pointee.count) {
                s.buffers.append(.allocate(byteCount: s.bufferLength, alignment: 64))
            }
        case V4L2Request.queryBuffer.code:
            let b = arg.assumingMemoryBound(to: v4l2_buffer.self)
            guard Int(b.pointee.index) < s.buffers.count else { return EINVAL }
            b.pointee.length = UInt32(s.bufferLength)
            b.pointee.m.offset = b.pointee.index * 4096
        case V4L2Request.queueBuffer.code:
            let b = arg.assumingMemoryBound(to: v4l2_buffer.self)
            let i = Int(b.pointee.index)
            guard i < s.buffers.count, !s.queued.contains(i) else { return EINVAL }
            s.queued.append(i)
        case V4L2Request.dequeueBuffer.code:
            if s.nextFrame >= s.frames.count { return s.disconnectAtEnd ? ENODEV : EAGAIN }
            guard s.streaming, !s.queued.isEmpty else { return EAGAIN }
            let index = s.queued.removeFirst()
            let frame = s.frames[s.nextFrame]
            s.nextFrame += 1
            let raw = UnsafeMutableRawBufferPointer(start: s.buffers[index], count: s.bufferLength)
            if let bytes = frame.bytes {
                bytes.withUnsafeBytes { source in
                    raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: source.prefix(min(source.count, raw.count))))
                }
            } else {
                raw.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: frame.sequence))
            }
            let b = arg.assumingMemoryBound(to: v4l2_buffer.self)
            b.pointee.index = UInt32(index)
            b.pointee.bytesused = UInt32(frame.bytesUsed ?? frame.bytes?.count ?? s.bufferLength)
            b.pointee.sequence = frame.sequence
            b.pointee.timestamp.tv_sec = Int(frame.timestampNs / 1_000_000_000)
            b.pointee.timestamp.tv_usec = Int(frame.timestampNs % 1_000_000_000 / 1000)
            b.pointee.flags =
                (frame.monotonic ? UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC) : 0)
                | (frame.errorFlag ? UInt32(V4L2_BUF_FLAG_ERROR) : 0)
        case V4L2Request.streamOn.code:
            s.streaming = true
        case V4L2Request.streamOff.code:
            s.streaming = false
            s.queued = []
        default:
            return ENOTTY
        }
        return 0
    }

    /// `count` frames with consecutive sequence numbers from `first`, `intervalNs` apart from `startNs`.
    static func steadyFrames(
        _ count: Int, first: UInt32 = 0, startNs: Int64 = 5_000_000_000,
        intervalNs: Int64 = 33_333_333
    ) -> [ScriptedFrame] {
        (0..<count).map { i in
            ScriptedFrame(sequence: first + UInt32(i), timestampNs: startNs + Int64(i) * intervalNs)
        }
    }
}
