/// How many views of each photo `Personalizer.train` caches: the options' counts, shrunk together so that the whole
/// frozen cache (held-out, training, rehearsal and guard views, targets included) fits `maxCachedBytes`. The user's
/// training views go first, down to 2; then rehearsal to 1; then held-out and guard to 1; then training to 1. Never
/// below one view a photo, so a very large folder can still pass the cap (each photo is seen once).
///
/// Value type; pure.
struct ViewPlan: Equatable {
    var heldout: Int
    var training: Int
    var rehearsal: Int
    var guardViews: Int

    /// Photos of each kind.
    struct Counts {
        var heldout: Int, training: Int, rehearsed: Int, guardPhotos: Int
    }

    /// - Parameter perViewBytes: one view's cached frontier plus its target, bytes.
    init(counts c: Counts, perViewBytes: Int, options: Personalizer.Options) {
        heldout = options.heldoutViews
        training = options.viewsPerPhoto
        rehearsal = options.rehearsalViews
        guardViews = options.heldoutViews
        while views(c) * perViewBytes > options.maxCachedBytes {
            if training > 2 {
                training -= 1
            } else if rehearsal > 1 {
                rehearsal -= 1
            } else if heldout > 1 || guardViews > 1 {
                heldout = 1
                guardViews = 1
            } else if training > 1 {
                training -= 1
            } else {
                break
            }
        }
    }

    /// Views cached in all.
    func views(_ c: Counts) -> Int {
        c.heldout * heldout + c.training * training + c.rehearsed * rehearsal + c.guardPhotos * guardViews
    }
}
