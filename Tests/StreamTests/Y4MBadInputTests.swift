import ColorcamCore
import Foundation
import Testing

@testable import Stream

/// One malformed input: its bytes, the error kind, and what the one-line message must say besides the path.
struct BadY4MCase: CustomStringConvertible, Sendable {
    let label: String
    let bytes: [UInt8]
    let kind: FailureKind
    let fragments: [String]
    var description: String { label }
}

private let goodHeader = "YUV4MPEG2 W4 H2 F30:1 Ip A1:1 C444\n"  // 24-byte frames, header is 35 bytes
private let goodFrame = Array("FRAME\n".utf8) + [UInt8](repeating: 0x55, count: 24)

private func header(_ params: String) -> [UInt8] { Array("YUV4MPEG2 \(params)\n".utf8) + goodFrame }

let badY4MCases: [BadY4MCase] = [
    BadY4MCase(
        label: "truncated first frame",
        bytes: Array(goodHeader.utf8) + Array("FRAME\n".utf8) + [UInt8](repeating: 1, count: 10),
        kind: .badData, fragments: ["byte 35", "frame 0", "truncated", "expected 24", "got 10"]),
    BadY4MCase(
        label: "truncated third frame, payload split by read-ahead",
        bytes: Array(goodHeader.utf8) + goodFrame + goodFrame + Array("FRAME\n".utf8) + [1, 2, 3],
        kind: .badData, fragments: ["byte 95", "frame 2", "expected 24", "got 3"]),
    BadY4MCase(
        label: "file ends inside a FRAME line",
        bytes: Array(goodHeader.utf8) + goodFrame + Array("FRA".utf8),
        kind: .badData, fragments: ["byte 65", "frame 1", "truncated", "FRAME line"]),
    BadY4MCase(
        label: "bad magic", bytes: Array("YUV4MPEG3 W4 H2 C444\n".utf8) + goodFrame,
        kind: .badData, fragments: ["byte 0", "not a YUV4MPEG2 file"]),
    BadY4MCase(
        label: "PNG given as y4m", bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
        kind: .badData, fragments: ["byte 0", "not a YUV4MPEG2 file", "\\x89PNG"]),
    BadY4MCase(
        label: "missing W", bytes: header("H2 F30:1 C444"),
        kind: .badData, fragments: ["byte 0", "no width"]),
    BadY4MCase(
        label: "missing H", bytes: header("W4 F30:1 C444"),
        kind: .badData, fragments: ["byte 0", "no height"]),
    BadY4MCase(
        label: "zero W", bytes: header("W0 H2 C444"),
        kind: .badData, fragments: ["byte 10", "width must be a positive integer", "got 0"]),
    BadY4MCase(
        label: "negative H", bytes: header("W4 H-2 C444"),
        kind: .badData, fragments: ["byte 13", "height must be a positive integer", "'H-2'"]),
    BadY4MCase(
        label: "non-numeric W", bytes: header("Wfour H2 C444"),
        kind: .badData, fragments: ["byte 10", "width must be a positive integer", "'Wfour'"]),
    BadY4MCase(
        label: "W over the dimension limit", bytes: header("W16385 H2 C444"),
        kind: .badData, fragments: ["byte 10", "width 16385 exceeds the limit of 16384"]),
    BadY4MCase(
        label: "H with 20 digits", bytes: header("W4 H99999999999999999999 C444"),
        kind: .badData, fragments: ["byte 13", "height 99999999999999999999 exceeds"]),
    BadY4MCase(
        label: "a 16384x16384 4:4:4 frame (805 MB)", bytes: header("W16384 H16384 C444"),
        kind: .badData, fragments: ["byte 0", "805306368 bytes", "over the limit"]),
    BadY4MCase(
        label: "10-bit colour space", bytes: header("W4 H2 C420p10"),
        kind: .badData, fragments: ["byte 16", "unsupported colour space 'C420p10'", "420jpeg", "mono"]),
    BadY4MCase(
        label: "alpha colour space", bytes: header("W4 H2 C444alpha"),
        kind: .badData, fragments: ["unsupported colour space 'C444alpha'", "supported: 420jpeg"]),
    BadY4MCase(
        label: "zero frame rate numerator", bytes: header("W4 H2 F0:1 C444"),
        kind: .badData, fragments: ["byte 16", "frame rate", "'F0:1'"]),
    BadY4MCase(
        label: "zero frame rate denominator", bytes: header("W4 H2 F30:0 C444"),
        kind: .badData, fragments: ["frame rate", "'F30:0'"]),
    BadY4MCase(
        label: "frame rate without a colon", bytes: header("W4 H2 F30 C444"),
        kind: .badData, fragments: ["frame rate", "'F30'"]),
    BadY4MCase(
        label: "negative frame rate", bytes: header("W4 H2 F-30:1 C444"),
        kind: .badData, fragments: ["frame rate", "'F-30:1'"]),
    BadY4MCase(
        label: "top-field-first interlacing", bytes: header("W4 H2 It C444"),
        kind: .badData, fragments: ["byte 16", "interlaced", "'It'"]),
    BadY4MCase(
        label: "bottom-field-first interlacing", bytes: header("W4 H2 Ib C444"),
        kind: .badData, fragments: ["interlaced", "'Ib'"]),
    BadY4MCase(
        label: "mixed interlacing", bytes: header("W4 H2 Im C444"),
        kind: .badData, fragments: ["interlaced", "'Im'"]),
    BadY4MCase(
        label: "garbage line where the first FRAME should be",
        bytes: Array(goodHeader.utf8) + Array("GARBAGE LINE\n".utf8) + goodFrame,
        kind: .badData, fragments: ["byte 35", "frame 0", "expected a FRAME line", "'GARBAGE LINE"]),
    BadY4MCase(
        label: "garbage after a good frame",
        bytes: Array(goodHeader.utf8) + goodFrame + Array("FRAMES\n".utf8),
        kind: .badData, fragments: ["byte 65", "frame 1", "expected a FRAME line"]),
    BadY4MCase(
        label: "payload longer than the header says",
        bytes: Array(goodHeader.utf8) + goodFrame + [0x55, 0x55],
        kind: .badData, fragments: ["byte 65", "frame 1", "expected a FRAME line"]),
    BadY4MCase(
        label: "header line with no newline for 5000 bytes",
        bytes: Array(("YUV4MPEG2 W4 H2 C444 X" + String(repeating: "x", count: 5000)).utf8),
        kind: .badData, fragments: ["byte 0", "header line longer than 1024 bytes"]),
    BadY4MCase(
        label: "FRAME line with no newline for 5000 bytes",
        bytes: Array(goodHeader.utf8) + Array(("FRAME X" + String(repeating: "y", count: 5000)).utf8),
        kind: .badData, fragments: ["byte 35", "frame 0", "FRAME line longer than 1024 bytes"]),
    BadY4MCase(
        label: "header without newline at end of file", bytes: Array("YUV4MPEG2 W4 H2".utf8),
        kind: .badData, fragments: ["byte 15", "no newline"]),
    BadY4MCase(
        label: "empty file", bytes: [],
        kind: .badData, fragments: ["byte 0", "no YUV4MPEG2 header"]),
    BadY4MCase(
        label: "non-numeric timestamp",
        bytes: Array(goodHeader.utf8) + Array("FRAME Xts_us=soon\n".utf8) + [UInt8](repeating: 0, count: 24),
        kind: .badData, fragments: ["byte 41", "frame 0", "Xts_us must be an integer", "'Xts_us=soon'"])
]

