import Testing

@testable import Detect

#if canImport(Glibc)
    import Glibc
#endif

/// Still noisy input: the tracker's alpha-beta smoother cuts the noise by at least 30 %.
@Test func alphaBetaSmoothsStillSignals() {
    var filter = AlphaBetaFilter()
    var rng = SplitMix(7)
    var outputs: [Double] = []
    for k in 0..<600 {
        let y = filter.filter(100 + 0.8 * rng.gaussian(), timestampNs: Int64(k) * 33_333_333)
        if k >= 60 { outputs.append(y) }
    }
    let mean = outputs.reduce(0, +) / Double(outputs.count)
    let sd = (outputs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(outputs.count)).squareRoot()
    #expect(sd < 0.56, "sd \(sd) for input sd 0.8")
    #expect(abs(mean - 100) < 0.3)
}

/// A steady ramp (30 px/s = 1 px a frame): the alpha-beta smoother trails by under a tenth of a frame's motion.
@Test func alphaBetaFollowsARampWithoutLag() {
    var filter = AlphaBetaFilter()
    var last = 0.0, truth = 0.0
    for k in 0..<150 {
        truth = Double(k)
        last = filter.filter(truth, timestampNs: Int64(k) * 33_333_333)
    }
    #expect(abs(truth - last) < 0.1, "trails by \(truth - last) px at 1 px/frame")
}

func observation(_ q: Quad) -> Observation { Observation(quad: q, confidence: 0.9, aspectRatio: 0.75) }

@Test func tracksAppearAfterTwoOfThreeAndDisappearAfterSixMisses() {
    let tracker = PhotoTracker()
    let q = placedQuad(centre: PixelPoint(200, 200), widthPx: 120, heightPx: 90, angleDegrees: 10)
    let dt: Int64 = 33_333_333
    #expect(tracker.update([observation(q)], timestampNs: 0).isEmpty)
    let shown = tracker.update([observation(q)], timestampNs: dt)
    #expect(shown.count == 1)
    let id = shown.first?.id
    for k in 2..<8 {
        let t = tracker.update([], timestampNs: Int64(k) * dt)
        #expect(t.count == 1 && t.first?.id == id && t.first?.missedFrames == k - 1)
    }
    #expect(tracker.update([], timestampNs: 8 * dt).isEmpty)
    // A single blip never shows.
    let blip = PhotoTracker()
    #expect(blip.update([observation(q)], timestampNs: 0).isEmpty)
    #expect(blip.update([], timestampNs: dt).isEmpty)
    #expect(blip.update([], timestampNs: 2 * dt).isEmpty)
}

