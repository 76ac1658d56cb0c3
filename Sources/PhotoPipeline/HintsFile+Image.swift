import Infer

/// `colorcam colorize --whole --hints-file`: an image colorized whole is one photo; the file remembers its hints by
/// its content as it does a print's (so a scan of a print given hints under the camera gets them too, and the other
/// way round). Caller's thread; reads and writes the file synchronously.
extension HintsFile {
    /// The hints the file remembers for `image` (a picture that looks like it, in any quarter turn), in `image`'s
    /// pixels; [] when none matches.
    public func hints(for image: RGBImage) throws -> [ColourHint] {
        let memory = HintMemory(photos: try load())
        guard let (_, hints) = memory.recall(Self.signature(of: image)) else { return [] }
        return hints.map { hint in
            ColourHint(
                xPx: Double(hint.point.u) * Double(image.widthPx) - 0.5,
                yPx: Double(hint.point.v) * Double(image.heightPx) - 0.5, red: hint.red, green: hint.green,
                blue: hint.blue)
        }
    }

    /// Makes `hints` (pixels of `image`) the file's hints for `image`, replacing what it had for a picture like it.
    /// Throws the write's error.
    public func remember(_ hints: [ColourHint], for image: RGBImage) throws {
        var memory = HintMemory(photos: try load())
        let signature = Self.signature(of: image)
        let points = hints.enumerated().map { k, hint in
            PhotoHint(
                id: k + 1, u: Float(min(max((hint.xPx + 0.5) / Double(image.widthPx), 0), 1)),
                v: Float(min(max((hint.yPx + 0.5) / Double(image.heightPx), 0), 1)), red: hint.red, green: hint.green,
                blue: hint.blue)
        }
        let known = memory.recall(signature)?.id
        _ = points.withUnsafeBufferPointer {
            memory.store(id: known, hints: $0, signature: signature, replacingSignature: true)
        }
        try write(Self.text(memory.photos))
    }

    /// 32×32 cell means of the image's luma.
    static func signature(of image: RGBImage) -> ContentSignature {
        let side = ContentSignature.side, w = image.widthPx, h = image.heightPx
        var sums = [Float](repeating: 0, count: side * side), counts = sums
        for y in 0..<h {
            let row = min(side - 1, y * side / h) * side
            for x in 0..<w {
                let i = 3 * (y * w + x), cell = row + min(side - 1, x * side / w)
                sums[cell] +=
                    0.299 * Float(image.pixels[i]) + 0.587 * Float(image.pixels[i + 1]) + 0.114
                    * Float(image.pixels[i + 2])
                counts[cell] += 1
            }
        }
        let means = (0..<(side * side)).map { counts[$0] > 0 ? sums[$0] / counts[$0] : 0 }
        return means.withUnsafeBufferPointer { ContentSignature(grid: $0) }
    }
}
