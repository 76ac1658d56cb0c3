import ColorcamCore

@testable import Stream

// libFuzzer target: the YUV4MPEG2 reader (Y4MSource → Y4MReader, Y4MHeader.parse, Y4MFrameLine.parse).
//
// Each input is the whole file. It is written to an unlinked temporary file (nothing is left behind) that is opened
// again by path (/proc/self/fd/N) for every input, so the real
// open → header → FRAME lines → readv payload path runs; every frame is read to the end, then the source rewinds
// and reads once more. Thrown errors are the expected outcome for bad bytes (their message is built, to cover it);
// a trap, an ASan report or a leak is a finding.
//
// Frames over `maxFuzzFrameBytes` are not read (the header is still parsed): a 16384×16384 4:4:4 header would
// make every execution allocate and zero 768 MB for a payload the input does not contain; the reading code is the
// same for any size.
#if canImport(Glibc)
    import Glibc
#endif

private let maxFuzzFrameBytes = 4 << 20

/// One unlinked temporary file reused by every execution (libFuzzer runs inputs one at a time on one thread), in
/// /dev/shm when there is one (a disk-backed /tmp on a busy machine can stall a write for seconds).
private let scratchFD: Int32 = {
    let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array((directory + "/fuzz-y4m-XXXXXX").utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    precondition(fd >= 0, "cannot create a temporary file")
    unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    return fd
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzY4M(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    precondition(
        ftruncate(scratchFD, 0) == 0 && pwrite(scratchFD, data, size, 0) == size,
        "cannot write the input to the temporary file")
    do {
        let source = try Y4MSource(path: "/proc/self/fd/\(scratchFD)")
        _ = source.nominalFrameIntervalNs
        _ = source.header.line
        guard source.geometry.frameBytes <= maxFuzzFrameBytes else { return 0 }
        let buffer = FrameBuffer(geometry: source.geometry)
        while try source.readFrame(into: buffer) {}
        try source.rewind()
        _ = try source.readFrame(into: buffer)
    } catch {
        _ = String(describing: error)
    }
    return 0
}
