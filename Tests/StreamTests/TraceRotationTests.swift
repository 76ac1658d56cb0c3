import Foundation
import Testing
import TraceAnalysis

@testable import Stream

/// `TraceWriter`'s size bound: numbered segments, each a whole trace, the oldest deleted beyond `keepSegments`.
@Suite struct TraceRotationTests {
    /// Records `frames` capture+output pairs in batches the writer drains separately (a batch per flush).
    private func run(_ trace: TraceWriter, frames: Range<Int>) {
        for frame in frames {
            let ns = Int64(frame) * 33_333_333
            var capture = TraceEvent.span(.capture, frame: frame, startNs: ns, endNs: ns + 1_000_000)
            capture.captureTsNs = ns
            trace.record(capture)
            var output = TraceEvent.span(.output, frame: frame, startNs: ns + 30_000_000, endNs: ns + 31_000_000)
            output.captureTsNs = ns
            trace.record(output)
            if frame % 10 == 9 { usleep(3_000) }  // let the writer (1 ms flush) drain a batch
        }
    }

    /// Capture frame numbers in the trace file at `path`, and its report.
    private func captures(_ path: String) throws -> ([Int64], TraceReport) {
        var frames: [Int64] = []
        let report = try TraceReport(bytes: try TraceReader.readFile(path), file: path) { event in
            if event.name == "capture", let frame = event.intArg("frame") { frames.append(frame) }
        }
        return (frames, report)
    }

    @Test func rotatesIntoNumberedWholeTracesAndKeepsTheNewest() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.json")
        let trace = try TraceWriter(
            path: path, processName: "test", config: [("command", .string("test"))],
            flushIntervalMs: 1, rotation: .init(maxBytes: 8_192, keepSegments: 2))
        run(trace, frames: 0..<600)
        try trace.close(atNs: 600 * 33_333_333, summary: [("frames_captured", .int(600))])
        #expect(trace.writeError == nil)

        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        // t.json plus exactly the two newest segments; no temporaries.
        #expect(names.count == 3, "files: \(names)")
        #expect(names.last == "t.json")
        let segments = names.dropLast().map { Int($0.dropFirst(2).dropLast(5))! }
        #expect(
            segments.count == 2 && segments[1] == segments[0] + 1 && segments[0] >= 2,
            "600 frames at ~270 bytes each rotate more than 3 times at 8 KiB: \(names)")

        // Each file loads on its own, complete; together they hold a contiguous run of frames ending at 599.
        var all: [Int64] = []
        for name in names.dropLast() + ["t.json"] {
            let (frames, report) = try captures(dir.file(name))
            #expect(report.load.truncationNote == nil, "\(name) is whole")
            // (The current file may hold no frames: a rotation can fall right after the last batch.)
            #expect(!frames.isEmpty || name == "t.json", "\(name): a finished segment holds frames")
            all += frames
            let size = try #require(try FileManager.default.attributesOfItem(atPath: dir.file(name))[.size] as? Int)
            // Max + one batch; a loaded machine can make a batch large, so the bound checked is a generous one,
            // still far below the ~160 KB the run writes in all.
            #expect(size < 64 * 1_024, "\(name): \(size) bytes, bounded by max + one batch")
        }
        #expect(all == Array(all.first!...599), "frames continue across the cut, none lost or repeated")
        let (_, current) = try captures(path)
        #expect(current.config?["segment"]?.int64 == Int64(segments[1] + 1))
        #expect(current.warnings.contains { $0.contains("segment \(segments[1] + 1) of a rotated trace") })
        #expect(
            !current.warnings.contains { $0.contains("summary says frames_captured") },
            "a segment's counts are not compared with the run's totals")
    }

    @Test func withoutRotationOneFileHoldsEverything() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("t.json")
        let trace = try TraceWriter(path: path, processName: "test", config: [], flushIntervalMs: 1)
        run(trace, frames: 0..<300)
        try trace.close(atNs: 300 * 33_333_333, summary: [("frames_captured", .int(300))])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["t.json"])
        let (frames, report) = try captures(path)
        #expect(frames == Array(0..<300))
        #expect(report.config?["segment"] == nil)
        #expect(report.warnings.isEmpty, "\(report.warnings)")
    }

    @Test func segmentNamesPutTheNumberBeforeTheExtension() {
        #expect(TraceWriter.segmentPath("/x/trace.json", segment: 7) == "/x/trace.000007.json")
        #expect(TraceWriter.segmentPath("trace", segment: 12) == "trace.000012")
    }
}
