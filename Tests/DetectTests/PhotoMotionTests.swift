import ColorcamCore
import Testing

@testable import Detect

#if canImport(Glibc)
    import Glibc
#endif

/// A photo on a textured table, the table left where it is while the photo turns and shifts: the estimator
/// measures the photo's own motion (its samples lie inside the photo's outline), not the table's.
@Test func photoMotionIsMeasuredFromThePhotosOwnPicture() throws {
    let photo = SyntheticPhoto(widthPx: 120, heightPx: 90, seed: 5, colour: false)
    let before = placedQuad(centre: PixelPoint(150, 120), widthPx: 120, heightPx: 90, angleDegrees: 4)
    let after = placedQuad(centre: PixelPoint(152.6, 118.7), widthPx: 120, heightPx: 90, angleDegrees: 5.2)
    let frames = framesOf(photo, at: [before, after], widthPx: 320, heightPx: 240, textureAmplitude: 25)
    let pyramid = LumaPyramid(geometry: frames[0].geometry)
    let estimator = PhotoMotionEstimator()
    pyramid.load(frames[0])
    #expect(estimator.estimate(pyramid, region: before) == nil, "the first frame is the key: no motion yet")
    pyramid.load(frames[1])
    let motion = try #require(estimator.estimate(pyramid, region: before))
    let moved = try #require(before.mapped(by: motion))
    #expect(maxCornerError(moved, after) < 0.1, "corners moved to \(moved) vs \(after)")
    let uncertaintyPx = estimator.lastUncertaintyPx
    #expect(uncertaintyPx > 0 && uncertaintyPx < 0.2, "the fit places the corners to \(uncertaintyPx) px")
    // The same frame again: no motion.
    let still = try #require(estimator.estimate(pyramid, region: before))
    #expect(maxCornerError(try #require(after.mapped(by: still)), after) < 0.02)
}

/// A frame that takes a new key reports the photo's motion too: the new key's centre and scale (from the region
/// given then, here a part of the photo off its centre) must not be those the motion is read in.
@Test func aFrameThatTakesANewKeyReportsThePhotosMotion() throws {
    let photo = SyntheticPhoto(widthPx: 120, heightPx: 90, seed: 5, colour: false)
    let before = placedQuad(centre: PixelPoint(150, 120), widthPx: 120, heightPx: 90, angleDegrees: 4)
    let after = placedQuad(centre: PixelPoint(152.6, 118.7), widthPx: 120, heightPx: 90, angleDegrees: 7)
    let frames = framesOf(photo, at: [before, after], widthPx: 320, heightPx: 240, textureAmplitude: 25)
    var parameters = PhotoMotionParameters()
    parameters.rekeyDisplacementPx = 0  // every measured frame takes a new key
    let estimator = PhotoMotionEstimator(parameters: parameters)
    let pyramid = LumaPyramid(geometry: frames[0].geometry)
    pyramid.load(frames[0])
    #expect(estimator.estimate(pyramid, region: before) == nil)
    pyramid.load(frames[1])
    let part = placedQuad(centre: PixelPoint(125, 105), widthPx: 50, heightPx: 40, angleDegrees: 7)
    let motion = try #require(estimator.estimate(pyramid, region: part))
    let moved = try #require(before.mapped(by: motion))
    #expect(maxCornerError(moved, after) < 0.15, "corners moved to \(moved) vs \(after)")
}

@Test func aPhotoWithoutTextureHasNoMeasuredMotion() {
    let blank = SyntheticPhoto(widthPx: 120, heightPx: 90, seed: 5, colour: false, borderFraction: 0.5)
    let quad = placedQuad(centre: PixelPoint(150, 120), widthPx: 120, heightPx: 90, angleDegrees: 4)
    let frame = renderFrame(
        widthPx: 320, heightPx: 240, table: (90, 128, 128), textureAmplitude: 25,
        photos: [(blank, quad)], noiseSigma: 0.5, seed: 3)
    let pyramid = LumaPyramid(geometry: frame.geometry)
    pyramid.load(frame)
    let estimator = PhotoMotionEstimator()
    #expect(estimator.estimate(pyramid, region: quad) == nil)
    #expect(estimator.estimate(pyramid, region: quad) == nil, "flat paper gives the fit nothing to hold on to")
}

