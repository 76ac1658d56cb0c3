import Infer

/// One colour hint on a photo: where and what chroma (`point`, in the photo's own coordinates), the colour the
/// person chose (sRGB; the photo keeps its own lightness), and an id that stays with the hint while it is moved.
public struct PhotoHint: Sendable, Equatable {
    public var id: Int
    public var point: HintPoint
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(id: Int, u: Float, v: Float, red: UInt8, green: UInt8, blue: UInt8) {
        let (a, b) = ColourHint(xPx: 0, yPx: 0, red: red, green: green, blue: blue).ab
        self.id = id
        point = HintPoint(u: u, v: v, a: a, b: b)
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// `#rrggbb`.
    public var colourText: String {
        "#" + [red, green, blue].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// The hints of one photo, remembered by what the photo looks like (`signature`; nil until the photo's first
/// colorization gives one).
struct RememberedHints: Sendable, Equatable {
    var id: Int
    var signature: ContentSignature?
    var hints: [PhotoHint]
}

/// Every photo's hints by content, so a photo found again — under a new track id, or after a restart with a hints
/// file — gets its hints back. Lives in the colour table (under the processor's lock); `revision` moves on every
/// change (the hints file is written when it does).
struct HintMemory: Sendable {
    /// Photos remembered; beyond this the one changed longest ago is forgotten.
    static let capacity = 256
    /// Oldest change first.
    private(set) var photos: [RememberedHints] = []
    private(set) var revision = 0
    private var nextID = 1

    init(photos: [RememberedHints] = []) {
        self.photos = Array(photos.suffix(Self.capacity))
        for i in self.photos.indices { self.photos[i].id = i + 1 }
        nextID = self.photos.count + 1
    }

    /// Stores `hints` as photo `id`'s (a new record when `id` is nil or gone, none when `hints` is empty: the record
    /// is forgotten), with `signature` when the record has none yet or `replacingSignature` (a recalled photo's hints
    /// were turned into its own coordinates: its signature must be turned too). Returns the record's id, nil when
    /// none is kept.
    mutating func store(
        id: Int?, hints: UnsafeBufferPointer<PhotoHint>, signature: ContentSignature?, replacingSignature: Bool = false
    ) -> Int? {
        revision += 1
        let index = id.flatMap { id in photos.firstIndex { $0.id == id } }
        guard !hints.isEmpty else {
            if let index { photos.remove(at: index) }
            return nil
        }
        var record = index.map { photos.remove(at: $0) } ?? RememberedHints(id: nextID, signature: nil, hints: [])
        if index == nil { nextID += 1 }
        record.hints = Array(hints)
        if record.signature == nil || (replacingSignature && signature != nil) { record.signature = signature }
        photos.append(record)
        if photos.count > Self.capacity { photos.removeFirst(photos.count - Self.capacity) }
        return record.id
    }

    /// Gives record `id` a signature when it has none (its photo's first colorization).
    mutating func sign(id: Int, _ signature: @autoclosure () -> ContentSignature) {
        guard let i = photos.firstIndex(where: { $0.id == id }), photos[i].signature == nil else { return }
        photos[i].signature = signature()
        revision += 1
    }

    /// The remembered photo that `signature` shows, with its hints turned into `signature`'s coordinates; nil when
    /// none matches.
    func recall(_ signature: ContentSignature) -> (id: Int, hints: [PhotoHint])? {
        for record in photos.reversed() {
            guard let stored = record.signature, let rotation = signature.rotation(matching: stored) else { continue }
            let hints = record.hints.map { hint -> PhotoHint in
                var turned = hint
                (turned.point.u, turned.point.v) = ContentSignature.mapFromOther(
                    hint.point.u, hint.point.v, rotation: rotation)
                return turned
            }
            return (record.id, hints)
        }
        return nil
    }
}
