/// Tuning of `PhotoTracker`.
public struct TrackerParameters: Sendable, Hashable {
    /// A track is shown once it was observed in `appearHits` of the last `appearWindow` frames.
    public var appearHits = 2
    public var appearWindow = 3
    /// A shown track disappears after this many frames in a row without an observation.
    public var disappearMisses = 6
    /// Corner smoothing (constant-velocity alpha-beta filter per coordinate, see `AlphaBetaFilter`).
    public var smoothingAlpha = 0.5
    public var smoothingBeta = 0.15
    /// An observation matches a track when its mean corner distance to the track's predicted corners is below this
    /// fraction of the track's size (square root of its area).
    public var matchDistanceFraction = 0.4
    /// A shown track ignores (coasts through) an observation whose area is smaller than its own by more than this
    /// fraction: the detector found an inner outline of the same photo (the picture inside a white border, a side
    /// cut short by a finger). After `shapeRejectionLimit` such frames in a row the new outline is accepted. A larger
    /// outline (the white border's outer edge found again) is taken at once, with the smoothing restarted.
    public var shapeTolerance = 0.08
    public var shapeRejectionLimit = 30
    /// A measured side both of whose corner angles differ by more than this from the photo's shape (its whole
    /// outlines' angles, averaged with weight `shapeAveragingWeight` per frame) is taken as not measured
    /// (`Quad.bentSides`) — unless the new shape holds (angles within half this of the first bent frame's) for
    /// `bendAcceptFrames` frames in a row: then it is the photo's.
    public var bendToleranceDegrees = 2.0
    public var bendAcceptFrames = 15
    public var shapeAveragingWeight = 0.05
    /// Corner smoothing on frames whose photo motion was measured and applied (`applyMotion`): the corners are
    /// averaged with this weight per frame (1/n over the first frames), since what is left after the motion is the
    /// outline's noise. 0.02 averages about 100 frames: the noise of a still print's corners drops about 10×.
    public var stillAlpha = 0.02
    /// …unless the outline lies further than this from where the motion put the track (mean corner distance, px):
    /// then the two disagree (an outline over two prints that move apart, a photo put down elsewhere) and that
    /// frame is followed with the light smoothing, as when no motion was measured.
    public var stillGatePx = 2.0
    /// On such frames the re-find searches from its last outline as moved, each corner kept within this distance of
    /// the averaged corners (see `State.prediction(leashPx:)`), px.
    public var refindLeashPx = 1.0
    /// A full search's outline that places a track the re-find lost (`update`'s `placed`) also corrects the track's
    /// velocity when it lies shifted from the track's prediction as a whole — a translation of at least this many px
    /// per frame since the track's last measurement, twice the corners' scatter about it: the photo slid faster
    /// than the re-find's reach, and without the correction its re-finds would keep losing it. (Another edge of
    /// the same photo, the other outline a placement may carry, grows or shrinks the outline instead.)
    public var placementSlidePxPerFrame = 1.0

    public init() {}
}

/// A photo followed across frames.
public struct Track: Sendable, Hashable {
    /// Stable identity: the same photo keeps its id for as long as it is tracked; ids are never reused.
    public var id: Int
    /// Smoothed corners, canonical order (clockwise from the corner nearest the frame's top-left).
    public var quad: Quad
    public var confidence: Double
    public var aspectRatio: Double
    /// Frames since the last matching observation (0 = observed this frame).
    public var missedFrames: Int
}

