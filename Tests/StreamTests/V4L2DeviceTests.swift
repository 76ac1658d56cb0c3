import CV4L2
import ColorcamCore
import Testing

@testable import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// Negotiation, lifecycle and the ioctl funnel, against a scripted device.
@Suite struct V4L2DeviceTests {
    @Test func prefersAFormatThatNeedsNoArithmetic() throws {
        let dev = ScriptedV4L2 { $0.formats = [.rgb24, V4L2PixelFormat(fourCC: "BA81")!, .nv12, .yuyv] }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        let config = try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, framesPerSecond: 30))
        #expect(config.pixelFormat == .yuyv)
        #expect(device.state == .configured)
    }

    @Test func picksNV12WhenNoPacked422IsOffered() throws {
        let dev = ScriptedV4L2 { $0.formats = [V4L2PixelFormat(fourCC: "BA81")!, .rgb24, .nv12] }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        let config = try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, framesPerSecond: 30))
        #expect(config.pixelFormat == .nv12)
    }

    @Test func refusesADeviceWithOnlyUnconvertibleFormats() throws {
        let dev = ScriptedV4L2 { $0.formats = [V4L2PixelFormat(fourCC: "BA81")!, V4L2PixelFormat(fourCC: "HSV3")!] }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        let error = #expect(throws: StreamError.self) {
            try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, framesPerSecond: 30))
        }
        #expect(error?.kind == .unavailable)
        #expect(error?.description == "/dev/video9: no format colorcam can convert (offers: BA81 HSV3)")
    }

    @Test func refusesARequestedFormatTheDeviceLacks() throws {
        let dev = ScriptedV4L2 { $0.formats = [.yuyv] }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        let error = #expect(throws: StreamError.self) {
            try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, pixelFormat: .nv12, framesPerSecond: 30))
        }
        #expect(error?.description == "/dev/video9: format NV12 not offered (offers: YUYV)")
    }

    @Test func readsBackTheSizeTheDriverSetAndSaysSo() throws {
        let dev = ScriptedV4L2 { $0.sizes = [(8, 4), (16, 8)] }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        let config = try device.configure(V4L2CaptureRequest(widthPx: 15, heightPx: 9, framesPerSecond: 30))
        #expect(config.widthPx == 16 && config.heightPx == 8)
        #expect(config.notes.contains("driver set 16x8 instead of 15x9"))
    }

    @Test(arguments: [
        // offered fps, requested fps → device fps chosen
        ([60.0, 30, 15], 30.0, 30.0),
        ([60.0, 30, 15], 25.0, 30.0),  // slowest rate that is at least the requested one
        ([60.0, 30, 15], 20.0, 30.0),
        ([60.0, 30, 15], 10.0, 15.0),
        ([60.0], 30.0, 60.0),  // only faster: decimate
        ([15.0, 5], 30.0, 15.0),  // only slower: the fastest
        ([12.5, 25], 12.5, 12.5)
    ])
    func choosesTheSlowestRateThatIsFastEnough(offered: [Double], requested: Double, expected: Double) {
        let list = offered.map { V4L2Device.fraction(forFramesPerSecond: $0) }
        let chosen = V4L2Device.chooseInterval(.discrete(list), framesPerSecond: requested)
        #expect(chosen.framesPerSecond == expected)
    }

    @Test func setsAndVerifiesTheFrameRateAndFlagsDecimation() throws {
        let dev = ScriptedV4L2 {
            $0.intervals = [V4L2Fraction(1, 60)]; $0.timePerFrame = V4L2Fraction(1, 5)
        }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        let config = try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, framesPerSecond: 30))
        #expect(config.deviceInterval == V4L2Fraction(1, 60))
        #expect(config.isDecimating)
        #expect(config.notes == ["device runs at 60 fps, faster than the requested 30 fps: decimating to 30 fps"])
        #expect(dev.calls.contains("VIDIOC_S_PARM"))
        #expect(dev.calls.last == "VIDIOC_G_PARM")  // read back after setting
    }

    @Test func aDriverThatCannotSetItsRateIsNoted() throws {
        let dev = ScriptedV4L2 {
            $0.canSetRate = false; $0.timePerFrame = V4L2Fraction(1, 30)
        }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        let config = try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, framesPerSecond: 30))
        #expect(!dev.calls.contains("VIDIOC_S_PARM"))
        #expect(config.notes == ["driver cannot set its frame rate (no V4L2_CAP_TIMEPERFRAME)"])
        #expect(!config.isDecimating)
    }

    @Test func lifecycleMapsQueuesAndReleasesEveryBuffer() throws {
        let dev = ScriptedV4L2()
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        #expect(device.state == .opened)
        try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, framesPerSecond: 30))
        try device.startStreaming(bufferCount: 3)
        #expect(device.state == .streaming)
        #expect(dev.calls.filter { $0 == "VIDIOC_QBUF" }.count == 3)
        #expect(dev.calls.last == "VIDIOC_STREAMON")
        try device.stopStreaming()
        #expect(device.state == .configured)
        device.close()
        device.close()
        #expect(device.state == .closed)
        dev.with { s in
            #expect(s.mapped == 3 && s.unmapped == 3)
            #expect(s.closed == 1)
        }
        #expect(dev.calls.suffix(2) == ["VIDIOC_STREAMOFF", "VIDIOC_REQBUFS"])
    }

    @Test func theFunnelRetriesEINTR() throws {
        let dev = ScriptedV4L2 { $0.inject["VIDIOC_S_FMT"] = [EINTR, EINTR] }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, framesPerSecond: 30))
        #expect(dev.calls.filter { $0 == "VIDIOC_S_FMT" }.count == 3)
    }

    @Test func aFailingRequestIsNamedWithItsErrno() throws {
        let dev = ScriptedV4L2 { $0.inject["VIDIOC_STREAMON"] = [EINVAL] }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        try device.configure(V4L2CaptureRequest(widthPx: 8, heightPx: 4, framesPerSecond: 30))
        let error = #expect(throws: StreamError.self) { try device.startStreaming(bufferCount: 2) }
        #expect(error?.kind == .unavailable)
        #expect(error?.description == "/dev/video9: VIDIOC_STREAMON failed: EINVAL (Invalid argument)")
        #expect(device.state == .configured)
        dev.with { #expect($0.mapped == $0.unmapped) }  // nothing leaked on the failure path
    }

    @Test func aMissingNodeIsUnavailable() {
        let dev = ScriptedV4L2()
        let error = #expect(throws: StreamError.self) { try V4L2Device(path: "/dev/missing0", syscalls: dev.syscalls) }
        #expect(error?.kind == .unavailable)
        #expect(error?.description == "/dev/missing0: cannot open device: ENOENT (No such file or directory)")
    }

    @Test func anOutputOnlyOrMultiplanarNodeIsRefused() {
        let output = ScriptedV4L2 { $0.deviceCaps = UInt32(V4L2_CAP_VIDEO_OUTPUT) | UInt32(V4L2_CAP_STREAMING) }
        let e1 = #expect(throws: StreamError.self) { try V4L2Device(path: "/dev/video1", syscalls: output.syscalls) }
        #expect(e1?.description == "/dev/video1: not a capture device (scripted: no video capture)")
        let mplane = ScriptedV4L2 {
            $0.deviceCaps = UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE) | UInt32(V4L2_CAP_STREAMING)
        }
        let e2 = #expect(throws: StreamError.self) { try V4L2Device(path: "/dev/video2", syscalls: mplane.syscalls) }
        #expect(e2?.description.contains("only multi-planar capture") == true)
        #expect(output.with { $0.closed } == 1)
    }

    @Test func enumeratesFormatsSizesAndIntervals() throws {
        let dev = ScriptedV4L2 {
            $0.formats = [.yuyv, .nv12]
            $0.sizes = [(320, 180), (640, 360)]
            $0.intervals = [V4L2Fraction(1, 60), V4L2Fraction(1, 30), V4L2Fraction(2, 25)]
        }
        let device = try V4L2Device(path: "/dev/video9", syscalls: dev.syscalls)
        #expect(try device.formats().map(\.pixelFormat) == [.yuyv, .nv12])
        #expect(try device.frameSizes(for: .yuyv)?.description == "320x180 640x360")
        #expect(try device.frameIntervals(for: .yuyv, widthPx: 320, heightPx: 180).description == "12.5 30 60 fps")
    }

    @Test func fourCCsRoundTrip() {
        #expect(V4L2PixelFormat(fourCC: "YUYV") == .yuyv)
        #expect(V4L2PixelFormat.yuyv.rawValue == 0x5659_5559)
        #expect(V4L2PixelFormat.y16.fourCC == "Y16 ")
        #expect(V4L2PixelFormat(fourCC: "TOOLONG") == nil)
    }
}
