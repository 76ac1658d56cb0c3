import ColorcamCore
import Foundation
import Synchronization
import Testing

@testable import Infer

/// The rehearsal guard of `Personalizer.train`: weights that colour the guard photos worse than the base by more
/// than `generalTolerance` are never kept, whatever they do for the user's own photos.
@Suite struct PersonalizeGuardTests {
    static let bundlePath = PersonalizeTests.root.appendingPathComponent("Models/colorcam-default").path

    /// A 96×96 photo: a lightness ramp with a bump, every pixel the given ab.
    static func photo(_ index: Int, a: Float, b: Float) -> UserPhoto {
        let n = 96
        var lightness = [Float16](), pa = [Float16](), pb = [Float16]()
        for y in 0..<n {
            for x in 0..<n {
                let dx = Float(x - 20 - 5 * index), dy = Float(y - 50)
                let l = 30 + 40 * Float(x) / Float(n) + 20 * exp(-(dx * dx + dy * dy) / 300)
                lightness.append(Float16(l))
                pa.append(Float16(a))
                pb.append(Float16(b))
            }
        }
        return UserPhoto(
            path: "generated-\(index).png", sha256: "", widthPx: n, heightPx: n, lightness: lightness, a: pa, b: pb)
    }

    /// A clock that moves `tickNs` at every reading: the run's length in views (about three readings each) and its
    /// evaluation times are the same whatever the machine's load.
    final class TickingClock: MonotonicClock {
        let tickNs: Int64
        private let now = Atomic<Int64>(0)
        init(tickNs: Int64) { self.tickNs = tickNs }
        func nowNs() -> Int64 { now.add(tickNs, ordering: .relaxed).newValue }
        func sleep(untilNs deadlineNs: Int64) {}
    }

    /// A short run: about 200 training views (2 ms a reading, a 1.2 s deadline), whatever the machine's load.
    func run(tolerance: Double) throws -> (base: [String: Tensor], outcome: Personalizer.Outcome) {
        var options = Personalizer.Options()
        options.selection = .head
        options.viewsPerPhoto = 2
        options.heldoutViews = 1
        options.rehearsalViews = 1
        options.evaluations = 3
        options.learningRate = 3e-3
        options.generalTolerance = tolerance
        let personalizer = try Personalizer(bundle: try ModelBundle.load(Self.bundlePath), options: options)
        let base = personalizer.graph.parameters
        // The user's photos are violet-blue; the general ones orange: learning the first costs the second.
        let mine = (0..<5).map { Self.photo($0, a: 22, b: -48) }
        let general = (0..<2).map { Self.photo(10 + $0, a: 20, b: 45) }
        let outcome = try personalizer.train(
            photos: mine, rehearsal: general, deadline: 1.2, clock: TickingClock(tickNs: 2_000_000),
            progress: { _ in }, shouldStop: { false })
        return (base, outcome)
    }

    @Test func weightsThatHurtTheGuardPhotosAreNeverKept() throws {
        // No weights can pass a guard that asks for a gain of 1000 % on the general photos: the base stays.
        let (base, refused) = try run(tolerance: -10)
        #expect(refused.steps > 0)
        #expect(refused.generalBefore != nil && refused.guardPhotos.count == 1 && refused.rehearsalPhotos.count == 1)
        #expect(refused.after == refused.before)
        #expect(refused.generalAfter == refused.generalBefore)
        let changed = refused.parameters.filter { name, value in value.data != base[name]?.data }.keys.sorted()
        #expect(changed.isEmpty, "kept weights differ from the base: \(changed)")
        // The same run with an open guard keeps trained weights (the user's photos did improve).
        let (_, kept) = try run(tolerance: 10)
        #expect(kept.after != kept.before)
        #expect(kept.parameters.contains { name, value in value.data != base[name]?.data })
    }
}

/// Views per photo shrink together to fit the frozen cache's cap, in the documented order, never below one.
@Suite struct ViewPlanTests {
    @Test func shrinksInOrderAndNeverBelowOne() {
        var options = Personalizer.Options()
        options.maxCachedBytes = 1000
        let counts = ViewPlan.Counts(heldout: 5, training: 20, rehearsed: 48, guardPhotos: 16)
        let full = ViewPlan(counts: counts, perViewBytes: 1, options: options)
        #expect(full == ViewPlan.make(2, 8, 2, 2))  // 298 views fit
        #expect(ViewPlan(counts: counts, perViewBytes: 3, options: options) == full)  // 894 bytes
        // Training views first: 238 views of 4 bytes fit.
        #expect(ViewPlan(counts: counts, perViewBytes: 4, options: options) == ViewPlan.make(2, 5, 2, 2))
        // Training at 2 is not enough (178 views of 8 bytes); then rehearsal, held-out and guard go to one.
        #expect(ViewPlan(counts: counts, perViewBytes: 8, options: options) == ViewPlan.make(1, 2, 1, 1))
        #expect(ViewPlan(counts: counts, perViewBytes: 1000, options: options) == ViewPlan.make(1, 1, 1, 1))
    }
}

extension ViewPlan {
    static func make(_ heldout: Int, _ training: Int, _ rehearsal: Int, _ guardViews: Int) -> ViewPlan {
        var p = ViewPlan(
            counts: Counts(heldout: 0, training: 0, rehearsed: 0, guardPhotos: 0), perViewBytes: 0,
            options: Personalizer.Options())
        (p.heldout, p.training, p.rehearsal, p.guardViews) = (heldout, training, rehearsal, guardViews)
        return p
    }
}
