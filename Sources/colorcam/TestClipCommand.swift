import ColorcamCore
import Stream

/// `colorcam testclip`: writes the deterministic synthetic test pattern as a .y4m.
enum TestClipCommand {
    static let command = Command(
        name: "testclip", summary: "write a synthetic moving test clip (.y4m) for demos and benchmarks",
        help: help, run: { try run($0) })

    static let help = """
        usage: colorcam testclip OUT.y4m|- [--size WxH] [--fps N] [--seconds S]

        Writes a deterministic synthetic clip (drifting gradient, bouncing square, frame number in binary blocks),
        4:2:0, no timestamps (replays pace it at its header rate). Defaults: 640x480, 30 fps, 10 s.
        """

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        let a = try Arguments(args, command: "testclip", valued: ["size", "fps", "seconds"])
        let out = try a.positionals(exactly: 1, usage: "testclip OUT.y4m [--size WxH] [--fps N] [--seconds S]")[0]
        let (width, height) = try parseSize(a.string("size") ?? "640x480", command: "testclip")
        let fps = try a.int("fps", default: 30, range: 1...1000)!
        let seconds = try a.double("seconds", default: 10, min: 0)!
        let source = TestPatternSource(
            widthPx: width, heightPx: height, fps: fps,
            frameCount: Int((seconds * Double(fps)).rounded()))
        let sink = try Y4MSink(path: out, header: Y4MHeader(geometry: source.geometry, frameRate: source.frameRate))
        let frame = FrameBuffer(geometry: source.geometry)
        do {
            while try source.readFrame(into: frame) { try sink.write(frame) }
            try sink.finish()
        } catch {
            sink.abort()
            throw error
        }
        return 0
    }
}

/// Parses `WxH` (both 1…16384).
func parseSize(_ text: String, command: String) throws -> (Int, Int) {
    let parts = text.split(separator: "x")
    guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
        (1...FrameGeometry.maxDimensionPx).contains(w), (1...FrameGeometry.maxDimensionPx).contains(h)
    else {
        throw UsageError("\(command): --size wants WxH with 1 ≤ W, H ≤ \(FrameGeometry.maxDimensionPx), got '\(text)'")
    }
    return (w, h)
}