/// Follows photos across frames: matches each frame's observations to tracks (greedy on predicted corner distance,
/// with a constant-velocity prediction so camera motion does not break matches), smooths corners with
/// constant-velocity alpha-beta filters (no lag on steady motion; a One-Euro low-pass lags by its time constant) —
/// or, on frames whose photo motion was measured and applied (`applyMotion`), moves them by it and averages them
/// over many frames — shows a track after N-of-M observations and drops it after K misses.
///
/// Ownership and threading: one instance per stream, called from one thread (the capture thread) in timestamp
/// order. `update` allocates nothing once its arrays have reached their working size, except when a track is born.
/// Not `Sendable`.
public final class PhotoTracker {
    private struct State {
        var id: Int  // -1 until confirmed
        /// Unique for the tracker's life, tentative tracks included (`liveTrackSerials`).
        var serial: Int
        /// This frame's photo motion was measured and applied (`applyMotion`): the prediction is `raw` as moved,
        /// kept near the averaged corners, and the corners are averaged (`AlphaBetaFilter.filterStill`).
        var motionApplied = false
        var filters: [AlphaBetaFilter]  // 8: x0 y0 x1 y1 …
        var raw: Quad
        var smoothed: Quad
        var velocityPxPerFrame: [PixelPoint]  // 4
        var history: UInt32  // bit 0 = this frame observed
        var missed: Int
        var confidence: Double
        var aspectRatio: Double
        var matched: Bool
        /// Observations in a row whose area disagreed with the track's (another outline of the same photo).
        var shapeRejections: Int
        /// The smoothed outline when all four sides were last measured: an outline with unmeasured sides (out of
        /// view, no clear edge, bent) is completed from it (`Quad.completingUnmeasuredSides`).
        var wholeOutline: Quad?
        /// The photo's interior angles (degrees), a slow average over its whole outlines; nil until one was seen.
        var shapeAnglesDegrees: SIMD4<Double>?
        /// Frames in a row the observation had a bent side (`Quad.bentSides`) with about the same shape as the first
        /// of them, and that first one's angles.
        var bentFrames: Int
        var bentAnglesDegrees: SIMD4<Double>

        /// Where the photo is expected this frame, where the re-find searches from. When the measured motion was
        /// applied: the last re-found outline as moved, each corner kept within `leashPx` of the averaged corners.
        /// Searching from the last re-found outline alone, a re-find on a faint side follows its own last result and
        /// random-walks, and the average follows it (benchmark seed 2's left side drifted 10–20 px in 10 s);
        /// searching from the average alone, a track born on a wrong edge keeps it (a sliding print's outline stayed
        /// 4–8 px off for 10 s instead of finding the paper's edge in 5 s). Else `raw` moved by the velocity.
        func prediction(leashPx: Double) -> Quad {
            if motionApplied {
                var q = raw
                for i in 0..<4 {
                    let d = raw[i] - smoothed[i]
                    let lengthPx = (d * d).sum().squareRoot()
                    if lengthPx > leashPx { q[i] = smoothed[i] + d * (leashPx / lengthPx) }
                }
                return q
            }
            var q = raw
            for i in 0..<4 { q[i] = q[i] + velocityPxPerFrame[i] }
            return q
        }

        /// How far per frame `quad` (a full search's outline placing this track) lies translated from `predicted`
        /// (this frame's prediction) since the track's last measurement, when that is a slide (see
        /// `TrackerParameters.placementSlidePxPerFrame`); zero otherwise.
        func slidePerFrame(to quad: Quad, from predicted: Quad, minimumPx: Double) -> PixelPoint {
            guard missed > 0 else { return .zero }
            var mean = PixelPoint.zero
            for i in 0..<4 { mean += (quad[i] - predicted[i]) / 4 }
            var scatter = 0.0
            for i in 0..<4 { let r = quad[i] - predicted[i] - mean; scatter += (r * r).sum() / 4 }
            let shiftPx = (mean * mean).sum().squareRoot(), frames = Double(missed + 1)
            guard shiftPx >= minimumPx * frames, shiftPx >= 2 * scatter.squareRoot() else { return .zero }
            return mean / frames
        }

