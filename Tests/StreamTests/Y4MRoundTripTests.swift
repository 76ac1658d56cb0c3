import ColorcamCore
import Foundation
import Testing

@testable import Stream

/// Sizes that exercise odd chroma rounding and a frame larger than the read-ahead buffer.
let roundTripSizes: [(Int, Int)] = [(1, 1), (3, 7), (321, 241)]

@Test(arguments: allChromaFormats)
func sinkThenSourceRoundTripsEveryColourSpaceAndSize(chroma: ChromaFormat) throws {
    let dir = try TemporaryDirectory()
    for (widthPx, heightPx) in roundTripSizes {
        let geometry = FrameGeometry(widthPx: widthPx, heightPx: heightPx, chroma: chroma)
        let header = Y4MHeader(geometry: geometry, frameRate: (30000, 1001), pixelAspect: (1, 1))
        let path = dir.file("rt-\(chroma)-\(widthPx)x\(heightPx).y4m")
        let timestamps: [Int64?] = [0, 33_366_000, nil, -5_000, 9_000_000_000_000_000]
        let payloads = (0..<timestamps.count).map { patternBytes(count: geometry.frameBytes, seed: UInt64($0 + 1)) }

        let sink = try Y4MSink(path: path, header: header, writeTimestamps: true)
        for (index, payload) in payloads.enumerated() {
            try sink.write(makeFrame(geometry, payload, sequence: index, timestampNs: timestamps[index]))
        }
        try sink.finish()

        let source = try Y4MSource(path: path)
        #expect(source.header == header)
        #expect(source.geometry == geometry)
        #expect(source.frameRate == (30000, 1001))
        #expect(source.nominalFrameIntervalNs == 33_366_666)
        #expect(source.carriesTimestamps)
        #expect(source.canRewind)
        let frames = try readAllFrames(source)
        #expect(frames.count == payloads.count)
        for (index, frame) in frames.enumerated() {
            #expect(frame.pixels == payloads[index], "frame \(index) of \(geometry)")
            #expect(frame.sequence == index)
            #expect(frame.timestampNs == timestamps[index])
        }
        // After the clean end the source keeps saying so.
        #expect(try source.readFrame(into: FrameBuffer(geometry: geometry)) == false)

        // The bytes on disk are exactly the header colorcam promises plus FRAME lines and payloads.
        var expected = Array("YUV4MPEG2 W\(widthPx) H\(heightPx) F30000:1001 Ip A1:1 C\(chroma.y4mTag)\n".utf8)
        for (index, payload) in payloads.enumerated() {
            let line = timestamps[index].map { "FRAME Xts_us=\($0 / 1000)\n" } ?? "FRAME\n"
            expected += Array(line.utf8) + payload
        }
        #expect(try readBytes(path) == expected)
    }
}

@Test func sinkWithoutTimestampsWritesPlainFrameLines() throws {
    let dir = try TemporaryDirectory()
    let geometry = FrameGeometry(widthPx: 2, heightPx: 2, chroma: .mono)
    let path = dir.file("plain.y4m")
    let sink = try Y4MSink(path: path, header: Y4MHeader(geometry: geometry, frameRate: (25, 1)))
    try sink.write(makeFrame(geometry, [1, 2, 3, 4], timestampNs: 1_000_000))
    try sink.finish()
    #expect(try readBytes(path) == Array("YUV4MPEG2 W2 H2 F25:1 Ip A0:0 Cmono\nFRAME\n".utf8) + [1, 2, 3, 4])
    let source = try Y4MSource(path: path)
    #expect(!source.carriesTimestamps)
    let frames = try readAllFrames(source)
    #expect(frames.count == 1)
    #expect(frames.first?.timestampNs == nil)
}

@Test func unknownHeaderAndFrameParametersAreIgnored() throws {
    let dir = try TemporaryDirectory()
    let payload: [UInt8] = Array(0..<18)  // 3×2 4:4:4
    let text = "YUV4MPEG2 XYSCSS=444 W3  H2 F24000:1001 Ip A128:117 C444 XCOLORRANGE=FULL Zfuture=1\n"
    let bytes =
        Array(text.utf8)
        + Array("FRAME Ixyz XFOO=bar Xts_us=42 Q\n".utf8) + payload
        + Array("FRAME X\n".utf8) + payload.reversed()
    let path = try dir.write("params.y4m", bytes)
    let source = try Y4MSource(path: path)
    #expect(source.geometry == FrameGeometry(widthPx: 3, heightPx: 2, chroma: .yuv444))
    #expect(source.frameRate == (24000, 1001))
    #expect(source.header.pixelAspect == (128, 117))
    #expect(source.carriesTimestamps)
    let frames = try readAllFrames(source)
    #expect(frames.count == 2)
    #expect(frames.first?.pixels == payload)
    #expect(frames.first?.timestampNs == 42_000)
    #expect(frames.last?.pixels == payload.reversed())
    #expect(frames.last?.timestampNs == nil)
}

@Test func missingColourSpaceMeans420jpegAndMissingRateMeans25() throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("defaults.y4m", Array("YUV4MPEG2 W3 H3\nFRAME\n".utf8) + [UInt8](repeating: 7, count: 17))
    let source = try Y4MSource(path: path)
    #expect(source.geometry.chroma == .yuv420(.jpeg))
    #expect(source.geometry.frameBytes == 17)
    #expect(source.frameRate == (25, 1))
    #expect(source.nominalFrameIntervalNs == 40_000_000)
    #expect(try readAllFrames(source).count == 1)
}

