import CV4L2
import ColorcamCore
import Foundation
import Testing

@testable import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// A V4L2 video output node played from a script behind the `V4L2Syscalls` seam: it answers QUERYCAP, ENUM_FMT,
/// S_FMT, G/S_PARM, REQBUFS, QUERYBUF, QBUF, DQBUF, STREAMON/OFF like a driver whose consumer takes a queued buffer
/// only when the test says so (`consume`). Errnos can be injected per request; `unplugged` makes open and every
/// ioctl fail with ENODEV. Tests only; every call is serialised by one lock.
final class ScriptedV4L2Output: @unchecked Sendable {
    // Invariant for @unchecked Sendable: all mutable state is accessed under `lock`.
    var deviceCaps = UInt32(V4L2_CAP_VIDEO_OUTPUT) | UInt32(V4L2_CAP_STREAMING)
    var formats: [V4L2PixelFormat] = [.yuyv, .yuv420]
    var format = V4L2PixelFormat.yuyv
    var widthPx = 0, heightPx = 0
    var bufferCount = 0
    var buffers: [UnsafeMutableRawPointer] = []
    var bufferLength = 0
    /// Buffers the driver holds, in queue order; `done` ones come back at the next DQBUF.
    var queued: [Int] = []
    var done: [Int] = []
    /// Bytes of each buffer at the moment it was queued (what the consumer sees), and its index.
    var shown: [[UInt8]] = []
    var shownIndices: [Int] = []
    var streaming = false
    var unplugged = false
    var opens = 0
    var inject: [String: Int32] = [:]
    var timePerFrame = V4L2Fraction(1, 60)
    /// The output rate stays `timePerFrame` whatever S_PARM asks (like vivid's HDMI output).
    var fixedRate = false
    private let lock = NSLock()

    func with<R>(_ body: (ScriptedV4L2Output) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(self)
    }

    /// The consumer takes the oldest `count` queued buffers (they come back through DQBUF).
    func consume(_ count: Int = 1) {
        with { d in
            for _ in 0..<min(count, d.queued.count) { d.done.append(d.queued.removeFirst()) }
        }
    }

    var syscalls: V4L2Syscalls {
        V4L2Syscalls(
            open: { [self] _ in
                with { d in
                    if d.unplugged { return -ENODEV }
                    d.opens += 1
                    return 7
                }
            },
            close: { _ in },
            ioctl: { [self] _, request, arg in with { d in d.handle(request, arg) } },
            mmap: { [self] _, length, offset in
                with { d in
                    let index = Int(offset) / 4096
                    guard index < d.buffers.count, length <= d.bufferLength else { return .failure(V4L2Errno(EINVAL)) }
                    return .success(d.buffers[index])
                }
            },
            munmap: { _, _ in },
            poll: { _, _ in 0 })
    }

