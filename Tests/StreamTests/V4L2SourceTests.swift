import ColorcamCore
import Synchronization
import Testing

@testable import Stream

#if canImport(Glibc)
    import Glibc
#endif

/// Collects the notes a source would print on stderr.
final class NoteLog: @unchecked Sendable {
    // Invariant: `lines` is only touched under the Mutex.
    private let lines = Locked<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// `V4L2Source` per-frame behaviour against a scripted device: sequence, timestamps, gaps, decimation, failures.
@Suite struct V4L2SourceTests {
    func makeSource(
        _ dev: ScriptedV4L2, fps: Double = 30, deviceFps: Double? = nil,
        clock: MonotonicClock = ManualClock(startNs: 7), notes: NoteLog = NoteLog()
    ) throws -> V4L2Source {
        try V4L2Source(
            path: "/dev/video9",
            request: V4L2CaptureRequest(
                widthPx: 8, heightPx: 4, framesPerSecond: fps,
                deviceFramesPerSecond: deviceFps),
            clock: clock, bufferCount: 3, stallTimeoutMs: 300, syscalls: dev.syscalls, warn: notes.add)
    }

    /// Reads frames until the scripted device stalls (its frames ran out), returning (sequence, info) per frame.
    func drain(_ source: V4L2Source, max: Int = 100) -> [(sequence: Int, info: V4L2FrameInfo, tsNs: Int64)] {
        let frame = FrameBuffer(geometry: source.geometry)
        var out: [(Int, V4L2FrameInfo, Int64)] = []
        while out.count < max, (try? source.readFrame(into: frame)) == true {
            out.append((frame.sequence, source.lastFrameInfo, frame.captureTimestampNs))
        }
        return out
    }

    @Test func framesCarryTheDriverSequenceAndNoGaps() throws {
        let dev = ScriptedV4L2 { $0.frames = ScriptedV4L2.steadyFrames(6, first: 100) }
        let frames = drain(try makeSource(dev))
        #expect(frames.map(\.sequence) == [100, 101, 102, 103, 104, 105])
        #expect(frames.allSatisfy { $0.info == V4L2FrameInfo() })
        // Every buffer went back to the driver right away: 3 initial QBUFs + one per frame.
        #expect(dev.calls.filter { $0 == "VIDIOC_QBUF" }.count == 3 + 6)
    }

    @Test func sequenceGapsAreReportedOnTheNextFrame() throws {
        let dev = ScriptedV4L2 {
            $0.frames = [0, 1, 4, 5, 9].map { ScriptedFrame(sequence: $0, timestampNs: 1_000_000 * Int64($0 + 1)) }
        }
        let frames = drain(try makeSource(dev))
        #expect(frames.map(\.sequence) == [0, 1, 4, 5, 9])
        #expect(frames.map(\.info.skippedSequenceCount) == [0, 0, 2, 0, 3])
    }

    @Test func sequenceWrapKeepsIncreasing() throws {
        let dev = ScriptedV4L2 {
            $0.frames = [UInt32.max - 1, UInt32.max, 0, 2].enumerated().map {
                ScriptedFrame(sequence: $0.element, timestampNs: 1_000_000 * Int64($0.offset + 1))
            }
        }
        let frames = drain(try makeSource(dev))
        let base = Int(UInt32.max) - 1
        #expect(frames.map(\.sequence) == [base, base + 1, base + 2, base + 4])
        #expect(frames.map(\.info.skippedSequenceCount) == [0, 0, 0, 1])
    }

    @Test func driverTimestampsMapOntoASystemClock() throws {
        let now = SystemClock.rawNs() / 1000 * 1000  // whole µs, as a V4L2 timeval carries them
        let dev = ScriptedV4L2 {
            $0.frames = ScriptedV4L2.steadyFrames(3, startNs: now - 50_000_000, intervalNs: 33_333_000)
        }
        let clock = SystemClock()
        let source = try makeSource(dev, clock: clock)
        let frames = drain(source)
        #expect(source.timestampSource == .driver)
        // The pipeline clock's origin is `clock`'s creation: driver ns − (raw now − pipeline now).
        let offset = clock.nowNs() - SystemClock.rawNs()
        for (i, f) in frames.enumerated() {
            let expected = now - 50_000_000 + Int64(i) * 33_333_000 + offset
            #expect(abs(f.tsNs - expected) < 1_000_000, "frame \(i): \(f.tsNs) vs \(expected)")
        }
        #expect(frames[2].tsNs - frames[1].tsNs == 33_333_000)  // µs resolution of the V4L2 timeval
    }

