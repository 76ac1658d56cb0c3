import ColorcamCore

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a whole file (a model, a raw tensor) into memory: a regular file, or a pipe read to its end (`<(…)`).
///
/// Sized by reading to the end, never by seeking: a directory's end offset is not its size (ext4 with hashed
/// directories reports `Int.max`, which an allocation of that size turns into an abort).
/// - Parameter what: what the file should be, for the error ("model file", "file").
/// - Throws: `InferError(.missingInput)` when it cannot be opened or read (the C library's reason),
///   `InferError(.badData)` when it is a directory (a bundle given where its `model.onnx` is wanted).
public func readWholeFile(_ path: String, what: String) throws -> [UInt8] {
    let fd: FileDescriptor
    do { fd = try FileDescriptor.open(path, O_RDONLY) } catch {
        throw InferError(.missingInput, file: path, "cannot read the \(what): \(error)")
    }
    defer { try? fd.close() }
    var bytes: [UInt8] = []
    do {
        let info = try fd.status()
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR { throw InferError(.badData, file: path, "is a directory, not a \(what)") }
        if type == S_IFREG { bytes.reserveCapacity(Int(info.st_size)) }
        try fd.readAll(into: &bytes)
    } catch let error as Errno {
        throw InferError(.missingInput, file: path, "cannot read the \(what) (after \(bytes.count) bytes): \(error)")
    }
    return bytes
}
