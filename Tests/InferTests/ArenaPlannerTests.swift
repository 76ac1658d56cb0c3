import Testing

@testable import Infer

@Suite struct ArenaPlannerTests {
    @Test func releasedBlocksAreReusedAndMerged() {
        var p = ArenaPlanner()
        let a = p.allocate(10), b = p.allocate(20), c = p.allocate(5)
        #expect([a, b, c] == [0, 16, 48])
        p.release(a); p.release(b)
        #expect(p.allocate(40) == 0, "freed neighbours merge into one block")
        #expect(p.allocate(3) == 64)
        #expect(p.end == 64 + 16)
    }
}
