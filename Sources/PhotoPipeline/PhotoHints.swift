import ColorcamCore
import Detect
import Foundation
import Infer

/// Colour hints given by clicks on the output picture ("this point is this colour", Zhang, Zhu et al. 2017's user
/// points): each click is applied to the photo under it, in that photo's own rectified coordinates, so the hint stays
/// with the print as it moves, and the photo is colorized again (the trace's `infer` reason `hint`).
///
/// Threading: `click` from any thread (queued under a lock); `takeDue`, `apply`, `load` on the capture thread
/// (`apply`/`load` under the processor's table lock); `points`/`generation` of a slot on the inference thread that
/// owns the slot's job. Allocation: `prepare` and `init`, and a click when it is applied (the table's `HintMemory`
/// keeps a copy of the photo's hints); queues and slots are fixed-capacity, and a click that finds the queue full is
/// refused.
public final class PhotoHints: @unchecked Sendable {
    // Invariant for @unchecked Sendable: `pending` is guarded by its lock; `due` is the capture thread's; a slot's
    // storage belongs to whoever holds that slot's job (the pipeline hands a slot to one thread at a time).
    /// Hints kept per photo (a further hint replaces the oldest).
    public static let maxPerPhoto = 32
    /// Clicks waiting for their frame.
    static let maxPending = 64

    struct Click: Sendable {
        /// Applied to the first analysed frame with this sequence number or later.
        var frame: Int
        var xPx: Double
        var yPx: Double
        var red: UInt8
        var green: UInt8
        var blue: UInt8
    }

    private let pending: Locked<[Click]>
    private var due: [Click] = []
    private var slotPoints: UnsafeMutablePointer<HintPoint>?
    private var slotCounts: UnsafeMutablePointer<Int>?
    private var slotGenerations: UnsafeMutablePointer<Int>?
    private var slotCount = 0

    init() {
        var queue: [Click] = []
        queue.reserveCapacity(Self.maxPending)
        pending = Locked(queue)
        due.reserveCapacity(Self.maxPending)
    }

    deinit {
        slotPoints?.deallocate()
        slotCounts?.deallocate()
        slotGenerations?.deallocate()
    }

    func prepare(slotCount: Int) {
        self.slotCount = slotCount
        slotPoints = .allocate(capacity: slotCount * Self.maxPerPhoto)
        slotCounts = .allocate(capacity: slotCount)
        slotCounts!.initialize(repeating: 0, count: slotCount)
        slotGenerations = .allocate(capacity: slotCount)
        slotGenerations!.initialize(repeating: 0, count: slotCount)
    }

    /// Queues a click; false when `maxPending` clicks already wait.
    func click(_ click: Click) -> Bool {
        pending.withLock { queue in
            guard queue.count < Self.maxPending else { return false }
            queue.append(click)
            return true
        }
    }

    /// Moves the clicks due at `frame` out of the queue (the slice is valid until the next call).
    func takeDue(frame: Int) -> ArraySlice<Click> {
        due.removeAll(keepingCapacity: true)
        pending.withLock { queue in
            var kept = 0
            for c in queue {
                if c.frame <= frame { due.append(c) } else { queue[kept] = c; kept += 1 }
            }
            queue.removeLast(queue.count - kept)
        }
        return due[...]
    }

    /// Applies `clicks` to the photos of one frame (`ids`/`quads`, `count` of them): the smallest photo containing
    /// the point gets the hint at its rectified position (a square model input of `sizePx`), and its hint generation
    /// moves on (the photo is colorized again from the next frame on). A click on no photo is logged and dropped.
    /// Capture thread, under the table lock, after the frame's photos have their entries.
    func apply(
        _ clicks: ArraySlice<Click>, ids: UnsafePointer<Int>, quads: UnsafePointer<Quad>, count: Int, sizePx n: Int,
        table: inout ColourTable, frame: Int
    ) {
        for c in clicks {
            let point = PixelPoint(c.xPx, c.yPx)
            var hit = -1
            for k in 0..<count where quads[k].contains(point) && (hit < 0 || quads[k].area < quads[hit].area) {
                hit = k
            }
            guard hit >= 0, let (u, v) = Self.photoPoint(point, in: quads[hit], sizePx: n),
                let i = table.index(of: ids[hit])
            else {
                Log.warning("hint at \(Self.text(c.xPx)),\(Self.text(c.yPx)) (frame \(frame)): no photo there; ignored")
                continue
            }
            _ = table.addHint(entry: i, u: u, v: v, red: c.red, green: c.green, blue: c.blue)
            let count = table.entries[i].hintCount
            Log.info(
                "hint at \(Self.text(c.xPx)),\(Self.text(c.yPx)) (frame \(frame)) → photo \(ids[hit]) at "
                    + "\(String(format: "%.3f,%.3f", u, v)) of its picture (\(count) hint\(count == 1 ? "" : "s"))")
        }
    }

    /// Frame pixel `point` in the photo at `quad`'s own coordinates: fractions (0…1) of a square model input of
    /// `sizePx`, through the inverse of the photo's rectification. Nil when the point lies outside the quad or the
    /// quad is degenerate.
    static func photoPoint(_ point: PixelPoint, in quad: Quad, sizePx n: Int) -> (u: Float, v: Float)? {
        guard quad.contains(point), let map = Rectifier.homography(for: quad, widthPx: n, heightPx: n)?.inverse,
            let p = map.apply(point)
        else { return nil }
        return (Float(min(max(p.x / Double(n), 0), 1)), Float(min(max(p.y / Double(n), 0), 1)))
    }

    /// A pixel coordinate as given (`12`, `12.5`).
    static func text(_ value: Double) -> String { String(format: "%g", value) }

    /// Copies `entry`'s hints into `slot` for the job about to run there. Capture thread, under the table lock.
    func load(slot: Int, from entry: ColourEntry) {
        let points = slotPoints! + slot * Self.maxPerPhoto
        for j in 0..<entry.hintCount { points[j] = entry.hints[j].point }
        slotCounts![slot] = entry.hintCount
        slotGenerations![slot] = entry.hintGeneration
    }

    /// The hints of the job in `slot`, and the hint generation they are.
    func points(slot: Int) -> UnsafeBufferPointer<HintPoint> {
        UnsafeBufferPointer(start: slotPoints! + slot * Self.maxPerPhoto, count: slotCounts![slot])
    }
    func generation(slot: Int) -> Int { slotGenerations![slot] }
}