    private func handle(_ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        let name = ScriptedV4L2.name(request)
        if unplugged { return ENODEV }
        if let err = inject.removeValue(forKey: name) { return err }
        switch request {
        case CCV4L2_VIDIOC_QUERYCAP:
            let cap = arg.assumingMemoryBound(to: v4l2_capability.self)
            cap.pointee.capabilities = deviceCaps | UInt32(V4L2_CAP_DEVICE_CAPS)
            cap.pointee.device_caps = deviceCaps
        case CCV4L2_VIDIOC_ENUM_FMT:
            let desc = arg.assumingMemoryBound(to: v4l2_fmtdesc.self)
            guard desc.pointee.type == V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue, Int(desc.pointee.index) < formats.count
            else {
                return EINVAL
            }
            desc.pointee.pixelformat = formats[Int(desc.pointee.index)].rawValue
        case CCV4L2_VIDIOC_S_FMT:
            let fmt = arg.assumingMemoryBound(to: v4l2_format.self)
            let wanted = V4L2PixelFormat(rawValue: fmt.pointee.fmt.pix.pixelformat)
            format = formats.contains(wanted) ? wanted : formats[0]
            widthPx = Int(fmt.pointee.fmt.pix.width)
            heightPx = Int(fmt.pointee.fmt.pix.height)
            fmt.pointee.fmt.pix.pixelformat = format.rawValue
            let bpl = V4L2Converter.minimumBytesPerLine(format, widthPx: widthPx)
            fmt.pointee.fmt.pix.bytesperline = UInt32(bpl)
            fmt.pointee.fmt.pix.sizeimage = UInt32(
                V4L2Converter.minimumImageBytes(
                    format, bytesPerLine: bpl, widthPx: widthPx, heightPx: heightPx))
        case CCV4L2_VIDIOC_G_PARM, CCV4L2_VIDIOC_S_PARM:
            let parm = arg.assumingMemoryBound(to: v4l2_streamparm.self)
            if request == CCV4L2_VIDIOC_S_PARM && !fixedRate {
                let t = parm.pointee.parm.output.timeperframe
                timePerFrame = V4L2Fraction(Int(t.numerator), Int(t.denominator))
            }
            parm.pointee.parm.output.capability = UInt32(V4L2_CAP_TIMEPERFRAME)
            parm.pointee.parm.output.timeperframe.numerator = UInt32(timePerFrame.numerator)
            parm.pointee.parm.output.timeperframe.denominator = UInt32(timePerFrame.denominator)
        case CCV4L2_VIDIOC_REQBUFS:
            let req = arg.assumingMemoryBound(to: v4l2_requestbuffers.self)
            for b in buffers { b.deallocate() }
            buffers = []
            bufferCount = Int(req.pointee.count)
            bufferLength = 2 * widthPx * heightPx + 64
            buffers = (0..<bufferCount).map { _ in
                UnsafeMutableRawPointer.allocate(byteCount: bufferLength, alignment: 64)
            }
            queued = []
            done = []
        case CCV4L2_VIDIOC_QUERYBUF:
            let buf = arg.assumingMemoryBound(to: v4l2_buffer.self)
            guard Int(buf.pointee.index) < bufferCount else { return EINVAL }
            buf.pointee.length = UInt32(bufferLength)
            buf.pointee.m.offset = buf.pointee.index * 4096
        case CCV4L2_VIDIOC_QBUF:
            let buf = arg.assumingMemoryBound(to: v4l2_buffer.self)
            let index = Int(buf.pointee.index)
            guard index < bufferCount, !queued.contains(index), buf.pointee.bytesused > 0 else { return EINVAL }
            queued.append(index)
            shownIndices.append(index)
            shown.append([UInt8](UnsafeRawBufferPointer(start: buffers[index], count: Int(buf.pointee.bytesused))))
        case CCV4L2_VIDIOC_DQBUF:
            guard streaming, !done.isEmpty else { return EAGAIN }
            arg.assumingMemoryBound(to: v4l2_buffer.self).pointee.index = UInt32(done.removeFirst())
        case CCV4L2_VIDIOC_STREAMON: streaming = true
        case CCV4L2_VIDIOC_STREAMOFF: streaming = false
        default: return ENOTTY
        }
        return 0
    }

    deinit { for b in buffers { b.deallocate() } }
}

/// Records the drops a sink traces.
final class DropRecorder: TraceSink, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `events` only under `lock`.
    private var events: [TraceEvent] = []
    private let lock = NSLock()
    func record(_ event: TraceEvent) { lock.lock(); events.append(event); lock.unlock() }
    var drops: [(frame: Int, reason: DropReason)] {
        lock.lock()
        defer { lock.unlock() }
        return events.filter { $0.kind == .drop && $0.track == .output }.map { ($0.frame, $0.reason) }
    }
}

/// `V4L2OutputSink` stepped by hand (no writer thread) under a manual clock: what reaches the device, what is
/// skipped and why, and how a lost device comes back.
@Suite struct V4L2OutputSinkTests {
    let geometry = FrameGeometry(widthPx: 8, heightPx: 4, chroma: .yuv420(.jpeg))