/// Two prints moving (one fast, with camera shake) and observations arriving in shuffled order with noise and
/// dropouts: each keeps its id throughout.
@Test func idsStayStableUnderMotionNoiseAndDropouts() {
    let tracker = PhotoTracker()
    var rng = SplitMix(9)
    var ids: [Int: Int] = [:]  // print index → id
    for k in 0..<300 {
        let shake = PixelPoint(6 * sinApprox(Double(k) * 0.2), 4 * cosApprox(Double(k) * 0.13))
        let a = placedQuad(
            centre: PixelPoint(100 + Double(k) * 0.8, 200) + shake, widthPx: 120, heightPx: 90,
            angleDegrees: 10 + Double(k) * 0.1)
        let b = placedQuad(
            centre: PixelPoint(520, 300 - Double(k) * 0.3) + shake, widthPx: 100, heightPx: 140,
            angleDegrees: -20)
        var obs: [Observation] = []
        for q in [a, b] where rng.unit() > 0.1 {
            var noisy = q
            for i in 0..<4 { noisy[i] += PixelPoint(0.4 * rng.gaussian(), 0.4 * rng.gaussian()) }
            obs.append(observation(noisy.canonicallyOrdered()))
        }
        if rng.unit() < 0.5 { obs.reverse() }
        let tracks = tracker.update(obs, timestampNs: Int64(k) * 33_333_333)
        for (index, truth) in [a, b].enumerated() {
            guard let t = tracks.min(by: { maxCornerError($0.quad, truth) < maxCornerError($1.quad, truth) }) else {
                continue
            }
            if k > 20 {
                #expect(maxCornerError(t.quad, truth) < 3, "frame \(k) print \(index)")
                if let id = ids[index] { #expect(t.id == id, "frame \(k): print \(index) changed id") }
                ids[index] = t.id
            }
        }
    }
    #expect(ids.count == 2 && ids[0] != ids[1])
}

/// A correction (a full search's outline replacing the one a re-find slid onto) moves the track at once but is not
/// motion: the next prediction stays where the correction put it. The same jump as a plain observation becomes
/// velocity and the prediction runs on past it — what made corrected tracks run away on the rendered sequences.
@Test func aCorrectionMovesTheTrackWithoutBecomingMotion() {
    let q = placedQuad(centre: PixelPoint(300, 220), widthPx: 160, heightPx: 120, angleDegrees: 12)
    var moved = q
    for i in 0..<4 { moved[i] += PixelPoint(6, -4) }
    let dt: Int64 = 33_333_333
    func predictedAfterJump(corrected: Bool) -> (shown: Quad?, predicted: Quad?) {
        let tracker = PhotoTracker()
        for k in 0..<10 { _ = tracker.update([observation(q)], timestampNs: Int64(k) * dt) }
        let shown = tracker.update([observation(moved)], corrected: corrected ? 1 : 0, timestampNs: 10 * dt).first?.quad
        var predicted: [Quad] = []
        tracker.predictedQuads(into: &predicted)
        return (shown, predicted.first?.canonicallyOrdered())
    }
    let corrected = predictedAfterJump(corrected: true)
    #expect(corrected.shown.map { maxCornerError($0, moved) } ?? .infinity < 1e-9, "shown where corrected at once")
    #expect(corrected.predicted.map { maxCornerError($0, moved) } ?? .infinity < 1e-9, "no velocity from the jump")
    let plain = predictedAfterJump(corrected: false)
    #expect(plain.predicted.map { maxCornerError($0, moved) } ?? 0 > 3, "a plain jump is taken as motion")
    // A placement (a full search's outline for a photo its re-find lost) is not motion either.
    let tracker = PhotoTracker()
    for k in 0..<10 { _ = tracker.update([observation(q)], timestampNs: Int64(k) * dt) }
    _ = tracker.update([observation(moved)], placed: 1, timestampNs: 10 * dt)
    var predicted: [Quad] = []
    tracker.predictedQuads(into: &predicted)
    #expect(
        predicted.first.map { maxCornerError($0.canonicallyOrdered(), moved) } ?? .infinity < 1e-9,
        "a placement moves the track without velocity")
}

/// A print slid steadily faster than the re-find reaches: only every third frame's full search finds it (a
/// placement after two misses). The placement's shift from the prediction, a translation over three frames, becomes
/// velocity, so from then on the prediction is where the print is; a placement that only grows the outline (the
/// paper's edge around the picture's) adds none.
@Test func aPlacementAfterMissesThatShiftsTheWholeOutlineCorrectsTheVelocity() {
    let q = placedQuad(centre: PixelPoint(200, 220), widthPx: 160, heightPx: 120, angleDegrees: 12)
    func at(_ frame: Int) -> Quad {
        var moved = q
        for i in 0..<4 { moved[i] += PixelPoint(6 * Double(max(0, frame - 9)), 0) }
        return moved
    }
    let dt: Int64 = 33_333_333
    let tracker = PhotoTracker()
    var predicted: [Quad] = []
    for k in 0..<10 { _ = tracker.update([observation(at(k))], timestampNs: Int64(k) * dt) }
    // Frames 10, 11: lost (no observation); frame 12: the full search places it.
    _ = tracker.update([], timestampNs: 10 * dt)
    _ = tracker.update([], timestampNs: 11 * dt)
    _ = tracker.update([observation(at(12))], placed: 1, timestampNs: 12 * dt)
    tracker.predictedQuads(into: &predicted)
    #expect(
        predicted.first.map { maxCornerError($0.canonicallyOrdered(), at(13)) } ?? .infinity < 1e-6,
        "predicted where the print slides next")
    // The same with an outline 8 % larger about its centre: moved, not moving.
    let still = PhotoTracker()
    for k in 0..<10 { _ = still.update([observation(q)], timestampNs: Int64(k) * dt) }
    _ = still.update([], timestampNs: 10 * dt)
    _ = still.update([], timestampNs: 11 * dt)
    var grown = q
    let c = q.centroid
    for i in 0..<4 { grown[i] = c + (q[i] - c) * 1.08 }
    _ = still.update([observation(grown)], placed: 1, timestampNs: 12 * dt)
    still.predictedQuads(into: &predicted)
    #expect(
        predicted.first.map { maxCornerError($0.canonicallyOrdered(), grown) } ?? .infinity < 1e-6,
        "a grown outline adds no velocity")
}

