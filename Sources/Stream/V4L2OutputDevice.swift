import CV4L2
import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// A V4L2 video *output* node (a v4l2loopback virtual camera, vivid's output node) written with mmap streaming.
///
/// Lifecycle: `init` opens the node, checks it is a single-planar video output with streaming I/O, negotiates the
/// format (the requested one, else the first of `V4L2OutputConverter.offeredFormats` the node accepts), sets the
/// frame interval and maps the buffers; `submit` fills a free buffer and queues it (streaming starts with the first);
/// `close` (or deinit) stops streaming and releases everything. Every ioctl goes through `V4L2Device`'s funnel
/// (`rawIoctl`, EINTR retried); the descriptor is non-blocking, so nothing here ever waits for the consumer.
///
/// Errors are `StreamError` `.unavailable` naming the node, the request and the errno.
/// Threading: one thread at a time (the output sink's writer thread); not Sendable.
public final class V4L2OutputDevice {
    public let path: String
    public let format: V4L2PixelFormat
    public let converter: V4L2OutputConverter
    /// The interval set with S_PARM, read back (nil when the driver does not report one).
    public let frameInterval: V4L2Fraction?
    /// Things that differ from the request (format chosen, rate), one line each.
    public let notes: [String]
    private let syscalls: V4L2Syscalls
    private var fd: Int32
    private var buffers: [(address: UnsafeMutableRawPointer, length: Int)] = []
    /// Buffers the driver does not hold (indices); those queued come back through DQBUF.
    private var free: [Int] = []
    private var streaming = false
    /// The buffer holding the last image queued (what a repeat shows).
    private var lastQueued: Int?
    /// Buffers queued since open (names the frame in error messages).
    public private(set) var queuedCount = 0

    private static let outputType = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue

