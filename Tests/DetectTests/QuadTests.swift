import Testing

@testable import Detect

@Test func canonicalOrderStartsNearTopLeftAndRunsClockwise() {
    let q = Quad(PixelPoint(10, 100), PixelPoint(100, 100), PixelPoint(100, 10), PixelPoint(10, 10))
    let c = q.canonicallyOrdered()
    #expect(c[0] == PixelPoint(10, 10))
    #expect(c[1] == PixelPoint(100, 10))
    #expect(c[2] == PixelPoint(100, 100))
    #expect(c.signedArea > 0)
}
