import ColorcamCore
import Detect

/// Which tracked photos get colour painted in a frame: the one rule the compositor (`PhotoColorProcessor`) and
/// `colorcam detect --json` (its `painted` field, what the motion benchmark scores) share.
///
/// A track is painted when its outline was measured in this frame (`missedFrames == 0`: a coasting track sits where
/// the print was predicted to be, and colour there could land on the table) and it was measured in the previous
/// frame too (a print just found, or found again, waits one frame for its colour). A moving print is painted: the
/// session measures each photo's motion from its picture and re-finds its outline every frame, so the outline
/// follows the print. A print partly out of view is painted where it is visible (the track keeps the whole print's
/// corners; the compositor clips to the frame) — but it is colorized only while whole (`isWhole`), so its colours
/// come from a full view of it.
///
/// `maxSpeedPx` (px per frame, mean corner motion since the previous frame) keeps a limit for outlines the tracker
/// cannot follow: beyond it the print is shown without colour in that frame. A higher limit paints more frames of a
/// moving print and misplaces more colour where the outline trails it: on 12 training-split clips
/// (`tools/profile/detect_motion.py --split train --seeds 101-112`, before the second learned pass), limits
/// 8 / 12 / 16 / 24 px painted 71.7 / 74.6 / 75.7 / 75.7 % of the visible print-frames within 1.5 px of the truth
/// and misplaced colour (1.5–40 px) on 9.5 / 10.9 / 11.0 / 11.0 %; 16 covers the 10–15 px/frame slides (44 %
/// painted within 1.5 px, 0 % at 12). The rule before it (whole prints, corners moved at most 2 px) painted 67.7 %
/// and misplaced 6.5 %.
///
/// Ownership and threading: one instance per stream, on the capture thread; call `paints` for each track of a
/// frame, then `endFrame`. Allocation-free once its arrays reach the number of tracks.
public struct PaintGate {
    public var maxSpeedPx: Double
    public let geometry: FrameGeometry
    private var lastIDs: [Int] = []
    private var lastQuads: [Quad] = []
    private var nextIDs: [Int] = []
    private var nextQuads: [Quad] = []

    public init(geometry: FrameGeometry, maxSpeedPx: Double = 16) {
        self.geometry = geometry
        self.maxSpeedPx = maxSpeedPx
        lastIDs.reserveCapacity(64); nextIDs.reserveCapacity(64)
        lastQuads.reserveCapacity(64); nextQuads.reserveCapacity(64)
    }

    /// Whether `track` is painted in this frame (see the type's comment); records it for the next frame's check.
    public mutating func paints(_ track: Track) -> Bool {
        guard track.missedFrames == 0 else { return false }
        nextIDs.append(track.id); nextQuads.append(track.quad)
        guard let i = lastIDs.firstIndex(of: track.id) else { return false }
        return track.quad.meanCornerDistance(to: lastQuads[i]) <= maxSpeedPx
    }

    /// Ends the frame: the tracks `paints` saw become the previous frame's.
    public mutating func endFrame() {
        swap(&lastIDs, &nextIDs); swap(&lastQuads, &nextQuads)
        nextIDs.removeAll(keepingCapacity: true); nextQuads.removeAll(keepingCapacity: true)
    }

    /// True when every corner lies inside the frame (2 px margin): the print is seen whole, and may be colorized.
    public func isWhole(_ quad: Quad) -> Bool {
        (0..<4).allSatisfy { i in
            quad[i].x >= 2 && quad[i].y >= 2 && quad[i].x <= Double(geometry.widthPx - 2)
                && quad[i].y <= Double(geometry.heightPx - 2)
        }
    }
}
