// libFuzzer target: the preview server's HTTP/1.x request-head parser (HTTPRequestParser, HTTPRequestHead).
//
// The first input byte chooses how the rest is fragmented (all at once, or chunks of 1…127 bytes), so the
// incremental state machine sees the splits a socket produces; every completed head is queried as the server does
// (path, keepAlive, header lookup) and its leftover bytes are fed back as the next pipelined request. Small limits
// are used on alternate inputs so the limit checks are reached with short inputs.
@testable import Preview

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let control = data[0]
    let bytes = UnsafeBufferPointer(start: data + 1, count: size - 1)
    let limits =
        control & 1 == 0
        ? HTTPRequestParser.Limits()
        : HTTPRequestParser.Limits(maxRequestLineBytes: 64, maxHeaderBytes: 256, maxHeaderCount: 4)
    let chunkBytes = Int(control >> 1) == 0 ? max(bytes.count, 1) : Int(control >> 1)
    var parser = HTTPRequestParser(limits: limits)
    var pending = Array(bytes)
    var rounds = 0
    while !pending.isEmpty && rounds < 64 {
        rounds += 1
        var next: [UInt8] = []
        var start = 0
        chunks: while start < pending.count {
            let end = min(start + chunkBytes, pending.count)
            switch parser.feed(pending[start..<end]) {
            case .incomplete: break
            case .complete(let head, let leftover):
                _ = head.path
                _ = head.keepAlive
                _ = head.header("Host")
                _ = head == head
                next = leftover + pending[end...]
                break chunks
            case .failed(let error):
                _ = error.statusCode
                _ = error.description
                break chunks
            }
            start = end
        }
        _ = parser.hasPartialHead
        pending = next
    }
    return 0
}
