import ColorcamCore
import Testing

@testable import Preview

private func frame(_ geometry: FrameGeometry, sequence: Int, fill: UInt8) -> FrameBuffer {
    let frame = FrameBuffer(geometry: geometry)
    frame.pixels.initializeMemory(as: UInt8.self, repeating: fill)
    frame.sequence = sequence
    return frame
}

@Test func newestPublishedFrameWinsAndIsTakenOnce() throws {
    let exchange = FrameExchange()
    let geometry = FrameGeometry(widthPx: 8, heightPx: 6, chroma: .yuv420(.jpeg))
    #expect(exchange.takeNewest() == nil)
    for sequence in 0..<5 {
        let published = exchange.publish(
            frame: frame(geometry, sequence: sequence, fill: UInt8(sequence)),
            overlays: UnsafeBufferPointer(start: nil, count: 0),
            stats: PreviewStats(lagMs: Double(sequence)))
        #expect(published)
    }
    let slot = try #require(exchange.takeNewest())
    #expect(slot.frame.sequence == 4)
    #expect(slot.stats.lagMs == 4)
    #expect(slot.frame.pixels.allSatisfy { $0 == 4 }, "pixels were copied, not shared")
    #expect(exchange.takeNewest() == nil, "the same frame is not handed out twice")
    #expect(exchange.publishedCount.load(ordering: .relaxed) == 5)
}

@Test func readerKeepsItsSlotWhileThePublisherWritesOn() throws {
    let exchange = FrameExchange()
    let geometry = FrameGeometry(widthPx: 4, heightPx: 4, chroma: .mono)
    let none = UnsafeBufferPointer<PreviewQuad>(start: nil, count: 0)
    exchange.publish(frame: frame(geometry, sequence: 1, fill: 1), overlays: none, stats: PreviewStats())
    let held = try #require(exchange.takeNewest())
    for sequence in 2..<10 {
        exchange.publish(
            frame: frame(geometry, sequence: sequence, fill: UInt8(sequence)), overlays: none,
            stats: PreviewStats())
    }
    #expect(
        held.frame.sequence == 1 && held.frame.pixels.allSatisfy { $0 == 1 },
        "publisher wrote into the reader's slot")
    #expect(try #require(exchange.takeNewest()).frame.sequence == 9)
}

@Test func geometryChangeReplacesTheSlotsAndOverlaysAreCapped() throws {
    let exchange = FrameExchange()
    let small = FrameGeometry(widthPx: 4, heightPx: 4, chroma: .mono)
    let large = FrameGeometry(widthPx: 16, heightPx: 8, chroma: .yuv444)
    let quads = (0..<40).map {
        PreviewQuad(
            .init(xPx: 0, yPx: 0), .init(xPx: 1, yPx: 0), .init(xPx: 1, yPx: 1),
            .init(xPx: 0, yPx: 1), trackId: $0)
    }
    // No reader holds the slot: each publish succeeds.
    #expect(
        quads.withUnsafeBufferPointer {
            exchange.publish(frame: frame(small, sequence: 1, fill: 1), overlays: $0, stats: PreviewStats())
        })
    let first = try #require(exchange.takeNewest())
    #expect(first.overlayCount == FrameExchange.maxOverlays)
    #expect(first.overlays[FrameExchange.maxOverlays - 1].trackId == FrameExchange.maxOverlays - 1)
    #expect(
        Array(quads[0..<3]).withUnsafeBufferPointer {
            exchange.publish(frame: frame(large, sequence: 2, fill: 2), overlays: $0, stats: PreviewStats())
        })
    let second = try #require(exchange.takeNewest())
    #expect(second.frame.geometry == large && second.frame.sequence == 2)
    #expect(second.overlayCount == 3)
    #expect(first.frame.geometry == small, "the reader's old slot stays intact")
}