@Test func onlyRigidFrameToFrameMotionIsAccepted() {
    let a = 2 * Double.pi / 180
    let turn = Homography((cos(a) * 1.01, -sin(a) * 1.01, 3, sin(a) * 1.01, cos(a) * 1.01, -2, 0, 0, 1))
    #expect(PhotoMotionEstimator.isRigid(turn, tolerance: 0.02), "a 2° turn with 1 % zoom")
    #expect(!PhotoMotionEstimator.isRigid(Homography((1.05, 0, 0, 0, 1.05, 0, 0, 0, 1)), tolerance: 0.02))
    #expect(!PhotoMotionEstimator.isRigid(Homography((1, 0.04, 0, 0, 1, 0, 0, 0, 1)), tolerance: 0.02), "shear")
    #expect(!PhotoMotionEstimator.isRigid(Homography((1, 0, 0, 0, 0.96, 0, 0, 0, 1)), tolerance: 0.02))
}

/// Corners of a still print observed with noise: with its (here zero) motion applied every frame, the tracker
/// averages them over many frames; without, it follows them with its light smoothing.
@Test func appliedMotionLetsTheTrackerAverageAStillPrint() {
    let truth = placedQuad(centre: PixelPoint(320, 240), widthPx: 200, heightPx: 150, angleDegrees: 7)
    func cornerStdPx(applyingMotion: Bool) -> Double {
        let tracker = PhotoTracker()
        var rng = SplitMix(11)
        var errors: [Double] = []
        for k in 0..<130 {
            if applyingMotion { for t in 0..<tracker.liveTrackCount { tracker.applyMotion(.identity, toTrackAt: t) } }
            var q = truth
            for i in 0..<4 { q[i] = q[i] + PixelPoint(0.5 * rng.gaussian(), 0.5 * rng.gaussian()) }
            let shown = tracker.update(
                [Observation(quad: q, confidence: 0.9, aspectRatio: 0.75)],
                timestampNs: Int64(k) * 33_333_333)
            if k >= 30, let track = shown.first {
                let c = track.quad.canonicallyOrdered(), t = truth.canonicallyOrdered()
                errors.append(c[0].x - t[0].x)
            }
        }
        let mean = errors.reduce(0, +) / Double(errors.count)
        return (errors.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(errors.count)).squareRoot()
    }
    let followed = cornerStdPx(applyingMotion: false), averaged = cornerStdPx(applyingMotion: true)
    #expect(followed > 0.25, "light smoothing keeps much of the 0.5-px noise: \(followed)")
    #expect(averaged < 0.1, "averaged: \(averaged) px")
}

/// A print sliding 3 px per frame whose motion is measured and applied: the averaged corners do not trail it, and on
/// a frame without an observation (every 7th) they stay where the motion put them (before, they moved on by the
/// velocity a second time: 3.2 px ahead).
@Test func appliedMotionOfASlidingPrintAddsNoLag() {
    let start = placedQuad(centre: PixelPoint(200, 240), widthPx: 200, heightPx: 150, angleDegrees: 7)
    let step = PixelPoint(3, 1)
    let tracker = PhotoTracker()
    var rng = SplitMix(12)
    var worst = 0.0
    for k in 0..<60 {
        if k > 0 {
            let shift = Homography((1, 0, step.x, 0, 1, step.y, 0, 0, 1))
            for t in 0..<tracker.liveTrackCount { tracker.applyMotion(shift, toTrackAt: t) }
        }
        var truth = start
        for i in 0..<4 { truth[i] = truth[i] + step * Double(k) }
        var q = truth
        for i in 0..<4 { q[i] = q[i] + PixelPoint(0.3 * rng.gaussian(), 0.3 * rng.gaussian()) }
        let observations = k % 7 == 3 ? [] : [Observation(quad: q, confidence: 0.9, aspectRatio: 0.75)]
        let shown = tracker.update(observations, timestampNs: Int64(k) * 33_333_333)
        if k >= 20, let track = shown.first { worst = max(worst, maxCornerError(track.quad, truth)) }
    }
    #expect(worst < 0.5, "worst corner error \(worst) px while sliding 3.2 px per frame")
}