    func frame(_ sequence: Int) -> FrameBuffer {
        let f = FrameBuffer(geometry: geometry)
        for i in 0..<geometry.frameBytes { f.pixels[i] = UInt8(truncatingIfNeeded: sequence * 16 + i) }
        f.sequence = sequence
        return f
    }

    /// A sink with four buffers (the counts below assume four; the default has more).
    func makeSink(
        _ device: ScriptedV4L2Output, format: V4L2PixelFormat? = nil, trace: TraceSink = NullTraceSink(),
        clock: ManualClock = ManualClock()
    ) throws -> V4L2OutputSink {
        var options = V4L2OutputSink.Options(path: "/dev/video7", pixelFormat: format)
        options.bufferCount = 4
        return try V4L2OutputSink(
            options: options, geometry: geometry, framesPerSecond: (30, 1), trace: trace,
            clock: clock, syscalls: device.syscalls, startsWriterThread: false)
    }

    @Test func framesReachTheDeviceConvertedAndTheRateIsSet() throws {
        let device = ScriptedV4L2Output()
        let sink = try makeSink(device)
        #expect(sink.format == .yuv420, "YU12 is preferred over YUYV when both are offered")
        #expect(device.with { $0.timePerFrame } == V4L2Fraction(1, 30))
        let converter = try V4L2OutputConverter(format: .yuv420, geometry: geometry, bytesPerLine: 8, device: "x")
        for n in 0..<5 {
            try sink.write(frame(n))
            sink.pump()
            device.consume()
            var expected = [UInt8](repeating: 0, count: converter.imageBytes)
            expected.withUnsafeMutableBytes { converter.convert(frame(n), into: $0) }
            #expect(device.with { $0.shown.last } == expected, "frame \(n) as the device got it")
        }
        #expect(sink.framesWritten.load(ordering: .relaxed) == 5)
        #expect(device.with { $0.streaming })
        try sink.finish()
        #expect(!device.with { $0.streaming }, "finish stops streaming")
    }

    @Test func aStalledConsumerCostsThisSinkFramesNeverTheCaller() throws {
        let device = ScriptedV4L2Output()
        let trace = DropRecorder()
        let sink = try makeSink(device, format: .yuyv, trace: trace)
        // Four buffers, none consumed: frames 0-3 are queued, 4 and 5 find no free buffer.
        for n in 0..<6 {
            try sink.write(frame(n))
            sink.pump()
        }
        #expect(sink.framesWritten.load(ordering: .relaxed) == 4)
        #expect(trace.drops.map(\.frame) == [4, 5] && trace.drops.allSatisfy { $0.reason == .sinkBusy })
        // The consumer catches up: the next frame goes out again.
        device.consume(4)
        try sink.write(frame(5))
        sink.pump()
        #expect(sink.framesWritten.load(ordering: .relaxed) == 5)
        // Two writes before the writer runs: the older pending frame is replaced (sink_busy), the newer is sent.
        device.consume(4)
        try sink.write(frame(6))
        try sink.write(frame(7))
        sink.pump()
        #expect(trace.drops.last.map { $0.frame == 6 && $0.reason == .sinkBusy } == true)
        #expect(device.with { $0.shown.count } == 6)
        #expect(sink.framesBusy.load(ordering: .relaxed) == 3)
    }

    @Test func aLostDeviceIsReopenedAfterBackoff() throws {
        let device = ScriptedV4L2Output()
        let trace = DropRecorder()
        let clock = ManualClock()
        let sink = try makeSink(device, trace: trace, clock: clock)
        try sink.write(frame(0))
        sink.pump()
        device.consume()
        device.with { $0.unplugged = true }
        try sink.write(frame(1))
        sink.pump()  // QBUF fails: the device is closed, the frame is sink_error
        clock.advance(byNs: 100_000_000)
        try sink.write(frame(2))
        sink.pump()  // 100 ms < 250 ms backoff: no reopen attempt
        #expect(device.with { $0.opens } == 1)
        device.with { $0.unplugged = false }
        clock.advance(byNs: 200_000_000)
        try sink.write(frame(3))
        sink.pump()  // 300 ms: reopened, the frame written
        #expect(device.with { $0.opens } == 2)
        #expect(trace.drops.map(\.frame) == [1, 2] && trace.drops.allSatisfy { $0.reason == .sinkError })
        #expect(sink.framesWritten.load(ordering: .relaxed) == 2)
        #expect(device.with { $0.format } == .yuv420, "the reopened device gets the format first negotiated")
    }

