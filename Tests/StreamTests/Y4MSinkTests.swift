import ColorcamCore
import Foundation
import Testing

@testable import Stream

private let smallGeometry = FrameGeometry(widthPx: 5, heightPx: 3, chroma: .yuv420(.jpeg))
private let smallHeader = Y4MHeader(geometry: smallGeometry, frameRate: (30, 1), pixelAspect: (1, 1))

@Test func sinkWritesUnderATemporaryNameAndRenamesOnFinish() throws {
    let dir = try TemporaryDirectory()
    let path = dir.file("out.y4m")
    let sink = try Y4MSink(path: path, header: smallHeader)
    try sink.write(makeFrame(smallGeometry, patternBytes(count: smallGeometry.frameBytes, seed: 1)))
    // While writing, only the dot-file temporary exists.
    #expect(try dir.listing() == [".out.y4m.tmp-\(getpid())"])
    try sink.finish()
    #expect(try dir.listing() == ["out.y4m"])
    try sink.finish()  // idempotent
    #expect(try dir.listing() == ["out.y4m"])
    #expect(try readAllFrames(Y4MSource(path: path)).count == 1)
}

@Test func sinkInTheCurrentDirectoryUsesARelativeTemporaryName() throws {
    let dir = try TemporaryDirectory()
    let previous = FileManager.default.currentDirectoryPath
    #expect(FileManager.default.changeCurrentDirectoryPath(dir.path))
    defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
    let sink = try Y4MSink(path: "relative.y4m", header: smallHeader)
    #expect(try dir.listing() == [".relative.y4m.tmp-\(getpid())"])
    try sink.finish()
    #expect(try dir.listing() == ["relative.y4m"])
}

@Test func abortRemovesTheTemporaryFileAndLeavesAnOldOutputAlone() throws {
    let dir = try TemporaryDirectory()
    let path = try dir.write("out.y4m", Array("previous run".utf8))
    let sink = try Y4MSink(path: path, header: smallHeader)
    try sink.write(makeFrame(smallGeometry, [UInt8](repeating: 9, count: smallGeometry.frameBytes)))
    sink.abort()
    sink.abort()  // idempotent
    #expect(try dir.listing() == ["out.y4m"])
    #expect(try readBytes(path) == Array("previous run".utf8))
    expectStreamError(.internalError, containing: [path, "after"]) {
        try sink.write(makeFrame(smallGeometry, [UInt8](repeating: 9, count: smallGeometry.frameBytes)))
    }
}

@Test func droppingAnUnfinishedSinkRemovesItsTemporaryFile() throws {
    let dir = try TemporaryDirectory()
    do {
        let sink = try Y4MSink(path: dir.file("dropped.y4m"), header: smallHeader)
        try sink.write(makeFrame(smallGeometry, [UInt8](repeating: 1, count: smallGeometry.frameBytes)))
    }
    #expect(try dir.listing().isEmpty)
}

@Test func wrongGeometryIsAnErrorNotACrash() throws {
    let dir = try TemporaryDirectory()
    let sink = try Y4MSink(path: dir.file("out.y4m"), header: smallHeader)
    defer { sink.abort() }
    let other = FrameGeometry(widthPx: 5, heightPx: 3, chroma: .yuv444)
    expectStreamError(.internalError, containing: ["out.y4m", "frame 0", "5x3 444"]) {
        try sink.write(FrameBuffer(geometry: other))
    }
}

@Test func outputInAMissingDirectoryIsAnIOErrorNamingIt() throws {
    let dir = try TemporaryDirectory()
    let path = dir.file("no-such-dir/out.y4m")
    expectStreamError(.ioError, containing: [path + ":", "No such file"]) {
        _ = try Y4MSink(path: path, header: smallHeader)
    }
}

@Test func outputThatIsADirectoryIsRefused() throws {
    let dir = try TemporaryDirectory()
    expectStreamError(.usage, containing: [dir.path, "directory"]) {
        _ = try Y4MSink(path: dir.path, header: smallHeader)
    }
    #expect(try dir.listing().isEmpty)
}

@Test func fullDiskIsAnIOErrorNamingTheOutput() throws {
    // /dev/full fails every write with ENOSPC; the header write is buffered nowhere, so it fails at init.
    let full = try FileDescriptorIO.createForWriting("/dev/full")
    expectStreamError(.ioError, containing: ["/dev/full:", "No space left", "errno \(ENOSPC)"]) {
        _ = try Y4MSink(descriptor: full, header: smallHeader, writeTimestamps: false)
    }
}

@Test func brokenPipeIsAnIOErrorNamingTheFrame() throws {
    signal(SIGPIPE, SIG_IGN)  // as colorcam's main does
    var ends: [Int32] = [0, 0]
    try #require(pipe(&ends) == 0)
    let writeEnd = FileDescriptorIO(rawValue: ends[1], name: "pipe-out", closeOnDeinit: true)
    let sink = try Y4MSink(descriptor: writeEnd, header: smallHeader, writeTimestamps: false)
    let frame = makeFrame(smallGeometry, [UInt8](repeating: 3, count: smallGeometry.frameBytes))
    try sink.write(frame)
    try sink.write(frame)
    close(ends[0])  // the reader goes away
    expectStreamError(.ioError, containing: ["pipe-out:", "frame 2", "Broken pipe", "errno \(EPIPE)"]) {
        try sink.write(frame)
    }
}

@Test func writeAllFinishesAcrossShortWritesOnAPipe() throws {
    // 1 MiB through a 64 KiB pipe: writev returns short many times; a reader thread checks every byte arrives.
    var ends: [Int32] = [0, 0]
    try #require(pipe(&ends) == 0)
    let writer = FileDescriptorIO(rawValue: ends[1], name: "pipe", closeOnDeinit: true)
    let head = patternBytes(count: 10, seed: 5)
    let body = patternBytes(count: 1 << 20, seed: 6)
    let readEnd = ends[0]
    let box = ReceivedBytes()
    let done = DispatchSemaphore(value: 0)
    Thread {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            box.bytes += chunk[..<count]
        }
        close(readEnd)
        done.signal()
    }.start()
    try head.withUnsafeBytes { h in try body.withUnsafeBytes { b in try writer.writeAll(h, b) } }
    try writer.close()
    done.wait()
    #expect(box.bytes == head + body)
}

/// Bytes collected by a reader thread; read only after its semaphore signal.
private final class ReceivedBytes: @unchecked Sendable {
    var bytes: [UInt8] = []
}

@Test func aHeaderWithANonPositiveRateIsRefusedBeforeAnyFileIsMade() throws {
    let dir = try TemporaryDirectory()
    let header = Y4MHeader(geometry: smallGeometry, frameRate: (0, 1))
    expectStreamError(.internalError, containing: ["out.y4m", "0:1"]) {
        _ = try Y4MSink(path: dir.file("out.y4m"), header: header)
    }
    #expect(try dir.listing().isEmpty)
}
