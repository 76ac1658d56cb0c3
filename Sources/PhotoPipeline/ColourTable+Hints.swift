import Detect
import Infer

/// Editing a photo's colour hints in the colour table. Every edit moves the photo's hint generation on (it is
/// colorized again, the trace's reason `hint`) and updates its record in `memory`. Under the processor's lock;
/// allocates (edits are control-plane events, not per frame).
extension ColourTable {
    /// Adds a hint at `u`,`v` (fractions of the model input) to entry `i`; when it holds `PhotoHints.maxPerPhoto`
    /// already, the oldest goes. Returns the hint.
    mutating func addHint(entry i: Int, u: Float, v: Float, red: UInt8, green: UInt8, blue: UInt8) -> PhotoHint {
        let e = entries[i]
        if e.hintCount == PhotoHints.maxPerPhoto {  // the oldest goes
            for j in 1..<PhotoHints.maxPerPhoto { e.hints[j - 1] = e.hints[j] }
            entries[i].hintCount -= 1
        }
        let hint = PhotoHint(id: nextHintID, u: u, v: v, red: red, green: green, blue: blue)
        nextHintID += 1
        e.hints[entries[i].hintCount] = hint
        entries[i].hintCount += 1
        hintsChanged(entry: i)
        return hint
    }

    /// Moves hint `id` of entry `i` to `u`,`v` (and gives it another colour when `colour` is set). Nil when the
    /// photo has no such hint.
    mutating func moveHint(
        entry i: Int, id: Int, u: Float, v: Float, colour: (red: UInt8, green: UInt8, blue: UInt8)?
    ) -> PhotoHint? {
        guard let j = hintIndex(entry: i, id: id) else { return nil }
        let old = entries[i].hints[j]
        let c = colour ?? (old.red, old.green, old.blue)
        let hint = PhotoHint(id: id, u: u, v: v, red: c.red, green: c.green, blue: c.blue)
        entries[i].hints[j] = hint
        hintsChanged(entry: i)
        return hint
    }

    /// Removes hint `id` of entry `i`; false when it has no such hint.
    mutating func removeHint(entry i: Int, id: Int) -> Bool {
        guard let j = hintIndex(entry: i, id: id) else { return false }
        let e = entries[i]
        for k in (j + 1)..<max(j + 1, e.hintCount) { e.hints[k - 1] = e.hints[k] }
        entries[i].hintCount -= 1
        hintsChanged(entry: i)
        return true
    }

    /// Removes every hint of entry `i`; returns how many there were.
    mutating func clearHints(entry i: Int) -> Int {
        let count = entries[i].hintCount
        entries[i].hintCount = 0
        hintsChanged(entry: i)
        return count
    }

    /// Entry `i`'s hints (a copy).
    func hints(entry i: Int) -> [PhotoHint] {
        Array(UnsafeBufferPointer(start: entries[i].hints, count: entries[i].hintCount))
    }

    /// Searches `memory` once for a photo that looks like entry `i`'s `thumbnail` (`FrameSampler.thumbnail`, this
    /// view): found, the entry takes its hints (turned into this view's orientation) and its record. True when it did.
    mutating func recallHints(entry i: Int, thumbnail: UnsafePointer<Float>) -> Bool {
        guard !entries[i].recallTried else { return false }
        entries[i].recallTried = true
        guard !memory.photos.isEmpty, entries[i].hintCount == 0 else { return false }
        let side = ContentSignature.side
        let signature = ContentSignature(grid: UnsafeBufferPointer(start: thumbnail, count: side * side))
        guard let (id, recalled) = memory.recall(signature) else { return false }
        let kept = recalled.suffix(PhotoHints.maxPerPhoto)
        for (j, hint) in kept.enumerated() {
            var hint = hint
            hint.id = nextHintID
            nextHintID += 1
            entries[i].hints[j] = hint
        }
        entries[i].hintCount = kept.count
        entries[i].rememberedID = id
        entries[i].hintGeneration += 1
        entries[i].rememberedID = memory.store(
            id: id, hints: UnsafeBufferPointer(start: entries[i].hints, count: entries[i].hintCount),
            signature: signature, replacingSignature: true)
        return true
    }

    /// After entry `i`'s colorization: its record gets the colours' view as its signature when it has none.
    mutating func signRemembered(entry i: Int) {
        guard let id = entries[i].rememberedID else { return }
        let thumbnail = entries[i].thumbnail, side = ContentSignature.side
        memory.sign(id: id, ContentSignature(grid: UnsafeBufferPointer(start: thumbnail, count: side * side)))
    }

    private func hintIndex(entry i: Int, id: Int) -> Int? {
        (0..<entries[i].hintCount).first { entries[i].hints[$0].id == id }
    }

    private mutating func hintsChanged(entry i: Int) {
        entries[i].hintGeneration += 1
        let side = ContentSignature.side
        let signature =
            entries[i].hasColour
            ? ContentSignature(grid: UnsafeBufferPointer(start: entries[i].thumbnail, count: side * side)) : nil
        entries[i].rememberedID = memory.store(
            id: entries[i].rememberedID,
            hints: UnsafeBufferPointer(start: entries[i].hints, count: entries[i].hintCount), signature: signature)
    }
}