@Test func headerWithNoFramesIsAnEmptyStream() throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("empty-stream.y4m", Array("YUV4MPEG2 W4 H4 F30:1 Ip C420jpeg\n".utf8))
    let source = try Y4MSource(path: path)
    #expect(!source.carriesTimestamps)
    #expect(try readAllFrames(source).isEmpty)
}

@Test func rewindGoesBackToTheFirstFrame() throws {
    let dir = try TemporaryDirectory()
    let geometry = FrameGeometry(widthPx: 64, heightPx: 48, chroma: .yuv420(.jpeg))  // payload > read-ahead
    let path = dir.file("loop.y4m")
    let sink = try Y4MSink(path: path, header: Y4MHeader(geometry: geometry, frameRate: (30, 1)), writeTimestamps: true)
    let payloads = (0..<3).map { patternBytes(count: geometry.frameBytes, seed: UInt64(100 + $0)) }
    for (index, payload) in payloads.enumerated() {
        try sink.write(makeFrame(geometry, payload, timestampNs: Int64(index) * 1_000_000))
    }
    try sink.finish()

    let source = try Y4MSource(path: path)
    let first = try readAllFrames(source)
    try source.rewind()
    let second = try readAllFrames(source)
    // Rewind in the middle too.
    try source.rewind()
    let buffer = FrameBuffer(geometry: geometry)
    #expect(try source.readFrame(into: buffer))
    try source.rewind()
    let third = try readAllFrames(source)
    for run in [first, second, third] {
        #expect(run.map(\.pixels) == payloads)
        #expect(run.map(\.sequence) == [0, 1, 2])
        #expect(run.map(\.timestampNs) == [0, 1_000_000, 2_000_000])
    }
}

@Test func aFifoCannotRewindButStreams() throws {
    let dir = try TemporaryDirectory()
    let fifo = dir.file("pipe.y4m")
    try #require(mkfifo(fifo, 0o600) == 0)
    let geometry = FrameGeometry(widthPx: 33, heightPx: 17, chroma: .yuv422)
    let payload = patternBytes(count: geometry.frameBytes, seed: 9)
    let bytes =
        Array("YUV4MPEG2 W33 H17 F30:1 C422\n".utf8) + Array("FRAME Xts_us=5\n".utf8) + payload
        + Array("FRAME\n".utf8) + payload
    // A writer thread dribbles the stream in small pieces so reads come back short.
    let writer = Thread {
        let fd = open(fifo, O_WRONLY)
        var offset = 0
        while offset < bytes.count {
            let chunk = min(100, bytes.count - offset)
            _ = bytes[offset..<(offset + chunk)].withUnsafeBytes { write(fd, $0.baseAddress, chunk) }
            offset += chunk
        }
        close(fd)
    }
    writer.start()
    let source = try Y4MSource(path: fifo)
    #expect(!source.canRewind)
    #expect(source.carriesTimestamps)
    let frames = try readAllFrames(source)
    #expect(frames.map(\.pixels) == [payload, payload])
    #expect(frames.map(\.timestampNs) == [5_000, nil])
    expectStreamError(.usage, containing: [fifo, "rewind"]) { try source.rewind() }
}

@Test func frameLineFormattingAndParsingAgree() throws {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Y4MFrameLine.maxFormattedBytes, alignment: 1)
    defer { buffer.deallocate() }
    for micros: Int64 in [0, 1, -1, 9, 10, 123_456_789, 999_999_999_999_999_999 / 1000, -42] {
        let count = Y4MFrameLine.format(timestampNs: micros * 1000, into: buffer)
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        #expect(text == "FRAME Xts_us=\(micros)\n")
        let parsed = try Y4MFrameLine.parse(
            UnsafeRawBufferPointer(rebasing: buffer[..<(count - 1)]),
            file: "x", byteOffset: 0, frame: 0)
        #expect(parsed == micros * 1000)
    }
    let count = Y4MFrameLine.format(timestampNs: nil, into: buffer)
    #expect(String(decoding: UnsafeRawBufferPointer(rebasing: buffer[..<count]), as: UTF8.self) == "FRAME\n")
}

@Test(arguments: [Y4MColorRange.full, .limited, .unspecified])
func colourRangeCommentRoundTrips(range: Y4MColorRange) throws {
    let dir = try TemporaryDirectory()
    let geometry = FrameGeometry(widthPx: 2, heightPx: 2, chroma: .yuv420(.jpeg))
    let header = Y4MHeader(geometry: geometry, frameRate: (30, 1), pixelAspect: (1, 1), colorRange: range)
    let path = dir.file("range.y4m")
    let sink = try Y4MSink(path: path, header: header)
    try sink.finish()
    let comment = [Y4MColorRange.full: " XCOLORRANGE=FULL", .limited: " XCOLORRANGE=LIMITED", .unspecified: ""][range]!
    #expect(try readBytes(path) == Array("YUV4MPEG2 W2 H2 F30:1 Ip A1:1 C420jpeg\(comment)\n".utf8))
    #expect(try Y4MSource(path: path).header.colorRange == range)
}