    @Test func aFasterDeviceGetsEachFrameQueuedWithItsRepeat() throws {
        let device = ScriptedV4L2Output()  // its output runs at 60 fps whatever S_PARM asks (vivid's HDMI output)
        device.with { $0.fixedRate = true }
        let trace = DropRecorder()
        let sink = try makeSink(device, format: .yuyv, trace: trace)
        #expect(sink.repeatsPerFrame == 1, "30 fps frames on a 60 Hz device: each shown for two ticks")
        try sink.write(frame(0))
        sink.pump()
        sink.pump()  // nothing pending: nothing more is queued (no timer repeats)
        #expect(device.with { $0.shown.count } == 2, "the frame and its repeat are queued together")
        #expect(
            device.with { $0.shown[0] == $0.shown[1] && $0.shownIndices[0] != $0.shownIndices[1] },
            "the repeat is a copy of the same image in another buffer")
        #expect(sink.framesWritten.load(ordering: .relaxed) == 1 && sink.framesRepeated.load(ordering: .relaxed) == 1)
        // The consumer took nothing: two buffers are free, the frame takes one, its repeat would take the last.
        try sink.write(frame(1))
        sink.pump()
        #expect(
            device.with { $0.shown.count } == 3 && sink.framesRepeated.load(ordering: .relaxed) == 1,
            "a repeat never takes the last free buffer")
        try sink.write(frame(2))
        sink.pump()
        #expect(sink.framesWritten.load(ordering: .relaxed) == 3, "the kept buffer took the next frame")
        #expect(trace.drops.isEmpty, "repeats never cost a frame")
        device.consume(3)
        try sink.write(frame(3))
        sink.pump()
        #expect(device.with { d in d.shown.count == 6 && d.shown[4] == d.shown[5] && d.shown[4] != d.shown[3] })
        #expect(
            sink.notes.contains { $0.contains("faster than the 30 fps written: each frame is queued with repeats") })
    }

    @Test func aDeviceAtTheFramesRateGetsNoRepeats() throws {
        let device = ScriptedV4L2Output()  // S_PARM sets 30 fps
        let sink = try makeSink(device, format: .yuyv, trace: DropRecorder())
        #expect(sink.repeatsPerFrame == 0)
        for n in 0..<3 {
            try sink.write(frame(n))
            sink.pump()
            device.consume()
        }
        #expect(device.with { $0.shown.count } == 3 && sink.framesRepeated.load(ordering: .relaxed) == 0)
    }

    @Test func unsuitableDevicesFailAtStartWithTheirPath() {
        let capture = ScriptedV4L2Output()
        capture.deviceCaps = UInt32(V4L2_CAP_VIDEO_CAPTURE) | UInt32(V4L2_CAP_STREAMING)
        let missing = ScriptedV4L2Output()
        missing.unplugged = true
        let noFormat = ScriptedV4L2Output()
        noFormat.formats = [.rgb24]
        for (device, text) in [
            (capture, "not a video output device"), (missing, "cannot open output device: ENODEV"),
            (noFormat, "no output format colorcam writes (accepts: RGB3)")
        ] {
            do {
                _ = try makeSink(device)
                Issue.record("opened a device that should fail with '\(text)'")
            } catch let error as StreamError {
                #expect(error.kind == .unavailable)
                #expect(
                    error.description.hasPrefix("/dev/video7: ") && error.description.contains(text),
                    "\(error.description)")
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }
}