    /// - Parameters:
    ///   - pixelFormat: a specific format, or nil to pick the first of `offeredFormats` the node takes.
    ///   - frameRate: the rate frames will be written at (set as the node's `timeperframe`).
    ///   - bufferCount: mmap buffers (the sink passes `V4L2OutputSink.Options.bufferCount`; no default here).
    public init(
        path: String, geometry: FrameGeometry, frameRate: V4L2Fraction, pixelFormat: V4L2PixelFormat? = nil,
        bufferCount: Int, syscalls: V4L2Syscalls = .live
    ) throws {
        self.path = path
        self.syscalls = syscalls
        let handle = try V4L2Device.openNode(path, syscalls, what: "output device")
        fd = handle
        var notes: [String] = []
        do {
            var cap = v4l2_capability()
            try Self.check(syscalls, handle, .queryCap, &cap, path: path)
            let caps = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
            guard caps & UInt32(V4L2_CAP_VIDEO_OUTPUT) != 0 else {
                throw StreamError(
                    .unavailable, file: path,
                    "not a video output device (\(V4L2Device.string(cap.driver)))"
                        + (caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 ? ": it is a capture node" : ""))
            }
            guard caps & UInt32(V4L2_CAP_STREAMING) != 0 else {
                throw StreamError(.unavailable, file: path, "output device has no streaming I/O (V4L2_CAP_STREAMING)")
            }
            let offered = try Self.outputFormats(syscalls, handle, path: path)
            let chosen = try Self.choose(pixelFormat, offered: offered, path: path)
            var fmt = V4L2Device.formatRequest(
                Self.outputType, widthPx: geometry.widthPx, heightPx: geometry.heightPx,
                pixelFormat: chosen)
            try Self.check(syscalls, handle, .setFormat, &fmt, path: path)
            let pix = fmt.fmt.pix
            let actual = V4L2PixelFormat(rawValue: pix.pixelformat)
            guard Int(pix.width) == geometry.widthPx, Int(pix.height) == geometry.heightPx else {
                throw StreamError(
                    .unavailable, file: path,
                    "VIDIOC_S_FMT: asked for \(geometry.widthPx)x\(geometry.heightPx), "
                        + "the device set \(pix.width)x\(pix.height) (colorcam does not scale its output)")
            }
            guard V4L2OutputConverter.offeredFormats.contains(actual) else {
                throw StreamError(
                    .unavailable, file: path, "VIDIOC_S_FMT: asked for \(chosen), the device set \(actual)")
            }
            if pixelFormat == nil { notes.append("output format \(actual)") }
            let minimumLine = V4L2Converter.minimumBytesPerLine(actual, widthPx: geometry.widthPx)
            converter = try V4L2OutputConverter(
                format: actual, geometry: geometry,
                bytesPerLine: max(Int(pix.bytesperline), minimumLine), device: path)
            guard Int(pix.sizeimage) == 0 || Int(pix.sizeimage) >= converter.imageBytes else {
                throw StreamError(
                    .unavailable, file: path,
                    "VIDIOC_S_FMT: sizeimage \(pix.sizeimage) < \(converter.imageBytes) bytes for \(actual)")
            }
            format = actual
            frameInterval = Self.setInterval(syscalls, handle, frameRate, notes: &notes)
            self.notes = notes
        } catch {
            syscalls.close(handle)
            throw error
        }
        do {
            try mapBuffers(count: bufferCount)
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Converts `frame` into a free buffer and queues it; starts streaming with the first. Never blocks.
    /// - Returns: false when every buffer is still held by the driver (the consumer is behind): nothing written.
    /// - Throws: `StreamError` `.unavailable` when QBUF, DQBUF or STREAMON fail (a refused buffer, a device gone).
    public func submit(_ frame: FrameBuffer) throws -> Bool {
        try reclaim()
        guard let index = free.popLast() else { return false }
        let mapped = buffers[index]
        converter.convert(frame, into: UnsafeMutableRawBufferPointer(start: mapped.address, count: mapped.length))
        try queue(index)
        return true
    }

    /// Queues the last image again (a repeat for a device faster than the frames) if at least `keepingFree` + 1
    /// buffers are free, so `keepingFree` stay for the next frame. Costs a copy of the image into another buffer, no
    /// conversion. Never blocks.
    /// - Returns: whether it was queued (false also before any image was submitted).
    /// - Throws: as `submit`.
    public func resubmitLast(keepingFree: Int) throws -> Bool {
        try reclaim()
        guard let last = lastQueued, free.count > keepingFree else { return false }
        let index = free.removeLast()
        buffers[index].address.copyMemory(from: buffers[last].address, byteCount: converter.imageBytes)
        try queue(index)
        return true
    }

    /// QBUF of a filled buffer (taken off `free`), STREAMON with the first.
    private func queue(_ index: Int) throws {
        var buf = v4l2_buffer()
        buf.index = UInt32(index)
        buf.type = Self.outputType
        buf.memory = V4L2_MEMORY_MMAP.rawValue
        buf.bytesused = UInt32(converter.imageBytes)
        buf.field = V4L2_FIELD_NONE.rawValue
        let err = V4L2Device.rawIoctl(syscalls, fd, .queueBuffer, &buf)
        guard err == 0 else {
            free.append(index)
            throw failure("VIDIOC_QBUF", err)
        }
        queuedCount += 1
        lastQueued = index
        if !streaming {
            var type = Int32(Self.outputType)
            let err = V4L2Device.rawIoctl(syscalls, fd, .streamOn, &type)
            guard err == 0 else { throw failure("VIDIOC_STREAMON", err) }
            streaming = true
        }
    }

    /// Stops streaming, unmaps, closes. Idempotent; never throws (a gone device's teardown errors are expected).
    public func close() {
        guard fd >= 0 else { return }
        var type = Int32(Self.outputType)
        if streaming { _ = V4L2Device.rawIoctl(syscalls, fd, .streamOff, &type) }
        streaming = false
        for mapped in buffers { syscalls.munmap(mapped.address, mapped.length) }
        buffers.removeAll()
        free.removeAll()
        var req = v4l2_requestbuffers()
        req.type = Self.outputType
        req.memory = V4L2_MEMORY_MMAP.rawValue
        _ = V4L2Device.rawIoctl(syscalls, fd, .requestBuffers, &req)
        syscalls.close(fd)
        fd = -1
    }

    /// DQBUF (non-blocking) until the driver has nothing more to give back.
    private func reclaim() throws {
        guard streaming else { return }
        while free.count < buffers.count {
            var buf = v4l2_buffer()
            buf.type = Self.outputType
            buf.memory = V4L2_MEMORY_MMAP.rawValue
            let err = V4L2Device.rawIoctl(syscalls, fd, .dequeueBuffer, &buf)
            if err == EAGAIN { return }
            guard err == 0 else { throw failure("VIDIOC_DQBUF", err) }
            guard Int(buf.index) < buffers.count, !free.contains(Int(buf.index)) else {
                throw StreamError(.unavailable, file: path, "VIDIOC_DQBUF returned buffer \(buf.index), not one queued")
            }
            free.append(Int(buf.index))
        }
    }

    private func mapBuffers(count: Int) throws {
        var req = v4l2_requestbuffers()
        req.count = UInt32(count)
        req.type = Self.outputType
        req.memory = V4L2_MEMORY_MMAP.rawValue
        try Self.check(syscalls, fd, .requestBuffers, &req, path: path)
        guard req.count >= 2 else {
            throw StreamError(
                .unavailable, file: path, "VIDIOC_REQBUFS: the device granted \(req.count) buffers, need 2")
        }
        for index in 0..<Int(req.count) {
            var buf = v4l2_buffer()
            buf.index = UInt32(index)
            buf.type = Self.outputType
            buf.memory = V4L2_MEMORY_MMAP.rawValue
            try Self.check(syscalls, fd, .queryBuffer, &buf, path: path)
            let length = Int(buf.length)
            guard length >= converter.imageBytes else {
                throw StreamError(
                    .unavailable, file: path,
                    "VIDIOC_QUERYBUF: buffer \(index) holds \(length) bytes, an image needs \(converter.imageBytes)")
            }
            switch syscalls.mmap(fd, length, Int64(buf.m.offset)) {
            case .success(let address): buffers.append((address, length))
            case .failure(let err): throw failure("mmap of buffer \(index) (\(length) bytes)", err.code)
            }
            free.append(index)
        }
    }

    private func failure(_ what: String, _ err: Int32) -> StreamError {
        StreamError(.unavailable, file: path, frame: queuedCount, "\(what) failed: \(V4L2Errno(err))")
    }

    /// One ioctl through the funnel, thrown as `REQUEST failed: ERRNO` on failure.
    private static func check<T>(
        _ syscalls: V4L2Syscalls, _ fd: Int32, _ request: V4L2Request, _ arg: inout T,
        path: String
    ) throws {
        let err = V4L2Device.rawIoctl(syscalls, fd, request, &arg)
        guard err == 0 else { throw StreamError(.unavailable, file: path, "\(request) failed: \(V4L2Errno(err))") }
    }

    /// The node's output formats (`VIDIOC_ENUM_FMT` on the output queue).
    static func outputFormats(_ syscalls: V4L2Syscalls, _ fd: Int32, path: String) throws -> [V4L2PixelFormat] {
        var result: [V4L2PixelFormat] = []
        for index in 0..<256 {
            var desc = v4l2_fmtdesc()
            desc.index = UInt32(index)
            desc.type = outputType
            let err = V4L2Device.rawIoctl(syscalls, fd, .enumFormat, &desc)
            if err == EINVAL || err == ENOTTY { break }
            guard err == 0 else {
                throw StreamError(.unavailable, file: path, "VIDIOC_ENUM_FMT failed: \(V4L2Errno(err))")
            }
            result.append(V4L2PixelFormat(rawValue: desc.pixelformat))
        }
        return result
    }

    /// The requested format if offered (or if the node enumerates nothing, as v4l2loopback does before a writer
    /// sets one), else the first colorcam format the node offers.
    static func choose(_ wanted: V4L2PixelFormat?, offered: [V4L2PixelFormat], path: String) throws -> V4L2PixelFormat {
        let list = offered.map(\.fourCC).joined(separator: " ")
        if let wanted {
            guard V4L2OutputConverter.offeredFormats.contains(wanted) else {
                let ours = V4L2OutputConverter.offeredFormats.map(\.fourCC).joined(separator: " ")
                throw StreamError(.usage, file: path, "output format \(wanted) is not one colorcam writes (\(ours))")
            }
            guard offered.isEmpty || offered.contains(wanted) else {
                throw StreamError(.unavailable, file: path, "output format \(wanted) not accepted (accepts: \(list))")
            }
            return wanted
        }
        if offered.isEmpty { return V4L2OutputConverter.offeredFormats[0] }
        guard let first = V4L2OutputConverter.offeredFormats.first(where: offered.contains) else {
            throw StreamError(.unavailable, file: path, "no output format colorcam writes (accepts: \(list))")
        }
        return first
    }

    /// Sets the output `timeperframe` (S_PARM) and reads it back; nil when the driver has none.
    private static func setInterval(
        _ syscalls: V4L2Syscalls, _ fd: Int32, _ rate: V4L2Fraction,
        notes: inout [String]
    ) -> V4L2Fraction? {
        var parm = v4l2_streamparm()
        parm.type = outputType
        guard V4L2Device.rawIoctl(syscalls, fd, .getParm, &parm) == 0 else {
            notes.append("device does not report an output frame interval (VIDIOC_G_PARM)")
            return nil
        }
        if parm.parm.output.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 {
            parm.parm.output.timeperframe.numerator = UInt32(rate.numerator)
            parm.parm.output.timeperframe.denominator = UInt32(rate.denominator)
            _ = V4L2Device.rawIoctl(syscalls, fd, .setParm, &parm)
            parm = v4l2_streamparm()
            parm.type = outputType
            _ = V4L2Device.rawIoctl(syscalls, fd, .getParm, &parm)
        }
        let tpf = parm.parm.output.timeperframe
        let actual = V4L2Fraction(Int(tpf.numerator), Int(tpf.denominator))
        guard actual.framesPerSecond > 0 else { return nil }
        if actual.framesPerSecond > rate.framesPerSecond * 1.01 {
            notes.append(
                "device runs its output at \(actual) fps, faster than the \(rate) fps written: each frame is "
                    + "queued with repeats to fill its interval")
        } else if actual.framesPerSecond < rate.framesPerSecond * 0.99 {
            notes.append(
                "device runs its output at \(actual) fps, slower than the \(rate) fps written: frames it "
                    + "cannot take are skipped (sink_busy)")
        }
        return actual
    }
}