        /// The sides among `measured` that turned against the photo's shape (`Quad.bentSides`), counting how long
        /// the new shape holds; once it held `bendAcceptFrames` frames it is the photo's (none are returned, and
        /// the shape and whole outline start again from this observation).
        mutating func bentSides(of quad: Quad, measured: Int, parameters p: TrackerParameters) -> Int {
            guard let shape = shapeAnglesDegrees else { return 0 }
            let angles = quad.interiorAnglesDegrees
            let bent = Quad.bentSides(angles, from: shape, toleranceDegrees: p.bendToleranceDegrees) & measured
            guard bent != 0 else {
                bentFrames = 0
                return 0
            }
            let d = angles - bentAnglesDegrees
            if bentFrames > 0 && max(max(abs(d[0]), abs(d[1])), max(abs(d[2]), abs(d[3]))) <= p.bendToleranceDegrees / 2
            {
                bentFrames += 1
            } else {
                bentFrames = 1
                bentAnglesDegrees = angles
            }
            guard bentFrames >= p.bendAcceptFrames else { return bent }
            wholeOutline = nil
            shapeAnglesDegrees = nil
            bentFrames = 0
            return 0
        }

        /// Records `smoothed` as the photo's whole outline (all four sides measured) and averages its angles into
        /// the photo's shape (the first one sets it).
        mutating func rememberWholeOutline(averagingWeight: Double) {
            wholeOutline = smoothed
            let angles = smoothed.interiorAnglesDegrees
            shapeAnglesDegrees = shapeAnglesDegrees.map { $0 + (angles - $0) * averagingWeight } ?? angles
        }
    }

    public var parameters: TrackerParameters
    private var states: [State] = []
    private var predicted: [Quad] = []
    private var output: [Track] = []
    private var used: [Bool] = []
    private var pairs: [(cost: Double, track: Int, observation: Int, shift: Int)] = []
    private var nextID = 1
    private var nextSerial = 1

    public init(parameters: TrackerParameters = TrackerParameters()) {
        self.parameters = parameters
        states.reserveCapacity(32)
        output.reserveCapacity(32)
        used.reserveCapacity(64)
        pairs.reserveCapacity(1024)
    }

