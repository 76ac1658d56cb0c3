import Foundation
import Testing

@testable import Infer

/// `readWholeFile`: the reader every model and raw tensor goes through.
@Suite struct WholeFileTests {
    func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("wholefile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url
    }

    @Test func readsEveryByteOfAFile() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bytes = (0..<3_000_001).map { UInt8(truncatingIfNeeded: $0 &* 31) }  // over the 1 MiB read chunk
        let file = dir.appendingPathComponent("m.onnx")
        try Data(bytes).write(to: file)
        #expect(try readWholeFile(file.path, what: "model file") == bytes)
        try Data().write(to: file)
        #expect(try readWholeFile(file.path, what: "model file").isEmpty)
    }

    /// A directory's end offset is not its size (ext4 can report `Int.max`): reading must not size by it.
    @Test func aDirectoryIsBadDataNamingIt() throws {
        let dir = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            _ = try readWholeFile(dir.path, what: "model file")
            Issue.record("a directory was read as a model file")
        } catch let error as InferError {
            #expect(error.kind == .badData)
            #expect(error.description == "\(dir.path): is a directory, not a model file")
        }
    }

    @Test func aMissingFileIsMissingInput() throws {
        do {
            _ = try readWholeFile("/nonexistent/colorcam/m.onnx", what: "model file")
            Issue.record("a missing file was read")
        } catch let error as InferError {
            #expect(error.kind == .missingInput)
            #expect(error.description.hasPrefix("/nonexistent/colorcam/m.onnx: cannot read the model file: "))
        }
    }
}
