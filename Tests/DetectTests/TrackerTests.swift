import Testing
@testable import Detect

/// Static noisy input: the One-Euro output varies far less than the input.
@Test func oneEuroSmoothsStillSignals() {
    var filter = OneEuroFilter(minCutoffHz: 0.6, beta: 0.08, derivativeCutoffHz: 1.5)
    var rng = SplitMix(7)
    var outputs: [Double] = []
    for k in 0..<300 {
        let y = filter.filter(100 + 0.8 * rng.gaussian(), timestampNs: Int64(k) * 33_333_333)
        if k >= 30 { outputs.append(y) }
    }
    let mean = outputs.reduce(0, +) / Double(outputs.count)
    let sd = (outputs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(outputs.count)).squareRoot()
    #expect(sd < 0.35, "sd \(sd) for input sd 0.8")
    #expect(abs(mean - 100) < 0.3)
}

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

/// The textbook One-Euro filter lags on a ramp by about its time constant (why the tracker uses alpha-beta).
@Test func oneEuroLagsOnARamp() {
    var filter = OneEuroFilter(minCutoffHz: 0.6, beta: 0.08, derivativeCutoffHz: 1.5)
    var last = 0.0, truth = 0.0
    for k in 0..<120 {
        truth = Double(k)
        last = filter.filter(truth, timestampNs: Int64(k) * 33_333_333)
    }
    #expect(truth - last > 0.5, "trails by \(truth - last) px at 1 px/frame")
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
        let a = placedQuad(centre: PixelPoint(100 + Double(k) * 0.8, 200) + shake, widthPx: 120, heightPx: 90,
                           angleDegrees: 10 + Double(k) * 0.1)
        let b = placedQuad(centre: PixelPoint(520, 300 - Double(k) * 0.3) + shake, widthPx: 100, heightPx: 140,
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
}
