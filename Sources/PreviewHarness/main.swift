import ColorcamCore
import Preview

// preview-harness: runs the preview server with a synthetic frame publisher, for the preview's load and browser
// tests (tools/profile/preview_load.py, Tests/integration/test_preview_page.py). Not part of colorcam's CLI.
//
// usage: preview-harness [--listen 127.0.0.1:0] [--seconds 60] [--fps 30] [--size 640x480] [--device-lost-after S]
// Prints `listening on http://ADDR/` once serving, then on exit (time up, SIGINT or SIGTERM) one summary line:
// `summary published=N seconds=S fps=F worst_window_frames=W max_publish_us=U p99_publish_us=P` (U, P exclude
// frame 0, whose publish
// allocates the preview's frame slots).
#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String, code: Int32 = 64) -> Never {
    PreviewServer.writeToStderr("preview-harness: " + message)
    exit(code)
}

var options: [String: String] = [:]
var args = CommandLine.arguments.dropFirst()
while let name = args.popFirst() {
    guard name.hasPrefix("--"), let value = args.popFirst() else { fail("usage: see the comment in main.swift") }
    options[String(name.dropFirst(2))] = value
}
guard let address = SocketAddress(options["listen"] ?? "127.0.0.1:0") else { fail("bad --listen address") }
guard let seconds = Double(options["seconds"] ?? "60"), seconds > 0, seconds <= 3600 else {
    fail("--seconds must be in (0, 3600]")
}
guard let fps = Double(options["fps"] ?? "30"), fps >= 1, fps <= 240 else { fail("--fps must be in 1...240") }
let sizeParts = (options["size"] ?? "640x480").split(separator: "x").compactMap { Int($0) }
guard sizeParts.count == 2, (16...4096).contains(sizeParts[0]), (16...4096).contains(sizeParts[1]) else {
    fail("--size must be WxH, 16...4096 each")
}
let deviceLostAfterS = options["device-lost-after"].flatMap(Double.init)

installStopHandlers()
let clock = SystemClock()
let server: PreviewServer
do {
    server = try PreviewServer(config: PreviewServerConfig(listenAddress: address), clock: clock)
    try server.start()
} catch {
    fail("\(error)", code: 69)
}
print("listening on http://\(server.boundAddress!)/")
fflush(nil)

let geometry = FrameGeometry(widthPx: sizeParts[0], heightPx: sizeParts[1], chroma: .yuv420(.jpeg))
let frame = FrameBuffer(geometry: geometry)
let pattern = [UInt8]((0..<(geometry.widthPx + 256)).map { UInt8($0 & 0xFF) })
let metrics = server.metrics
let busyDrops = metrics.dropped(reason: "busy")!
let periodNs = Int64(1e9 / fps)
let maxFrames = Int(seconds * fps) + 1
var publishTimesNs = [Int64](repeating: 0, count: maxFrames)
var quads = [PreviewQuad](
    repeating: PreviewQuad(
        .init(xPx: 0, yPx: 0), .init(xPx: 0, yPx: 0), .init(xPx: 0, yPx: 0),
        .init(xPx: 0, yPx: 0), trackId: 1), count: 1)
var maxPublishNs: Int64 = 0
var publishDurationsNs = [Int64](repeating: 0, count: maxFrames)
var published = 0
let startNs = clock.nowNs()
var recentFps = 0.0

/// Draws frame `index`: diagonal luma ramp moving 4 px per frame (it repeats every 64 frames), a chroma tint that
/// cycles every 96 frames, so two frames look alike only 192 frames (6.4 s) apart. (With both at 64 frames, two
/// screenshots 1 s apart plus a Chromium start of ~1.1 s caught the same picture.)
func draw(_ index: Int) {
    let luma = frame.luma.baseAddress!.assumingMemoryBound(to: UInt8.self)
    pattern.withUnsafeBufferPointer { source in
        for y in 0..<geometry.heightPx {
            let offset = (y + index * 4) & 0xFF
            (luma + y * geometry.widthPx).update(from: source.baseAddress! + offset, count: geometry.widthPx)
        }
    }
    frame.cb.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: 96 + (index % 96) * 2 / 3))
    frame.cr.initializeMemory(as: UInt8.self, repeating: 160)
    frame.sequence = index
    frame.captureTimestampNs = clock.nowNs()
}

while published < maxFrames && !harnessStopRequested.load(ordering: .relaxed) {
    let dueNs = startNs + Int64(published) * periodNs
    clock.sleep(untilNs: dueNs)
    draw(published)
    let x = Float(40 + (published * 3) % max(1, geometry.widthPx / 2))
    quads[0] = PreviewQuad(
        .init(xPx: x, yPx: 60), .init(xPx: x + 160, yPx: 70), .init(xPx: x + 150, yPx: 200),
        .init(xPx: x - 10, yPx: 190), trackId: 1)
    if published >= Int(fps) {
        recentFps = fps * 1e9 / Double(clock.nowNs() - publishTimesNs[published - Int(fps)])
    }
    let stats = PreviewStats(
        outputFps: recentFps, lagMs: Double(clock.nowNs() - dueNs) / 1e6,
        inFlight: published % 2, model: "synthetic")
    let beforeNs = clock.nowNs()
    server.publish(frame: frame, overlays: quads, stats: stats)
    let afterNs = clock.nowNs()
    if published > 0 { maxPublishNs = max(maxPublishNs, afterNs - beforeNs) }  // frame 0 allocates the slots
    publishTimesNs[published] = afterNs
    publishDurationsNs[published] = afterNs - beforeNs
    metrics.framesOutput.increment()
    metrics.outputLagSeconds.observe(Double(afterNs - frame.captureTimestampNs) / 1e9 + 0.030)
    if published % 10 == 9 { busyDrops.increment() }
    if let after = deviceLostAfterS, Double(afterNs - startNs) / 1e9 >= after {
        server.setHealth(.deviceLost(reason: "synthetic device unplugged"))
    }
    published += 1
}

// Worst 1-s window: fewest publishes in [t_i, t_i + 1 s) over windows that fit in the run.
var worstWindow = Int.max
var j = 0
for i in 0..<published {
    if publishTimesNs[i] + 1_000_000_000 > publishTimesNs[published - 1] { break }
    if j < i { j = i }
    while j < published && publishTimesNs[j] < publishTimesNs[i] + 1_000_000_000 { j += 1 }
    worstWindow = min(worstWindow, j - i)
}
let sortedDurationsNs = publishDurationsNs[1..<max(1, published)].sorted()
let p99PublishUs = sortedDurationsNs.isEmpty ? 0 : sortedDurationsNs[(sortedDurationsNs.count - 1) * 99 / 100] / 1000
let elapsedS = Double(clock.nowNs() - startNs) / 1e9
let achievedFps =
    published > 1 ? Double(published - 1) * 1e9 / Double(publishTimesNs[published - 1] - publishTimesNs[0]) : 0
print(
    "summary published=\(published) seconds=\(elapsedS) fps=\(achievedFps) "
        + "worst_window_frames=\(worstWindow == .max ? -1 : worstWindow) max_publish_us=\(maxPublishNs / 1000) "
        + "p99_publish_us=\(p99PublishUs)")
fflush(nil)
server.stop()
exit(0)
