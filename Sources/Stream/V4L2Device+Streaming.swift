import CV4L2

#if canImport(Glibc)
    import Glibc
#endif

/// A buffer the driver has filled, as `VIDIOC_DQBUF` returned it. Valid until `requeue(_:)` gives it back.
public struct V4L2FilledBuffer {
    /// The V4L2 buffer index (pass to `requeue`).
    public let index: Int
    /// The mapped image: `bytesUsed` valid bytes (the whole image for uncompressed formats).
    public let bytes: UnsafeRawBufferPointer
    /// The driver's sequence number (counts every frame the driver produced, including dropped ones).
    public let sequence: UInt32
    /// The driver's timestamp in nanoseconds of `CLOCK_MONOTONIC`, or nil when the buffer's timestamp is not
    /// monotonic (`V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC` unset) or zero.
    public let monotonicTimestampNs: Int64?
    /// `V4L2_BUF_FLAG_ERROR`: the driver says the data may be corrupt.
    public let hasError: Bool
}

extension V4L2Device {
    /// Requests `bufferCount` mmap buffers, maps and queues them all, and starts streaming:
    /// `configured → streaming`.
    ///
    /// A small count keeps latency low (each filled, undequeued buffer is a frame of lag); 3 lets the driver fill
    /// one while colorcam converts another.
    /// - Throws: `StreamError` `.unavailable` naming the failing request (REQBUFS, QUERYBUF, mmap, QBUF, STREAMON).
    public func startStreaming(bufferCount: Int = 3) throws {
        precondition(state == .configured, "startStreaming() needs a configured device")
        precondition(bufferCount >= 2 && bufferCount <= 32, "bufferCount out of range")
        var req = v4l2_requestbuffers()
        req.count = UInt32(bufferCount)
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        req.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl(.requestBuffers, &req)
        guard req.count >= 2 else {
            throw StreamError(.unavailable, file: path, "VIDIOC_REQBUFS: driver granted \(req.count) buffers, need 2")
        }
        do {
            for index in 0..<Int(req.count) {
                var buf = v4l2_buffer()
                buf.index = UInt32(index)
                buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
                buf.memory = V4L2_MEMORY_MMAP.rawValue
                try ioctl(.queryBuffer, &buf)
                let length = Int(buf.length)
                switch syscalls.mmap(fd, length, Int64(buf.m.offset)) {
                case .success(let address): mappedBuffers.append((address, length))
                case .failure(let err): throw failure("mmap of buffer \(index) (\(length) bytes)", err)
                }
            }
            for index in mappedBuffers.indices { try queue(index) }
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            try ioctl(.streamOn, &type)
        } catch {
            releaseBuffers()
            throw error
        }
        dequeuedCount = 0
        setState(.streaming)
    }

    /// Waits for the next filled buffer (poll, then `VIDIOC_DQBUF`).
    ///
    /// Must not allocate: called once per frame on the capture thread.
    /// - Parameter timeoutMs: how long to wait for a frame before giving up.
    /// - Throws: `StreamError` `.unavailable` when DQBUF fails (device gone: `ENODEV`, `EPIPE`, `EIO`), poll reports
    ///   an error, or no frame arrives within `timeoutMs`.
    public func dequeue(timeoutMs: Int32) throws -> V4L2FilledBuffer {
        precondition(state == .streaming, "dequeue() needs a streaming device")
        var buf = v4l2_buffer()
        var waitedMs: Int32 = 0
        var spuriousWakeups = 0
        // Poll first, DQBUF only when poll says a buffer is ready (libv4l2 logs every failed DQBUF on stderr).
        while true {
            let sliceMs = min(Int32(100), max(timeoutMs - waitedMs, 1))
            let revents = syscalls.poll(fd, sliceMs)
            if revents < 0 {
                if -revents == EINTR { continue }
                throw failure("poll", V4L2Errno(-revents))
            }
            if revents == 0 {
                waitedMs += sliceMs
                if waitedMs >= timeoutMs {
                    throw StreamError(
                        .unavailable, file: path, frame: dequeuedCount,
                        "VIDIOC_DQBUF: no frame within \(timeoutMs) ms (device stalled)")
                }
                continue
            }
            buf = v4l2_buffer()
            buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            buf.memory = V4L2_MEMORY_MMAP.rawValue
            if try ioctl(.dequeueBuffer, &buf, allowing: .wouldBlock) == 0 { break }
            spuriousWakeups += 1
            if revents & Int32(POLLERR | POLLHUP | POLLNVAL) != 0 || spuriousWakeups > 10_000 {
                // DQBUF had nothing to say; report what poll said (or that it keeps saying "ready" for nothing).
                let what =
                    revents & Int32(POLLHUP) != 0
                    ? "POLLHUP (device gone?)"
                    : revents & Int32(POLLERR | POLLNVAL) != 0
                        ? "POLLERR (device gone?)"
                        : "POLLIN 10000 times while VIDIOC_DQBUF had no buffer"
                throw StreamError(.unavailable, file: path, frame: dequeuedCount, "poll reported \(what)")
            }
        }
        let index = Int(buf.index)
        guard index < mappedBuffers.count else {
            throw StreamError(
                .unavailable, file: path, frame: dequeuedCount,
                "VIDIOC_DQBUF returned buffer index \(index) of \(mappedBuffers.count)")
        }
        dequeuedCount += 1
        let mapped = mappedBuffers[index]
        let used = min(Int(buf.bytesused), mapped.length)
        let isMonotonic = buf.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        let timestampNs = Int64(buf.timestamp.tv_sec) * 1_000_000_000 + Int64(buf.timestamp.tv_usec) * 1_000
        return V4L2FilledBuffer(
            index: index, bytes: UnsafeRawBufferPointer(start: mapped.address, count: used), sequence: buf.sequence,
            monotonicTimestampNs: isMonotonic && timestampNs > 0 ? timestampNs : nil,
            hasError: buf.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0)
    }

    /// Gives a dequeued buffer back to the driver (`VIDIOC_QBUF`). Call as soon as its pixels are copied out.
    public func requeue(_ buffer: V4L2FilledBuffer) throws {
        precondition(state == .streaming, "requeue() needs a streaming device")
        try queue(buffer.index)
    }

    private func queue(_ index: Int) throws {
        var buf = v4l2_buffer()
        buf.index = UInt32(index)
        buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buf.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl(.queueBuffer, &buf)
    }

    /// `VIDIOC_STREAMOFF`, unmap, free the buffers: `streaming → configured`.
    /// - Throws: `StreamError` if STREAMOFF fails (the buffers are released anyway).
    public func stopStreaming() throws {
        precondition(state == .streaming, "stopStreaming() needs a streaming device")
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        defer { releaseBuffers(); setState(.configured) }
        try ioctl(.streamOff, &type)
    }

    func stopStreamingIgnoringErrors() {
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        _ = V4L2Device.rawIoctl(syscalls, fd, .streamOff, &type)
        releaseBuffers()
        setState(.configured)
    }

    private func releaseBuffers() {
        for mapped in mappedBuffers { syscalls.munmap(mapped.address, mapped.length) }
        mappedBuffers.removeAll()
        var req = v4l2_requestbuffers()
        req.count = 0
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        req.memory = V4L2_MEMORY_MMAP.rawValue
        _ = V4L2Device.rawIoctl(syscalls, fd, .requestBuffers, &req)
    }
}