/// An outline that keeps moving while the measured motion says the photo is still (an outline over two prints, one
/// of them sliding; a slipped registration) is followed with the light smoothing, not averaged. Its velocity is the
/// measured motion's (none), so it trails by about one frame's slide; averaged, it would fall behind until the
/// filter's 12-px snap, again and again.
@Test func anOutlineThatDisagreesWithTheMotionIsFollowed() {
    let start = placedQuad(centre: PixelPoint(200, 240), widthPx: 200, heightPx: 150, angleDegrees: 7)
    let tracker = PhotoTracker()
    var worstError = 0.0
    for k in 0..<60 {
        for t in 0..<tracker.liveTrackCount { tracker.applyMotion(.identity, toTrackAt: t) }
        var q = start
        let slide = PixelPoint(3, 0) * Double(max(0, k - 20))
        for i in 0..<4 { q[i] = q[i] + slide }
        let shown = tracker.update(
            [Observation(quad: q, confidence: 0.9, aspectRatio: 0.75)],
            timestampNs: Int64(k) * 33_333_333)
        if k >= 40, let track = shown.first { worstError = max(worstError, maxCornerError(track.quad, q)) }
    }
    #expect(worstError < 4.5, "the track trails the outline by up to \(worstError) px")
}

/// A re-find on a faint side lands somewhere near wherever it starts (here up to 0.4 px either way, every frame).
/// With the motion applied it starts from its last outline kept within 1 px of the averaged corners; from its last
/// outline alone it random-walks and the average follows it (seed 13: 7.0 px at worst, against 2.2 px leashed).
@Test func aRefindThatFollowsItsStartDoesNotWalkTheTrackAway() {
    let truth = placedQuad(centre: PixelPoint(320, 240), widthPx: 200, heightPx: 150, angleDegrees: 7)
    func walkedPx(leashPx: Double) -> Double {
        var parameters = TrackerParameters()
        parameters.refindLeashPx = leashPx
        let tracker = PhotoTracker(parameters: parameters)
        var rng = SplitMix(13)
        var predicted: [Quad] = []
        var worst = 0.0
        for k in 0..<300 {
            for t in 0..<tracker.liveTrackCount { tracker.applyMotion(.identity, toTrackAt: t) }
            tracker.predictedQuads(into: &predicted)
            var q = predicted.first ?? truth
            q[0] = q[0] + PixelPoint(0.4 * (2 * rng.unit() - 1), 0.4 * (2 * rng.unit() - 1))
            let shown = tracker.update(
                [Observation(quad: q, confidence: 0.9, aspectRatio: 0.75)],
                timestampNs: Int64(k) * 33_333_333)
            if k >= 30, let track = shown.first { worst = max(worst, maxCornerError(track.quad, truth)) }
        }
        return worst
    }
    let leashed = walkedPx(leashPx: 1), free = walkedPx(leashPx: .infinity)
    #expect(leashed < 3, "kept near the average: \(leashed) px")
    #expect(free > 2 * leashed, "from its last outline alone: \(free) px")
}

/// A print at rest that a hand starts sliding: 21 px in one frame, beyond where the constant-velocity guess (no
/// motion) lets the coarse-to-fine fit converge. The estimator searches for it around the guess and measures
/// the jump; with the search off, the registration fails and the motion is lost.
@Test func aPrintThatStartsToSlideIsFoundAgainBySearching() throws {
    let photo = blotchyPhoto(widthPx: 240, heightPx: 180, seed: 21)
    let rest = placedQuad(centre: PixelPoint(300, 240), widthPx: 240, heightPx: 180, angleDegrees: 6)
    let moved = placedQuad(centre: PixelPoint(318, 228.5), widthPx: 240, heightPx: 180, angleDegrees: 6)
    let frames = framesOf(photo, at: [rest, rest, moved], widthPx: 640, heightPx: 480, textureAmplitude: 25)
    func measuredLastFrame(searchRadiusPx: Double) -> Homography? {
        var parameters = PhotoMotionParameters()
        parameters.searchRadiusPx = searchRadiusPx
        let estimator = PhotoMotionEstimator(parameters: parameters)
        let pyramid = LumaPyramid(geometry: frames[0].geometry)
        var last: Homography?
        for frame in frames {
            pyramid.load(frame)
            last = estimator.estimate(pyramid, region: rest)
        }
        return last
    }
    let motion = try #require(measuredLastFrame(searchRadiusPx: 24), "the slide's first frame is measured")
    let placed = try #require(rest.mapped(by: motion))
    #expect(maxCornerError(placed, moved) < 0.3, "corners placed at \(placed) vs \(moved)")
    #expect(measuredLastFrame(searchRadiusPx: 0) == nil, "without the search the 21-px jump is not registered")
}