    /// Feeds one frame's observations.
    /// - Parameters:
    ///   - observations: this frame's detections (any order).
    ///   - timestampNs: the frame's capture time on a monotonic clock, nanoseconds; must not decrease.
    ///   - corrected: bit k set = observation k re-places a track's outline (a full search found the outline the
    ///     re-find had slid off): the track moves there at once, keeping its velocity, instead of taking the jump
    ///     as motion (which the next predictions would carry on). Observations from 64 on cannot be marked.
    ///   - placed: bit k set = observation k places a track without measuring its motion (a full search's outline
    ///     where the re-find lost the photo: its offset from the re-finds before is partly the two searches'
    ///     different edges): as with `corrected` the track moves there keeping its velocity, but the area checks
    ///     apply.
    /// - Returns: the shown tracks, by id. Shares storage with the tracker: copy it to keep it past the next call.
    public func update(
        _ observations: [Observation], corrected: UInt64 = 0, placed: UInt64 = 0,
        timestampNs: Int64
    ) -> [Track] {
        let p = parameters
        // Predict.
        predicted.removeAll(keepingCapacity: true)
        for t in states.indices {
            predicted.append(states[t].prediction(leashPx: p.refindLeashPx))
            states[t].matched = false
        }
        // Candidate pairs, cheapest first.
        pairs.removeAll(keepingCapacity: true)
        for t in states.indices {
            let size = predicted[t].area.squareRoot()
            for (o, observation) in observations.enumerated() {
                var best = Double.infinity, bestShift = 0
                for shift in 0..<4 {
                    let d = predicted[t].meanCornerDistance(to: observation.quad, shift: shift)
                    if d < best { best = d; bestShift = shift }
                }
                // Shown tracks claim observations before tentative ones (a tentative duplicate never steals a
                // shown track's photo).
                let penalty = states[t].id >= 0 ? 0 : 1e6
                // A correction may replace an outline by a much larger one (the whole print around a detail of
                // it): measured against the larger of the two.
                let isCorrection = o < 64 && corrected & (1 << UInt64(o)) != 0
                let matchSize = isCorrection ? max(size, observation.quad.area.squareRoot()) : size
                if best <= p.matchDistanceFraction * matchSize { pairs.append((best + penalty, t, o, bestShift)) }
            }
        }
        pairs.withUnsafeMutableBufferPointer { insertionSort($0) { $0.cost < $1.cost } }
        used.removeAll(keepingCapacity: true)
        used.append(contentsOf: repeatElement(false, count: observations.count))
        for pair in pairs where !states[pair.track].matched && !used[pair.observation] {
            used[pair.observation] = true
            states[pair.track].matched = true
            let observation = observations[pair.observation]
            var quad = observation.quad
            if pair.shift != 0 {
                // Keep the track's own corner numbering so each filter follows one physical corner.
                quad = Quad(quad[pair.shift], quad[pair.shift + 1], quad[pair.shift + 2], quad[pair.shift + 3])
            }
            // Work on a copy written back at the end of the iteration, every path. The copy takes the arrays' only
            // reference, so changing them does not copy them (no allocation).
            var state = states[pair.track]
            states[pair.track].filters = []
            states[pair.track].velocityPxPerFrame = []
            defer { states[pair.track] = state }
            let isCorrection = pair.observation < 64 && corrected & (1 << UInt64(pair.observation)) != 0
            let isPlacement = isCorrection || (pair.observation < 64 && placed & (1 << UInt64(pair.observation)) != 0)
            // Sides not measured (out of view, no clear edge), in the track's numbering.
            var unmeasuredSides = Quad.sideMask(observation.unmeasuredSides, shiftedBy: pair.shift)
            // A measured side turned against the rest is not the photo's, unless the new shape holds. A full
            // search's outline is not checked (it did not follow an edge from the prediction), and a correction
            // (one judged better than the re-find) measures the photo's shape afresh.
            if isCorrection { state.shapeAnglesDegrees = nil }
            if state.id >= 0 && !isPlacement {
                unmeasuredSides |= state.bentSides(of: quad, measured: ~unmeasuredSides & 0b1111, parameters: p)
            }
            if unmeasuredSides != 0, let whole = state.wholeOutline,
                let completed = quad.completingUnmeasuredSides(unmeasuredSides, from: whole)
            {
                quad = completed
            }
            let areaRatio = quad.area / max(1e-9, state.raw.area)
            if !isCorrection && state.id >= 0 && areaRatio < 1 - p.shapeTolerance
                && state.shapeRejections < p.shapeRejectionLimit
            {
                state.shapeRejections += 1
                state.history = (state.history << 1) | 1
                state.missed = 0
                state.raw = predicted[pair.track]
                let moved = state.motionApplied
                for i in 0..<4 {
                    let x =
                        state.filters[2 * i].coast(timestampNs: timestampNs, alreadyMoved: moved)
                        ?? state.smoothed[i].x
                    let y =
                        state.filters[2 * i + 1].coast(timestampNs: timestampNs, alreadyMoved: moved)
                        ?? state.smoothed[i].y
                    state.smoothed[i] = PixelPoint(x, y)
                }
                continue
            }
            if !isCorrection
                && (state.shapeRejections >= p.shapeRejectionLimit
                    || (state.id >= 0 && areaRatio > 1 + p.shapeTolerance))
            {
                // The new outline persisted: restart the smoothing on it.
                for k in 0..<8 { state.filters[k] = AlphaBetaFilter(alpha: p.smoothingAlpha, beta: p.smoothingBeta) }
                for i in 0..<4 { state.velocityPxPerFrame[i] = .zero; state.raw[i] = quad[i] }
            }
            state.shapeRejections = 0
            if isPlacement {
                // Moved, not moving: the velocities stay as they were — unless the photo slid away from the re-find.
                let slide =
                    isCorrection
                    ? .zero
                    : state.slidePerFrame(to: quad, from: predicted[pair.track], minimumPx: p.placementSlidePxPerFrame)
                for i in 0..<4 {
                    state.velocityPxPerFrame[i] += slide
                    state.filters[2 * i].rebase(
                        to: quad[i].x, timestampNs: timestampNs,
                        velocityChangePerSample: slide.x)
                    state.filters[2 * i + 1].rebase(
                        to: quad[i].y, timestampNs: timestampNs,
                        velocityChangePerSample: slide.y)
                }
                state.smoothed = quad
            } else if state.motionApplied && quad.meanCornerDistance(to: state.raw) <= p.stillGatePx {
                // The photo's motion was measured from its picture and applied (the velocity is that motion), and
                // the outline agrees with it: what the outline adds is noise, averaged.
                var smoothed = quad
                for i in 0..<4 {
                    smoothed[i] = PixelPoint(
                        state.filters[2 * i].filterStill(quad[i].x, timestampNs: timestampNs, alpha: p.stillAlpha),
                        state.filters[2 * i + 1].filterStill(quad[i].y, timestampNs: timestampNs, alpha: p.stillAlpha))
                }
                state.smoothed = smoothed
            } else {
                for i in 0..<4 {
                    let v = quad[i] - state.raw[i]
                    state.velocityPxPerFrame[i] = state.velocityPxPerFrame[i] * 0.5 + v * 0.5
                }
                var smoothed = quad
                for i in 0..<4 {
                    smoothed[i] = PixelPoint(
                        state.filters[2 * i].filter(quad[i].x, timestampNs: timestampNs),
                        state.filters[2 * i + 1].filter(quad[i].y, timestampNs: timestampNs))
                }
                state.smoothed = smoothed
            }
            state.raw = quad
            if unmeasuredSides == 0 { state.rememberWholeOutline(averagingWeight: p.shapeAveragingWeight) }
            state.history = (state.history << 1) | 1
            state.missed = 0
            state.confidence = observation.confidence
            state.aspectRatio = observation.aspectRatio
        }
        // Misses: coast on the predicted motion (camera motion goes on while a detection drops out), or stay where
        // the measured motion put the track.
        for t in states.indices where !states[t].matched {
            states[t].history <<= 1
            states[t].missed += 1
            states[t].raw = predicted[t]
            let moved = states[t].motionApplied
            for i in 0..<4 {
                let x =
                    states[t].filters[2 * i].coast(timestampNs: timestampNs, alreadyMoved: moved)
                    ?? states[t].smoothed[i].x
                let y =
                    states[t].filters[2 * i + 1].coast(timestampNs: timestampNs, alreadyMoved: moved)
                    ?? states[t].smoothed[i].y
                states[t].smoothed[i] = PixelPoint(x, y)
            }
        }
        // New tentative tracks, except on top of a shown one (the same photo seen with a jumpy outline).
        for (o, observation) in observations.enumerated() where !used[o] {
            let centre = observation.quad.centroid
            if states.contains(where: { $0.id >= 0 && $0.smoothed.isConvex && $0.smoothed.contains(centre) }) {
                continue
            }
            var filters: [AlphaBetaFilter] = []
            filters.reserveCapacity(8)
            var smoothed = observation.quad
            for i in 0..<4 {
                for axis in 0..<2 {
                    var filter = AlphaBetaFilter(alpha: p.smoothingAlpha, beta: p.smoothingBeta)
                    let v = filter.filter(
                        axis == 0 ? observation.quad[i].x : observation.quad[i].y,
                        timestampNs: timestampNs)
                    if axis == 0 { smoothed[i].x = v } else { smoothed[i].y = v }
                    filters.append(filter)
                }
            }
            var state = State(
                id: -1, serial: nextSerial, filters: filters, raw: observation.quad, smoothed: smoothed,
                velocityPxPerFrame: [.zero, .zero, .zero, .zero], history: 1, missed: 0,
                confidence: observation.confidence, aspectRatio: observation.aspectRatio,
                matched: true, shapeRejections: 0, wholeOutline: nil, shapeAnglesDegrees: nil,
                bentFrames: 0, bentAnglesDegrees: .zero)
            if observation.unmeasuredSides == 0 { state.rememberWholeOutline(averagingWeight: p.shapeAveragingWeight) }
            nextSerial += 1
            states.append(state)
        }
        for t in states.indices { states[t].motionApplied = false }
        // Confirm, expire, report.
        let windowMask: UInt32 = p.appearWindow >= 32 ? ~0 : (1 << UInt32(p.appearWindow)) - 1
        states.removeAll { state in
            state.id < 0
                ? (state.history & windowMask) == 0 || state.missed >= p.appearWindow
                : state.missed > p.disappearMisses
        }
        output.removeAll(keepingCapacity: true)
        for t in states.indices {
            if states[t].id < 0 && (states[t].history & windowMask).nonzeroBitCount >= p.appearHits {
                states[t].id = nextID
                nextID += 1
            }
            guard states[t].id >= 0 else { continue }
            output.append(
                Track(
                    id: states[t].id, quad: states[t].smoothed.canonicallyOrdered(),
                    confidence: states[t].confidence, aspectRatio: states[t].aspectRatio,
                    missedFrames: states[t].missed))
        }
        // States are appended in creation order and ids are assigned in state order, so `output` is already by id
        // except when an older tentative state is confirmed after a newer one: fix with an insertion pass.
        if output.count > 1 {
            for i in 1..<output.count {
                let item = output[i]
                var j = i - 1
                while j >= 0 && output[j].id > item.id { output[j + 1] = output[j]; j -= 1 }
                output[j + 1] = item
            }
        }
        return output
    }

