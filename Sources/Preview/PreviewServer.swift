import ColorcamCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Settings for `PreviewServer`. Times are nanoseconds on the server's clock.
public struct PreviewServerConfig: Sendable {
    /// Where to listen. Loopback by default; any other address is reachable from other machines, and `start`
    /// warns when such an address has no `accessToken`.
    public var listenAddress: SocketAddress
    /// The token every request except `/healthz` must carry (see `PreviewAccess`), or nil for an open preview.
    /// Must pass `PreviewAccess.problem(with:)` (16-256 characters from `A-Z a-z 0-9 - . _ ~`).
    public var accessToken: String?
    /// Open connections beyond this are answered 503 and closed at once.
    public var maxConnections: Int
    /// A request head must arrive whole within this time after its first byte, else 408 and close (slowloris).
    public var headerTimeoutNs: Int64
    /// An idle keep-alive connection is closed after this time.
    public var idleTimeoutNs: Int64
    /// A connection whose sends make no progress for this long is closed (a reader that stopped reading).
    public var writeStallTimeoutNs: Int64
    /// How long `/snapshot.jpg` waits for a first frame before answering 503.
    public var snapshotWaitNs: Int64
    /// Most JPEGs encoded per second for streams (never more than one per published frame).
    public var maxStreamFps: Double
    /// JPEG quality 1...100.
    public var jpegQuality: Int32
    public var parserLimits: HTTPRequestParser.Limits
    /// `SO_SNDBUF` of each client socket (the kernel doubles it). Bounds the bytes queued in the kernel for a slow
    /// client — beyond it the server skips frames for that client — so a slow reader sees recent frames, not a
    /// backlog. 64 KiB holds two or three 640×480 JPEGs.
    public var socketSendBufferBytes: Int32

    public init(
        listenAddress: SocketAddress = SocketAddress("127.0.0.1:8080")!, maxConnections: Int = 256,
        headerTimeoutNs: Int64 = 5_000_000_000, idleTimeoutNs: Int64 = 30_000_000_000,
        writeStallTimeoutNs: Int64 = 60_000_000_000, snapshotWaitNs: Int64 = 2_000_000_000,
        maxStreamFps: Double = 30, jpegQuality: Int32 = 80,
        parserLimits: HTTPRequestParser.Limits = HTTPRequestParser.Limits(),
        socketSendBufferBytes: Int32 = 64 * 1024, accessToken: String? = nil
    ) {
        self.listenAddress = listenAddress
        self.accessToken = accessToken
        self.maxConnections = maxConnections
        self.headerTimeoutNs = headerTimeoutNs
        self.idleTimeoutNs = idleTimeoutNs
        self.writeStallTimeoutNs = writeStallTimeoutNs
        self.snapshotWaitNs = snapshotWaitNs
        self.maxStreamFps = maxStreamFps
        self.jpegQuality = jpegQuality
        self.parserLimits = parserLimits
        self.socketSendBufferBytes = socketSendBufferBytes
    }
}

/// The live preview's HTTP/1.1 server: `/` (page), `/stream.mjpg`, `/snapshot.jpg`, `/stats.json`, `/metrics`,
/// `/healthz`. With `config.accessToken` set, every path but `/healthz` needs the token (cookie from a
/// `/?token=…` login, or `Authorization: Bearer`), else 401; see `PreviewAccess`.
///
/// One event-loop thread runs `poll(2)` over non-blocking sockets (no thread per client), accepts, parses, encodes
/// JPEGs and writes. The pipeline feeds it through `publish(frame:overlays:stats:)`, which copies the frame into a
/// triple buffer and wakes the loop; it never blocks on clients and allocates nothing per frame.
///
/// Lifecycle: `init` → `start()` (binds, starts the loop) → `stop()` (closes everything, joins the thread).
/// Threading: `publish` from one thread (the pipeline's output thread); `setHealth`, `metrics` and `stop` from any.
///
/// ```swift
/// let server = try PreviewServer(config: PreviewServerConfig(), clock: SystemClock())
/// try server.start()
/// server.publish(frame: frame, overlays: quads, stats: PreviewStats(outputFps: 30, lagMs: 41, model: "m.onnx"))
/// ```
public final class PreviewServer: @unchecked Sendable {
    // Invariant for @unchecked Sendable: everything the loop thread shares lives in `shared` (Sendable: Mutex,
    // Atomics, lets). `thread`, `finished` and `boundAddress` are set only by `start`/`stop`, which must not run
    // concurrently with each other (checked by `running`'s compare-exchange).

    let shared: PreviewShared
    private let running = Atomic<Bool>(false)
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    public var config: PreviewServerConfig { shared.config }
    public var metrics: PreviewMetrics { shared.metrics }

    /// - Parameter warn: writes warnings (non-loopback address without a token, internal errors); stderr by default.
    /// - Throws: `PreviewError(.badData)` when `config.accessToken` is not a usable token,
    ///   `PreviewError(.unavailable)` when the wake-up pipe cannot be created.
    public init(
        config: PreviewServerConfig, metrics: PreviewMetrics = PreviewMetrics(),
        clock: any MonotonicClock = SystemClock(),
        warn: @escaping @Sendable (String) -> Void = PreviewServer.writeToStderr
    ) throws {
        shared = try PreviewShared(config: config, metrics: metrics, clock: clock, warn: warn)
    }

    deinit { stop() }