/// A print partly out of view: its out-of-view side is not measured, so a re-find puts it where the track
/// predicted it. Followed from those echoes, the side's corners keep whatever motion they had when the camera turns
/// (the predicted motion sustains itself); completed from the visible corners' rigid motion
/// (`Quad.completingUnmeasuredSides`), they follow the print.
@Test func anOutOfViewSideMovesWithTheVisiblePart() {
    let dt: Int64 = 33_333_333
    let start = placedQuad(centre: PixelPoint(560, 200), widthPx: 200, heightPx: 150, angleDegrees: 5)
    // Camera pan: 3 px/frame right for 20 frames, then back left, with a slow turn (0.1°/frame).
    func truth(_ k: Int) -> Quad {
        let shiftPx = Double(min(k, 20)) * 3 - Double(max(0, k - 20)) * 3
        let angle = Double(k) * 0.1 * Double.pi / 180
        let centre = start.centroid
        var q = start
        for i in 0..<4 {
            let d = start[i] - centre
            q[i] =
                centre + PixelPoint(d.x * cos(angle) - d.y * sin(angle), d.x * sin(angle) + d.y * cos(angle))
                + PixelPoint(shiftPx, 0)
        }
        return q
    }
    /// Worst error of the out-of-view corners (1, 2) and of the measured ones (0, 3), px.
    func worstCornerErrorsPx(marked: Bool) -> (outOfView: Double, measured: Double) {
        let tracker = PhotoTracker()
        var worst = (outOfView: 0.0, measured: 0.0)
        var predicted: [Quad] = []
        for k in 0..<60 {
            var q = truth(k)
            var sides = 0
            if k >= 10, let p = predicted.first?.canonicallyOrdered() {
                // Side 1 (corners 1–2) out of view: the re-find keeps the predicted line there and meets it with
                // the measured sides 0 and 2.
                let t = q
                q[1] = EdgeRefiner.intersect(t[0], t[1] - t[0], p[1], p[2] - p[1]) ?? p[1]
                q[2] = EdgeRefiner.intersect(t[3], t[2] - t[3], p[1], p[2] - p[1]) ?? p[2]
                sides = marked ? 0b0010 : 0
            }
            let o = Observation(quad: q, confidence: 0.9, aspectRatio: 0.75, outOfViewSides: sides)
            let shown = tracker.update([o], timestampNs: Int64(k) * dt)
            tracker.predictedQuads(into: &predicted)
            if k >= 15, let t = shown.first?.quad {
                let e = truth(k)
                for i in 0..<4 {
                    let d = ((t[i] - e[i]) * (t[i] - e[i])).sum().squareRoot()
                    if i == 1 || i == 2 {
                        worst.outOfView = max(worst.outOfView, d)
                    } else {
                        worst.measured = max(worst.measured, d)
                    }
                }
            }
        }
        return worst
    }
    // The smoother trails every corner where the pan turns back (a 6 px/frame² step); the completed corners do
    // no worse than the measured ones.
    let completed = worstCornerErrorsPx(marked: true)
    let echoed = worstCornerErrorsPx(marked: false)
    #expect(
        completed.outOfView < completed.measured + 0.5,
        "out-of-view corners \(completed.outOfView) px, measured ones \(completed.measured) px")
    #expect(echoed.outOfView > completed.measured + 10, "the echoed prediction runs off (worst \(echoed.outOfView) px)")
}

