import ColorcamCore
import Foundation
import Synchronization

/// A `FrameSink` that shows the output frames on a V4L2 video output node — a virtual camera (v4l2loopback) that
/// OBS, a video call or a browser pick like a webcam.
///
/// The pipeline never waits for it: `write` copies the frame into a newest-wins slot and wakes the sink's own writer
/// thread, which converts it into a free device buffer and queues it. A frame the device cannot take is dropped *for
/// this sink only* (the other outputs still get it) and traced on the output track: `sink_busy` when every buffer
/// is still held by the consumer or the writer was still busy with the previous frame (a newer frame replaced it),
/// `sink_error` when the device refused the buffer or is gone. A device that fails is closed and reopened with
/// backoff (`initialBackoffMs` doubling to `maxBackoffMs`), like a lost camera; frames meanwhile are `sink_error`.
///
/// Pacing: the frames arrive at the pipeline's output rate (real-time pace), and the node's `timeperframe` is set
/// to the source rate. A device that keeps a faster rate of its own (vivid's HDMI output at 59.94 Hz) retires one
/// queued buffer per tick of its own clock, so each frame is queued together with its repeats (`repeatsPerFrame`,
/// `framesRepeated`: one for 30 fps on 59.94 Hz): the frame then stays on the device for at least its whole
/// interval even when frames reach the device unevenly (two within one tick would otherwise leave the first on it
/// for a single tick, which a reader at the device's rate can miss). When the source pauses, nothing is queued:
/// V4L2 output drivers hold the last buffer until another one is queued (vivid retires a buffer only once a newer
/// one is pending), so the last frame stays on the device.
///
/// Lifecycle: `init` opens and configures the device (a missing or unsuitable device fails here, exit 69) and starts
/// the writer thread → `write`… → `finish` (delivers the last pending frame, stops the thread, closes the device) or
/// `abort`. Threading: `write`/`finish`/`abort` from the pipeline's output thread; the counters from any thread.
/// `init(…, startsWriterThread: false)` leaves the writer to the caller's `pump()` calls (deterministic tests).
public final class V4L2OutputSink: FrameSink, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `pending`, `pendingFull`, `stopping` are guarded by `condition`; `device`,
    // `working`, `nextRetryNs`, `backoffMs` are touched only by the writer (thread or `pump` caller).
    public struct Options: Sendable {
        public var path: String
        /// A specific output format, or nil: the first of `V4L2OutputConverter.offeredFormats` the node accepts.
        public var pixelFormat: V4L2PixelFormat?
        /// mmap buffers: one the consumer shows, two frames with their repeats queued behind it (a consumer whose
        /// clock runs a tick late still gets each frame's repeat), one always kept for the next frame (a repeat never
        /// takes the last).
        public var bufferCount = 6
        public var initialBackoffMs = 250
        public var maxBackoffMs = 2_000
        public init(path: String, pixelFormat: V4L2PixelFormat? = nil) {
            self.path = path
            self.pixelFormat = pixelFormat
        }
    }

    public let options: Options
    private let geometry: FrameGeometry
    private let frameRate: V4L2Fraction
    private let trace: TraceSink
    private let clock: MonotonicClock
    private let syscalls: V4L2Syscalls
    private let condition = NSCondition()
    private var pending: FrameBuffer
    private var pendingFull = false
    private var stopping = false
    private var working: FrameBuffer
    private var device: V4L2OutputDevice?
    private var nextRetryNs: Int64 = 0
    private var backoffMs: Int
    private var writer: Thread?
    private let writerDone = DispatchSemaphore(value: 0)
    private var finished = false

    /// Frames queued to the device.
    public let framesWritten = Atomic<Int>(0)
    /// Copies of a frame queued right behind it for a faster device (not counted in `framesWritten`).
    public let framesRepeated = Atomic<Int>(0)
    /// Frames dropped for this sink: the consumer held every buffer, or a newer frame replaced a pending one.
    public let framesBusy = Atomic<Int>(0)
    /// Frames dropped because the device refused them or was gone.
    public let framesFailed = Atomic<Int>(0)
    /// The format negotiated with the device first opened.
    public let format: V4L2PixelFormat
    /// What differed from the request when the device was opened, one line each.
    public let notes: [String]

    /// - Parameters:
    ///   - frameRate: frames per second as a fraction (`numerator / denominator` fps), set as the node's interval.
    /// - Throws: `StreamError` `.unavailable` (exit 69) when the node is missing or cannot take these frames,
    ///   `.usage` for a format colorcam does not write.
    public init(
        options: Options, geometry: FrameGeometry, framesPerSecond: (numerator: Int, denominator: Int),
        trace: TraceSink, clock: MonotonicClock, syscalls: V4L2Syscalls = .live,
        startsWriterThread: Bool = true
    ) throws {
        self.options = options
        self.geometry = geometry
        frameRate = V4L2Fraction(max(framesPerSecond.denominator, 1), max(framesPerSecond.numerator, 1))
        self.trace = trace
        self.clock = clock
        self.syscalls = syscalls
        backoffMs = options.initialBackoffMs
        let opened = try V4L2OutputDevice(
            path: options.path, geometry: geometry, frameRate: frameRate,
            pixelFormat: options.pixelFormat, bufferCount: options.bufferCount,
            syscalls: syscalls)
        device = opened
        format = opened.format
        notes = opened.notes
        pending = FrameBuffer(geometry: geometry)
        working = FrameBuffer(geometry: geometry)
        if startsWriterThread {
            let thread = Thread { [self] in
                while pump(waiting: true) {}
                writerDone.signal()
            }
            thread.name = "colorcam-v4l2-out"
            thread.stackSize = 1 << 20
            writer = thread
            thread.start()
        }
    }

    deinit { device?.close() }

    public func write(_ frame: FrameBuffer) throws {
        precondition(frame.geometry == geometry, "V4L2 output opened for \(geometry), got a \(frame.geometry) frame")
        condition.lock()
        if pendingFull {
            // The writer has not taken the previous frame yet: the newer one replaces it.
            framesBusy.add(1, ordering: .relaxed)
            trace.record(.drop(frame: pending.sequence, reason: .sinkBusy, atNs: clock.nowNs(), track: .output))
        }
        pending.copy(from: frame)
        pendingFull = true
        condition.signal()
        condition.unlock()
    }

    /// The writer's step: takes the pending frame (waiting for one when `waiting`) and delivers it.
    /// - Returns: false once the sink is stopping and nothing is pending (the writer thread then ends); with
    ///   `waiting: false`, also false when nothing was pending.
    @discardableResult
    public func pump(waiting: Bool = false) -> Bool {
        condition.lock()
        while !pendingFull && !stopping && waiting { condition.wait() }
        guard pendingFull else {
            condition.unlock()
            return false
        }
        swap(&pending, &working)
        pendingFull = false
        condition.unlock()
        deliver(working)
        return true
    }

    /// How many times each frame is queued again right behind itself: the device's ticks per frame interval, less
    /// one (1 for 30 fps frames on a 59.94 Hz device; 0 when the device is not faster by more than 1 %).
    public var repeatsPerFrame: Int {
        guard let interval = device?.frameInterval, interval.intervalNs > 0,
            interval.intervalNs * 101 < frameRate.intervalNs * 100
        else { return 0 }
        return Int((frameRate.intervalNs + interval.intervalNs / 2) / interval.intervalNs) - 1
    }

    private func deliver(_ frame: FrameBuffer) {
        let nowNs = clock.nowNs()
        if device == nil && nowNs >= nextRetryNs { reopen(nowNs: nowNs) }
        guard let device else {
            drop(frame, reason: .sinkError)
            return
        }
        do {
            if try device.submit(frame) {
                framesWritten.add(1, ordering: .relaxed)
                // A repeat never takes the last free buffer, which stays for the next frame; one that does not fit
                // is skipped (it is not a frame of the stream, so nothing is traced).
                for _ in 0..<repeatsPerFrame {
                    guard try device.resubmitLast(keepingFree: 1) else { break }
                    framesRepeated.add(1, ordering: .relaxed)
                }
            } else {
                drop(frame, reason: .sinkBusy)
            }
        } catch {
            lose(device, error)
            drop(frame, reason: .sinkError)
        }
    }

    private func lose(_ device: V4L2OutputDevice, _ error: Error) {
        Log.warning("v4l2 output lost: \(error); reopening in \(backoffMs) ms (frames meanwhile: sink_error)")
        device.close()
        self.device = nil
        nextRetryNs = clock.nowNs() + Int64(backoffMs) * 1_000_000
    }

    private func reopen(nowNs: Int64) {
        do {
            let reopened = try V4L2OutputDevice(
                path: options.path, geometry: geometry, frameRate: frameRate,
                pixelFormat: options.pixelFormat ?? format,
                bufferCount: options.bufferCount, syscalls: syscalls)
            device = reopened
            backoffMs = options.initialBackoffMs
            Log.info("v4l2 output \(options.path) is back (\(reopened.format))")
        } catch {
            backoffMs = min(options.maxBackoffMs, backoffMs * 2)
            nextRetryNs = nowNs + Int64(backoffMs) * 1_000_000
            Log.debug("v4l2 output still unavailable: \(error); next try in \(backoffMs) ms")
        }
    }

    private func drop(_ frame: FrameBuffer, reason: DropReason) {
        if reason == .sinkBusy {
            framesBusy.add(1, ordering: .relaxed)
        } else {
            framesFailed.add(1, ordering: .relaxed)
        }
        trace.record(.drop(frame: frame.sequence, reason: reason, atNs: clock.nowNs(), track: .output))
    }

    /// Delivers the last pending frame, stops the writer, closes the device. Idempotent.
    public func finish() throws { stop() }

    /// As `finish`: a device output has no partial file to remove.
    public func abort() { stop() }

    private func stop() {
        guard !finished else { return }
        finished = true
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        if writer != nil {
            writerDone.wait()
            writer = nil
        } else {
            while pump() {}
        }
        device?.close()
        device = nil
    }
}