/// A print found while it slides 9 px a frame (a full search only on the first frame; then re-finds and its measured
/// motion): its motion estimator is keyed on the frame the search found it, with that frame's outline, so the track
/// goes with it. Keyed a frame later from the outline of the frame before, the key was 9 px off the print, a strip
/// of table in it, and the track fell 9 px behind. Past `rekeyDisplacementPx` (frame 7) the key is taken again where
/// the measured motion puts the photo in that frame, not where it was in the frame before.
@Test func aPrintFoundWhileSlidingIsFollowed() throws {
    let photo = blotchyPhoto(widthPx: 120, heightPx: 90, seed: 31, levels: 140...240)
    let quads = (0..<13).map { k in
        placedQuad(
            centre: PixelPoint(90 + 9 * Double(k), 120 + 2 * Double(k)), widthPx: 120, heightPx: 90,
            angleDegrees: 4)
    }
    let frames = framesOf(photo, at: quads, widthPx: 320, heightPx: 240, textureAmplitude: 10)
    let session = PhotoTrackingSession(geometry: frames[0].geometry, fullDetectionInterval: 1000)
    var worst = 0.0
    for (k, frame) in frames.enumerated() {
        let shown = session.process(frame, timestampNs: Int64(k) * 33_333_333)
        guard k >= 3 else { continue }
        let track = try #require(shown.first, "the print is shown at frame \(k)")
        worst = max(worst, maxCornerError(track.quad, quads[k]))
    }
    #expect(worst < 2, "the track is \(worst) px from the sliding print at worst")
}