    public static let writeToStderr: @Sendable (String) -> Void = { message in
        let line = "colorcam: " + message + "\n"
        line.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) }
    }

    /// Serves `api` under `/photos` from now on (nil: stop). Any thread.
    public func serveAPI(_ api: (any PreviewAPI)?) { shared.api.withLock { $0 = api } }

    /// The address actually bound (its port is the kernel's choice when the config asked for port 0); nil before
    /// `start`.
    public private(set) var boundAddress: SocketAddress?

    /// Binds the listen address and starts the event-loop thread. Warns for a non-loopback address without an
    /// access token.
    /// - Throws: `PreviewError(.unavailable)` when the address cannot be bound, `.internalError` when already started.
    public func start() throws {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { throw PreviewError(.internalError, subject: "\(config.listenAddress)", "server already started") }
        do {
            let listener = try Socket.listen(on: config.listenAddress, backlog: 512)
            let bound = config.listenAddress.withPort(listener.localPort())
            boundAddress = bound
            if !bound.isLoopback && config.accessToken == nil {
                shared.warn(
                    "warning: preview listens on \(bound), reachable from other machines, with no access "
                        + "token: anyone who can connect sees the camera")
            }
            let loop = try PreviewEventLoop(server: shared, listener: listener)
            let finished = self.finished
            let box = LoopBox(loop)
            let thread = Thread {
                box.loop.run()
                finished.signal()
            }
            thread.name = "colorcam-preview"
            self.thread = thread
            thread.start()
        } catch {
            running.store(false, ordering: .releasing)
            throw error
        }
    }

    /// Stops the loop, closes every connection and the listener, and waits for the thread to end. Idempotent.
    public func stop() {
        guard thread != nil else { return }
        shared.stopRequested.store(true, ordering: .releasing)
        shared.wake()
        finished.wait()
        thread = nil
        running.store(false, ordering: .releasing)
    }

    /// Hands the newest output frame to the preview: copies `frame` (and up to 32 overlays and the stats) into
    /// the preview's triple buffer and wakes the event loop. Never blocks (not on clients, the encoder, or a lock:
    /// if the loop holds the hand-off lock at that instant the frame is skipped and counted in
    /// `colorcam_preview_publish_skipped_total`), never allocates except on the first frame and on a geometry
    /// change. Call from one thread (the output thread).
    public func publish(frame: FrameBuffer, overlays: UnsafeBufferPointer<PreviewQuad>, stats: PreviewStats) {
        if shared.exchange.publish(frame: frame, overlays: overlays, stats: stats) {
            shared.wake()
        } else {
            shared.metrics.previewPublishSkipped.increment()
        }
    }

    /// `publish` for callers holding an array of overlays (no copy of the array is made).
    public func publish(frame: FrameBuffer, overlays: [PreviewQuad], stats: PreviewStats) {
        overlays.withUnsafeBufferPointer { publish(frame: frame, overlays: $0, stats: stats) }
    }

    /// Sets what `/healthz` and the page report (e.g. `.deviceLost(reason: "/dev/video0: ENODEV")`). Any thread.
    public func setHealth(_ newHealth: PreviewHealth) {
        shared.health.withLock { $0 = newHealth }
        shared.wake()
    }

    /// Frames published so far.
    public var publishedFrames: Int { shared.publishedFrames }
}

/// What the server object and its loop thread share. Kept apart from `PreviewServer` so the loop never refers to
/// the server object itself (which may be deinitialising while `stop` joins the loop).
final class PreviewShared: Sendable {
    let config: PreviewServerConfig
    let metrics: PreviewMetrics
    let exchange = FrameExchange()
    let health = Locked<PreviewHealth>(.ok)
    let stopRequested = Atomic<Bool>(false)
    let clock: any MonotonicClock
    let warn: @Sendable (String) -> Void
    /// `config.accessToken`'s UTF-8 bytes (what requests are compared with), or nil for an open preview.
    let accessSecret: [UInt8]?
    /// The JSON API under `/photos` (`PreviewServer.serveAPI`), nil: none (those paths are 404).
    let api = Locked<(any PreviewAPI)?>(nil)
    /// A non-blocking pipe: the publisher writes a byte to `wakeWriteFD` to wake the loop, which polls and drains
    /// `wakeFD`. A full pipe means the loop is already due to wake, so a failed write is fine.
    let wakeFD: Int32
    let wakeWriteFD: Int32

    init(
        config: PreviewServerConfig, metrics: PreviewMetrics, clock: any MonotonicClock,
        warn: @escaping @Sendable (String) -> Void
    ) throws {
        self.config = config
        self.metrics = metrics
        self.clock = clock
        self.warn = warn
        if let token = config.accessToken, let problem = PreviewAccess.problem(with: token) {
            throw PreviewError(.badData, subject: "\(config.listenAddress)", "access token \(problem)")
        }
        accessSecret = config.accessToken.map { Array($0.utf8) }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw PreviewError(.unavailable, subject: "\(config.listenAddress)", "pipe failed", errno: errno)
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeFD = fds[0]
        wakeWriteFD = fds[1]
    }

    deinit {
        _ = Glibc.close(wakeFD)
        _ = Glibc.close(wakeWriteFD)
    }

    var publishedFrames: Int { exchange.publishedCount.load(ordering: .relaxed) }

    /// Wakes the loop (one byte into the pipe; never blocks).
    func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)
    }
}

/// Carries the event loop to its thread.
private final class LoopBox: @unchecked Sendable {
    // Invariant for @unchecked Sendable: the loop is handed over once, before its thread starts, and from then on
    // used only by that thread (`PreviewServer.start` keeps its reference only to release it after the join).
    let loop: PreviewEventLoop
    init(_ loop: PreviewEventLoop) { self.loop = loop }
}