    /// Where each live track (shown or tentative) is expected in the next frame: its last observed corners moved by
    /// its velocity, or by the photo's measured motion (`applyMotion`) and kept near its averaged corners. Appends
    /// to `into` (cleared first) so the caller's array is reused.
    public func predictedQuads(into quads: inout [Quad]) {
        quads.removeAll(keepingCapacity: true)
        for state in states { quads.append(state.prediction(leashPx: parameters.refindLeashPx)) }
    }

    /// Moves the live track at `index` (in `predictedQuads`' order) by `motion`, its photo's motion since the last
    /// frame measured from the photo's picture (`PhotoMotionEstimator`), full-resolution pixels. This frame's
    /// prediction is then the last outline so moved (kept near the averaged corners), and `update` averages the
    /// corners instead of following them.
    /// Call between updates, at most once per frame and track; the velocity becomes the motion (a frame whose motion
    /// is not measured coasts on it).
    public func applyMotion(_ motion: Homography, toTrackAt t: Int) {
        guard states.indices.contains(t), !states[t].motionApplied,
            let raw = states[t].raw.mapped(by: motion), let smoothed = states[t].smoothed.mapped(by: motion)
        else { return }
        // Work on a copy (it takes the arrays' only reference: no copy-on-write), written back at the end.
        var state = states[t]
        states[t].filters = []
        states[t].velocityPxPerFrame = []
        defer { states[t] = state }
        for i in 0..<4 {
            state.velocityPxPerFrame[i] = raw[i] - state.raw[i]
            state.filters[2 * i].move(by: smoothed[i].x - state.smoothed[i].x)
            state.filters[2 * i + 1].move(by: smoothed[i].y - state.smoothed[i].y)
        }
        state.raw = raw
        state.smoothed = smoothed
        state.motionApplied = true
        if let whole = state.wholeOutline { state.wholeOutline = whole.mapped(by: motion) }
    }

    /// Each live track's serial number (unique for the tracker's life, tentative tracks included), in
    /// `predictedQuads`' order. Appends to `into` (cleared first).
    public func liveTrackSerials(into serials: inout [Int]) {
        serials.removeAll(keepingCapacity: true)
        for state in states { serials.append(state.serial) }
    }

    /// The smoothed outline of the live track at `index` (in `predictedQuads`' order).
    public func smoothedQuad(at index: Int) -> Quad { states[index].smoothed }
    /// Whether the live track at `index` was moved by a measured photo motion this frame (`applyMotion`).
    public func isMotionApplied(at index: Int) -> Bool { states[index].motionApplied }

    /// The number of live tracks (shown and tentative): the indices `applyMotion` and `smoothedQuad` take.
    public var liveTrackCount: Int { states.count }

    /// Forgets the live track at `index` in `predictedQuads`' order (its id is not reused). Call between updates.
    func forgetTrack(at index: Int) {
        guard states.indices.contains(index) else { return }
        states.remove(at: index)
    }

    /// Forgets every track (ids keep counting up).
    public func reset() { states.removeAll(keepingCapacity: true) }
}