@Test func completingUnmeasuredSidesFollowsASimilarity() {
    let reference = placedQuad(centre: PixelPoint(300, 200), widthPx: 180, heightPx: 120, angleDegrees: 3)
    // Moved by a similarity: 2° turn, 1 % larger, shifted (7, −4).
    let angle = 2 * Double.pi / 180, scale = 1.01
    var moved = reference
    for i in 0..<4 {
        let p = reference[i]
        moved[i] = PixelPoint(
            scale * (p.x * cos(angle) - p.y * sin(angle)) + 7,
            scale * (p.x * sin(angle) + p.y * cos(angle)) - 4)
    }
    var observed = moved
    observed[2] += PixelPoint(25, 9)  // sides 1 and 2 out of view: corner 2 is a guess …
    observed[1] = moved[1] + (moved[1] - moved[0]) * 0.1  // … corner 1 slid along the (measured) side 0
    observed[3] = moved[3] + (moved[3] - moved[0]) * 0.1  // … corner 3 along side 3
    let completed = observed.completingUnmeasuredSides(0b0110, from: reference)
    // One measured corner (0): a translation only, so the 2° turn and the scale are not recovered, but every
    // corner stays on its measured side and the out-of-view corner is far nearer than the guess.
    #expect(completed != nil)
    if let c = completed { #expect(((c[2] - moved[2]) * (c[2] - moved[2])).sum().squareRoot() < 12) }
    // Two measured corners (0, 3; side 1 out of view): exact.
    var twoMeasured = moved
    twoMeasured[1] += (moved[1] - moved[0]) * 0.05  // the guesses slid along the measured sides 0 and 2
    twoMeasured[2] += (moved[2] - moved[3]) * -0.07
    let exact = twoMeasured.completingUnmeasuredSides(0b0010, from: reference)
    #expect(exact.map { maxCornerError($0, moved) } ?? .infinity < 1e-6)
}

/// A measured side that turns against the rest of a still photo's outline (it lies on texture or a neighbour's
/// edge) is completed from the photo's whole outline instead (`Quad.bentSides`); a new shape that holds for
/// `bendAcceptFrames` frames is taken.
@Test func aSideTurnedAgainstTheRestIsNotTaken() {
    let dt: Int64 = 33_333_333
    let q = placedQuad(centre: PixelPoint(320, 240), widthPx: 200, heightPx: 140, angleDegrees: 8)
    // Side 2 (corners 2–3) turned about its middle by ±5°, alternating (garbage changes from frame to frame).
    func turned(_ degrees: Double) -> Quad {
        var t = q
        let mid = (q[2] + q[3]) / 2, a = degrees * Double.pi / 180
        for i in 2...3 {
            let d = q[i] - mid
            t[i] = mid + PixelPoint(d.x * cos(a) - d.y * sin(a), d.x * sin(a) + d.y * cos(a))
        }
        return t
    }
    func worstErrorPx(_ parameters: TrackerParameters, from: Int, frames: Int, observed: (Int) -> Quad) -> Double {
        let tracker = PhotoTracker(parameters: parameters)
        var worst = 0.0
        for k in 0..<frames {
            let shown = tracker.update([observation(k < 20 ? q : observed(k))], timestampNs: Int64(k) * dt)
            if k >= from, let t = shown.first { worst = max(worst, maxCornerError(t.quad, q)) }
        }
        return worst
    }
    let swinging: (Int) -> Quad = { k in turned(k % 2 == 0 ? 5 : -5) }
    let checked = worstErrorPx(TrackerParameters(), from: 20, frames: 60, observed: swinging)
    var unchecked = TrackerParameters()
    unchecked.bendToleranceDegrees = 180
    let followed = worstErrorPx(unchecked, from: 20, frames: 60, observed: swinging)
    #expect(checked < 0.5, "the still outline holds (worst \(checked) px)")
    #expect(followed > 3, "without the check the turned side is followed (worst \(followed) px)")
    // A turned side that holds still is the photo's new shape: taken after bendAcceptFrames.
    let held = PhotoTracker()
    var shown: Quad?
    for k in 0..<60 {
        shown = held.update([observation(k < 20 ? q : turned(5))], timestampNs: Int64(k) * dt).first?.quad
    }
    #expect(shown.map { maxCornerError($0, turned(5)) } ?? .infinity < 0.5, "a held shape is taken")
}

/// On a still print (its photo motion measured and applied), a near outline fed as the frame's observation — what
/// `PhotoTrackingSession` does with a confirmed correction of a guessed side (`Judgement.measure`) — is averaged
/// in, while the same outline as a correction re-places the track at once.
@Test func aNearOutlineIsAveragedInOnAStillPrintWhileACorrectionJumps() {
    let q = placedQuad(centre: PixelPoint(320, 240), widthPx: 200, heightPx: 150, angleDegrees: 3)
    var lowered = q  // the bottom side 3 px lower: mean corner distance 1.5 px, inside `stillGatePx`
    lowered[2] += PixelPoint(0, 3)
    lowered[3] += PixelPoint(0, 3)
    let dt: Int64 = 33_333_333
    func shownAfter(corrected: Bool) -> Quad? {
        let tracker = PhotoTracker()
        var shown: Quad?
        for k in 0..<60 {
            for t in 0..<tracker.liveTrackCount { tracker.applyMotion(.identity, toTrackAt: t) }
            shown =
                tracker.update(
                    [observation(k < 59 ? q : lowered)], corrected: corrected && k == 59 ? 1 : 0,
                    timestampNs: Int64(k) * dt
                ).first?.quad
        }
        return shown
    }
    let measured = shownAfter(corrected: false).map { maxCornerError($0, q) } ?? .infinity
    #expect(measured < 0.1, "averaged in: \(measured) px from the still outline")
    let corrected = shownAfter(corrected: true).map { maxCornerError($0, lowered) } ?? .infinity
    #expect(corrected < 1e-9, "a correction re-places the track: \(corrected) px from the new outline")
}
