import ColorcamCore
import Foundation
import Testing

@testable import Stream

/// A fresh directory under the system temp dir, removed (with its contents) on deinit.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory().trimmingSuffix("/") + "/colorcam-test-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: try #require(made, "mkdtemp failed"))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `path/name`.
    func file(_ name: String) -> String { path + "/" + name }

    /// Writes `bytes` to `name` in this directory and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let target = file(name)
        try Data(bytes).write(to: URL(fileURLWithPath: target))
        return target
    }

    /// Names in the directory (dot-files included), sorted.
    func listing() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: path).sorted() }
}

/// The whole content of a file.
func readBytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

/// Deterministic pseudo-random bytes (xorshift), different per seed.
func patternBytes(count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}

/// A frame of `geometry` filled with `bytes`.
func makeFrame(_ geometry: FrameGeometry, _ bytes: [UInt8], sequence: Int = 0, timestampNs: Int64? = nil)
    -> FrameBuffer
{
    let frame = FrameBuffer(geometry: geometry)
    precondition(bytes.count == geometry.frameBytes)
    frame.pixels.copyBytes(from: bytes)
    frame.sequence = sequence
    frame.sourceTimestampNs = timestampNs
    return frame
}

/// Reads every frame of a Y4M file: (pixels, sequence, timestamp) per frame.
func readAllFrames(_ source: FrameSource) throws -> [(pixels: [UInt8], sequence: Int, timestampNs: Int64?)] {
    let buffer = FrameBuffer(geometry: source.geometry)
    var frames: [(pixels: [UInt8], sequence: Int, timestampNs: Int64?)] = []
    while try source.readFrame(into: buffer) {
        frames.append(([UInt8](buffer.pixels), buffer.sequence, buffer.sourceTimestampNs))
    }
    return frames
}

/// Result of running an external program.
struct ProcessResult {
    let status: Int32
    let stdout: Data
    let stderr: String
}

/// Runs `executable` (looked up on PATH) with `arguments`, collecting its output. Fails the test with an install
/// hint when the program is not installed.
///
/// Async so a test waiting for ffmpeg does not hold one of Swift Testing's few pool threads (2 on this machine):
/// a dedicated thread drains the pipes and waits for the exit, then resumes the caller.
func run(_ executable: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws
    -> ProcessResult
{
    let found = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        .map { "\($0)/\(executable)" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    let path = try #require(
        found, "\(executable) is not installed: run 'apt-get install -y \(executable)'",
        sourceLocation: sourceLocation)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let box = OutputBox()
    return await withCheckedContinuation { continuation in
        Thread {
            let errDone = DispatchSemaphore(value: 0)
            Thread {
                box.stderr = err.fileHandleForReading.readDataToEndOfFile()
                errDone.signal()
            }.start()
            box.stdout = out.fileHandleForReading.readDataToEndOfFile()
            errDone.wait()
            process.waitUntilExit()
            continuation.resume(
                returning: ProcessResult(
                    status: process.terminationStatus, stdout: box.stdout,
                    stderr: String(decoding: box.stderr, as: UTF8.self)))
        }.start()
    }
}

/// Runs ffmpeg quietly and requires it to succeed.
@discardableResult
func ffmpeg(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> Data {
    let result = try await run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments, sourceLocation: sourceLocation)
    try #require(
        result.status == 0, "ffmpeg \(arguments.joined(separator: " ")) failed: \(result.stderr)",
        sourceLocation: sourceLocation)
    return result.stdout
}

/// Per-frame MD5s of the decoded video, from `ffmpeg -f framemd5`.
func frameMD5s(_ path: String) async throws -> [String] {
    let text = String(decoding: try await ffmpeg(["-i", path, "-f", "framemd5", "-"]), as: UTF8.self)
    return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
        $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
    }
}

/// Tests that run ffmpeg. Serialized so at most one ffmpeg runs at a time: the machine has 2 cores and other
/// suites (the real-time pipeline tests) must keep one.
@Suite(.serialized) struct ExternalToolTests {}

/// A child's output, handed between the reader threads; each field is written once, before the semaphore or
/// continuation that publishes it.
private final class OutputBox: @unchecked Sendable {
    var stdout = Data()
    var stderr = Data()
}

/// Expects `body` to throw a `StreamError` of `kind` whose one-line description contains every string in
/// `fragments`; returns it.
@discardableResult
func expectStreamError(
    _ kind: FailureKind, containing fragments: [String],
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> StreamError? {
    do {
        try body()
        Issue.record(
            "expected a \(kind) StreamError containing \(fragments), nothing was thrown",
            sourceLocation: sourceLocation)
        return nil
    } catch let error as StreamError {
        #expect(error.kind == kind, "wrong kind for: \(error.description)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(
                error.description.contains(fragment), "'\(fragment)' missing from: \(error.description)",
                sourceLocation: sourceLocation)
        }
        #expect(!error.description.contains("\n"), "not one line: \(error.description)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a StreamError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Every colour space colorcam reads.
let allChromaFormats: [ChromaFormat] = [
    .yuv420(.jpeg), .yuv420(.paldv), .yuv420(.mpeg2), .yuv420(.unspecified), .yuv422, .yuv444, .mono
]

extension String {
    /// The string without trailing copies of `suffix`.
    func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) && text.count > suffix.count { text.removeLast(suffix.count) }
        return text
    }
}