    @Test func nonMonotonicDriverTimestampsFallBackToTheClockAtDequeue() throws {
        let dev = ScriptedV4L2 {
            $0.frames = ScriptedV4L2.steadyFrames(2).map {
                var f = $0; f.monotonic = false; return f
            }
        }
        let notes = NoteLog()
        let clock = SystemClock()
        let source = try makeSource(dev, clock: clock, notes: notes)
        let frame = FrameBuffer(geometry: source.geometry)
        let beforeNs = clock.nowNs()
        _ = try source.readFrame(into: frame)
        let afterNs = clock.nowNs()
        #expect(frame.captureTimestampNs >= beforeNs && frame.captureTimestampNs <= afterNs)
        #expect(source.timestampSource == .dequeue)
        #expect(
            notes.all == [
                "/dev/video9: driver timestamps are not CLOCK_MONOTONIC: using the clock at VIDIOC_DQBUF instead"
            ])
        _ = try source.readFrame(into: frame)
        #expect(notes.all.count == 1)  // said once
        #expect(frame.sourceTimestampNs == frame.captureTimestampNs)
    }

    @Test func aManualClockIsReadAtDequeue() throws {
        let dev = ScriptedV4L2 { $0.frames = ScriptedV4L2.steadyFrames(2) }
        let clock = ManualClock(startNs: 1234)
        let source = try makeSource(dev, clock: clock)
        let frames = drain(source)
        #expect(source.timestampSource == .dequeue)
        #expect(frames.map(\.tsNs) == [1234, 1234])
    }