/// When the photo has moved `rekeyDisplacementPx` from its key, the key is taken again where the measured motion puts
/// the photo in this frame: the outline it is given is the photo's in the frame before (a tracker's, before this
/// frame's observations), 9 px behind a print sliding 9 px a frame.
@Test func aNewKeyIsTakenWhereThePhotoIsNow() throws {
    let photo = blotchyPhoto(widthPx: 120, heightPx: 90, seed: 31, levels: 140...240)
    let quads = (0..<4).map { k in
        placedQuad(centre: PixelPoint(90 + 9 * Double(k), 120), widthPx: 120, heightPx: 90, angleDegrees: 4)
    }
    let frames = framesOf(photo, at: quads, widthPx: 320, heightPx: 240, textureAmplitude: 10)
    var parameters = PhotoMotionParameters()
    parameters.rekeyDisplacementPx = 15
    let estimator = PhotoMotionEstimator(parameters: parameters)
    let pyramid = LumaPyramid(geometry: frames[0].geometry)
    for k in 0..<3 {  // frame 2 is 18 px from the key of frame 0
        pyramid.load(frames[k])
        let measured = estimator.estimate(pyramid, region: quads[max(0, k - 1)])
        if k > 0 { _ = try #require(measured, "frame \(k)'s motion is measured") }
    }
    let key = try #require(estimator.keyRegion)
    #expect(maxCornerError(key, quads[2]) < 0.5, "the new key's outline is \(maxCornerError(key, quads[2])) px off")
}

/// A print sliding across a table seen at a slant changes scale in the picture as it goes: the faster it moves,
/// the more change of scale and shape a frame-to-frame motion may show and still count as rigid.
@Test func aFasterSlideMayChangeScaleMore() {
    let parameters = PhotoMotionParameters()
    let zoom = Homography((1, 0, 0, 0, 1.035, -15, 0, 0, 1))
    #expect(!PhotoMotionEstimator.isRigid(zoom, tolerance: parameters.deformationTolerance(shiftPx: 0)))
    #expect(PhotoMotionEstimator.isRigid(zoom, tolerance: parameters.deformationTolerance(shiftPx: 15)))
    #expect(!PhotoMotionEstimator.isRigid(zoom, tolerance: parameters.deformationTolerance(shiftPx: 2)))
}

/// A correction a full search proposed for a track moves with the photo's measured motion until the next search,
/// as the track does: the next search's outline is compared with it where the photo is then (a pan or a slide in
/// between no longer keeps two searches from agreeing). A proposal for another track stays where it was.
@Test func aProposedCorrectionMovesWithThePhoto() throws {
    let photo = SyntheticPhoto(widthPx: 120, heightPx: 90, seed: 5, colour: false)
    let before = placedQuad(centre: PixelPoint(150, 120), widthPx: 120, heightPx: 90, angleDegrees: 4)
    let after = placedQuad(centre: PixelPoint(152.6, 118.7), widthPx: 120, heightPx: 90, angleDegrees: 5.2)
    let frames = framesOf(photo, at: [before, before, after], widthPx: 320, heightPx: 240, textureAmplitude: 0)
    // No full search after the first frame: the frames after it only re-find and measure motion.
    let session = PhotoTrackingSession(geometry: frames[0].geometry, fullDetectionInterval: 1000)
    let dt: Int64 = 33_333_333
    _ = session.process(frames[0], timestampNs: 0)
    _ = session.process(frames[1], timestampNs: dt)  // the motion estimator was keyed on frame 0
    var serials: [Int] = []
    session.tracker.liveTrackSerials(into: &serials)
    let serial = try #require(serials.first, "the print is tracked")
    let proposed = placedQuad(centre: PixelPoint(150, 120), widthPx: 126, heightPx: 96, angleDegrees: 4)
    session.proposals = [.init(found: proposed, serial: serial), .init(found: proposed, serial: serial + 1)]
    _ = session.process(frames[2], timestampNs: 2 * dt)
    let photoMotion = try #require(Homography(from: before, to: after))
    let expected = try #require(proposed.mapped(by: photoMotion))
    let moved = session.proposals[0].found
    #expect(maxCornerError(moved, expected) < 0.3, "the proposal moved to \(moved), the photo's motion to \(expected)")
    #expect(session.proposals[1].found == proposed, "another track's proposal stays")
}

/// A grey picture of blotches about 12 px across (value noise) rather than the smooth test picture, whose wide
/// gradients let the fit converge from anywhere: a real picture's detail holds the fit to a few pixels around its
/// start.
private func blotchyPhoto(
    widthPx: Int, heightPx: Int, seed: UInt64, levels: ClosedRange<Double> = 60...200
) -> SyntheticPhoto {
    var photo = SyntheticPhoto(widthPx: widthPx, heightPx: heightPx, seed: 7, colour: false)
    var rng = SplitMix(seed)
    let columns = widthPx / 12 + 2, rows = heightPx / 12 + 2
    let grid = (0..<(columns * rows)).map { _ in
        levels.lowerBound + (levels.upperBound - levels.lowerBound) * rng.unit()
    }
    for y in 0..<heightPx {
        for x in 0..<widthPx {
            let u = Double(x) / 12, v = Double(y) / 12, i = Int(u), j = Int(v), fu = u - Double(i), fv = v - Double(j)
            let top = grid[j * columns + i] * (1 - fu) + grid[j * columns + i + 1] * fu
            let bottom = grid[(j + 1) * columns + i] * (1 - fu) + grid[(j + 1) * columns + i + 1] * fu
            photo.luma[y * widthPx + x] = UInt8(top * (1 - fv) + bottom * fv)
        }
    }
    return photo
}

/// One frame per quad: `photo` placed at it on a grey table (texture of `textureAmplitude` levels), 0.5-level noise.
private func framesOf(
    _ photo: SyntheticPhoto, at quads: [Quad], widthPx: Int, heightPx: Int, textureAmplitude: Double
) -> [FrameBuffer] {
    quads.map { quad in
        renderFrame(
            widthPx: widthPx, heightPx: heightPx, table: (90, 128, 128), textureAmplitude: textureAmplitude,
            photos: [(photo, quad)], noiseSigma: 0.5, seed: 3)
    }
}