@Test(arguments: badY4MCases)
func badInputIsOneLineBadDataNamingFileOffsetAndFrame(_ bad: BadY4MCase) throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("bad input.y4m", bad.bytes)
    expectStreamError(bad.kind, containing: [path + ":"] + bad.fragments) {
        let source = try Y4MSource(path: path)
        let buffer = FrameBuffer(geometry: source.geometry)
        var frames = 0
        while try source.readFrame(into: buffer) {
            frames += 1
            if frames > 10 { break }  // none of the cases has more than 3 frames
        }
    }
}

@Test func missingFileIsMissingInput() throws {
    let dir = try TemporaryDirectory()
    let path = dir.file("nope.y4m")
    expectStreamError(.missingInput, containing: [path + ":", "No such file"]) { _ = try Y4MSource(path: path) }
    expectStreamError(.missingInput, containing: [path]) { _ = try Y4MSource(path: path + "/under-a-missing-dir") }
}

@Test func directoryIsBadData() throws {
    let dir = try TemporaryDirectory()
    expectStreamError(.badData, containing: [dir.path + ":", "is a directory"]) { _ = try Y4MSource(path: dir.path) }
}

@Test func emptyPipeSaysNoHeader() throws {
    let dir = try TemporaryDirectory()
    let fifo = dir.file("empty-pipe")
    try #require(mkfifo(fifo, 0o600) == 0)
    let writer = Thread { close(open(fifo, O_WRONLY)) }
    writer.start()
    expectStreamError(.badData, containing: [fifo + ":", "no YUV4MPEG2 header", "empty"]) {
        _ = try Y4MSource(path: fifo)
    }
}

@Test func readFrameIntoAWrongSizedBufferIsAnErrorNotACrash() throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("ok.y4m", Array(goodHeader.utf8) + goodFrame)
    let source = try Y4MSource(path: path)
    expectStreamError(.internalError, containing: [path, "frame 0"]) {
        _ = try source.readFrame(into: FrameBuffer(geometry: FrameGeometry(widthPx: 4, heightPx: 2, chroma: .mono)))
    }
}

@Test func errorsAfterAGoodFrameStillDeliverTheGoodFrame() throws {
    let dir = try TemporaryDirectory()
    let payload = patternBytes(count: 24, seed: 3)
    let path = try dir.write("half.y4m", Array(goodHeader.utf8) + Array("FRAME\n".utf8) + payload + Array("FR".utf8))
    let source = try Y4MSource(path: path)
    let buffer = FrameBuffer(geometry: source.geometry)
    #expect(try source.readFrame(into: buffer))
    #expect([UInt8](buffer.pixels) == payload)
    expectStreamError(.badData, containing: ["frame 1", "byte 65"]) { _ = try source.readFrame(into: buffer) }
}