    @Test func aSixtyFpsDeviceIsDecimatedToThirtyAndSaysSoOnce() throws {
        let dev = ScriptedV4L2 {
            $0.intervals = [V4L2Fraction(1, 60)]
            $0.frames = ScriptedV4L2.steadyFrames(12, intervalNs: 16_666_667)
        }
        let notes = NoteLog()
        let source = try makeSource(dev, fps: 30, notes: notes)
        let frames = drain(source)
        #expect(frames.map(\.sequence) == [0, 2, 4, 6, 8, 10])
        #expect(frames.allSatisfy { $0.info.isDecimating && $0.info.skippedSequenceCount == 0 })
        #expect(
            notes.all == ["/dev/video9: device runs at 60 fps, faster than the requested 30 fps: decimating to 30 fps"])
        #expect(source.frameRate.numerator == 30 && source.frameRate.denominator == 1)
        #expect(source.nominalFrameIntervalNs == 33_333_333)
    }

    @Test func decimationStaysEvenAcrossADriverGap() throws {
        let dev = ScriptedV4L2 {
            $0.intervals = [V4L2Fraction(1, 60)]
            $0.frames = [0, 1, 2, 3, 5, 6, 7, 8].map {
                ScriptedFrame(sequence: $0, timestampNs: 16_666_667 * Int64($0 + 1))
            }
        }
        let frames = drain(try makeSource(dev, fps: 30))
        // Slot of 4 is missing, so 5 (same slot) stands in for it; the gap (4) is reported on it.
        #expect(frames.map(\.sequence) == [0, 2, 5, 6, 8])
        #expect(frames.map(\.info.skippedSequenceCount) == [0, 0, 1, 0, 0])
    }

    @Test func fortyToThirtyKeepsThreeOfFour() throws {
        let dev = ScriptedV4L2 {
            $0.intervals = [V4L2Fraction(1, 40)]
            $0.frames = ScriptedV4L2.steadyFrames(8, intervalNs: 25_000_000)
        }
        let frames = drain(try makeSource(dev, fps: 30))
        #expect(frames.map(\.sequence) == [0, 2, 3, 4, 6, 7])
    }

    @Test func aDeviceFasterThanItClaimsIsCaughtByMeasurement() throws {
        // G_PARM says 30, but buffers arrive every 16.7 ms (the "60 fps bug").
        let dev = ScriptedV4L2 { $0.frames = ScriptedV4L2.steadyFrames(40, intervalNs: 16_666_667) }
        let notes = NoteLog()
        let source = try makeSource(dev, fps: 30, clock: SystemClock(), notes: notes)
        let frames = drain(source)
        #expect(frames.prefix(31).map(\.sequence) == Array(0...30))
        #expect(frames.dropFirst(31).allSatisfy { $0.info.isDecimating })
        #expect(frames.dropFirst(31).map(\.sequence) == [32, 34, 36, 38])
        #expect(notes.all == ["/dev/video9: device delivers 60 fps although it reported 30: decimating to 30 fps"])
    }

    @Test func errorFlaggedAndShortBuffersAreCountedAsDecodeErrors() throws {
        let dev = ScriptedV4L2 {
            var frames = ScriptedV4L2.steadyFrames(4)
            frames[1].errorFlag = true
            frames[2].bytesUsed = 10
            $0.frames = frames
        }
        let frames = drain(try makeSource(dev))
        #expect(frames.map(\.sequence) == [0, 3])
        #expect(frames.map(\.info.decodeErrorCount) == [0, 2])
        #expect(frames.map(\.info.skippedSequenceCount) == [0, 0])
    }

    @Test func eintrOnDequeueIsRetried() throws {
        let dev = ScriptedV4L2 {
            $0.frames = ScriptedV4L2.steadyFrames(2)
            $0.inject["VIDIOC_DQBUF"] = [EINTR, EINTR]
        }
        let frames = drain(try makeSource(dev))
        #expect(frames.map(\.sequence) == [0, 1])
        #expect(dev.calls.filter { $0 == "VIDIOC_DQBUF" }.count >= 4)
    }

    @Test func aDeviceLostMidStreamIsUnavailableAndNamesTheRequest() throws {
        let dev = ScriptedV4L2 {
            $0.frames = ScriptedV4L2.steadyFrames(3); $0.disconnectAtEnd = true
        }
        let source = try makeSource(dev)
        let frame = FrameBuffer(geometry: source.geometry)
        for _ in 0..<3 { #expect(try source.readFrame(into: frame)) }
        let error = #expect(throws: StreamError.self) { try source.readFrame(into: frame) }
        #expect(error?.kind == .unavailable)
        #expect(error?.kind.exitCode == 69)
        #expect(error?.description == "/dev/video9: frame 3: VIDIOC_DQBUF failed: ENODEV (No such device)")
    }

    @Test func aFailingRequeueIsUnavailableToo() throws {
        let dev = ScriptedV4L2 {
            $0.frames = ScriptedV4L2.steadyFrames(3)
            $0.inject["VIDIOC_QBUF"] = [0, 0, 0, EIO]  // the three initial QBUFs pass, the first requeue fails
        }
        let source = try makeSource(dev)
        let frame = FrameBuffer(geometry: source.geometry)
        let error = #expect(throws: StreamError.self) { try source.readFrame(into: frame) }
        #expect(error?.description == "/dev/video9: frame 1: VIDIOC_QBUF failed: EIO (Input/output error)")
    }

    @Test func aStalledDeviceTimesOut() throws {
        let dev = ScriptedV4L2 { $0.frames = [] }
        let source = try makeSource(dev)
        let frame = FrameBuffer(geometry: source.geometry)
        let error = #expect(throws: StreamError.self) { try source.readFrame(into: frame) }
        #expect(error?.description == "/dev/video9: frame 0: VIDIOC_DQBUF: no frame within 300 ms (device stalled)")
    }

    @Test func pixelsAreConvertedFromTheMappedBuffer() throws {
        // 8x4 YUYV: every row Y=10+x, Cb=200, Cr=50.
        var bytes: [UInt8] = []
        for _ in 0..<4 { for pair in 0..<4 { bytes += [UInt8(10 + 2 * pair), 200, UInt8(11 + 2 * pair), 50] } }
        let dev = ScriptedV4L2 { $0.frames = [ScriptedFrame(sequence: 0, timestampNs: 1000, bytes: bytes)] }
        let source = try makeSource(dev)
        #expect(source.geometry == FrameGeometry(widthPx: 8, heightPx: 4, chroma: .yuv422))
        let frame = FrameBuffer(geometry: source.geometry)
        #expect(try source.readFrame(into: frame))
        #expect(Array(frame.luma.prefix(8)) == [10, 11, 12, 13, 14, 15, 16, 17])
        #expect(frame.cb.allSatisfy { $0 == 200 } && frame.cr.allSatisfy { $0 == 50 })
    }

    @Test func aCameraCannotRewind() throws {
        let source = try makeSource(ScriptedV4L2())
        #expect(!source.canRewind)
        let error = #expect(throws: StreamError.self) { try source.rewind() }
        #expect(error?.kind == .usage)
    }
}
