import ColorcamCore
import Foundation

/// A user's colour photo, read and reduced for training: CIE Lab planes with the short side near `shortSidePx`
/// (box-reduced by an integer factor in sRGB before the conversion, so a large photo costs its decoded RGB only).
///
/// Value type; `view` is deterministic for a given generator state.
public struct UserPhoto: Sendable {
    public let path: String
    /// SHA-256 of the file, as hex (the manifest records which photos a bundle learnt from).
    public let sha256: String
    public let widthPx: Int
    public let heightPx: Int
    /// CIE L, a, b planes (float16: a photo is kept for the whole run, and 200 of them must fit in memory).
    public let lightness: [Float16]
    public let a: [Float16]
    public let b: [Float16]

    /// Share of pixels with chroma above 5 below which a picture counts as black and white (a toned print,
    /// a greyscale scan).
    public static let minColouredShare: Float = 0.03

    /// Reads `path` (PNG or JPEG).
    /// - Throws: `ImageFileError` (missing: `.missingInput`; unreadable or black and white: `.badData`), one line
    ///   naming the file.
    public static func load(_ path: String, shortSidePx: Int = 320) throws -> UserPhoto {
        let bytes = try ImageFile.readBytes(path)
        let sha256 = SHA256.hex(bytes)
        let image = try ImageFile.decode(bytes, path: path)
        // Reduce in RGB first (a box filter by an integer factor), so a large photo never has full-size Lab planes.
        var w = image.widthPx, h = image.heightPx
        var pixels = image.pixels
        let k = min(w, h) / shortSidePx
        if k >= 2 {
            let rw = w / k, rh = h / k
            var reduced = [UInt8](repeating: 0, count: 3 * rw * rh)
            image.pixels.withUnsafeBufferPointer { src in
                for y in 0..<rh {
                    for x in 0..<rw {
                        for c in 0..<3 {
                            var sum = 0
                            for dy in 0..<k {
                                let row = ((y * k + dy) * w + x * k) * 3 + c
                                for dx in 0..<k { sum += Int(src[row + 3 * dx]) }
                            }
                            reduced[(y * rw + x) * 3 + c] = UInt8((sum + k * k / 2) / (k * k))
                        }
                    }
                }
            }
            pixels = reduced
            w = rw
            h = rh
        }
        var lab = [Float](repeating: 0, count: 3 * w * h)
        pixels.withUnsafeBufferPointer { Lab.convertRGB8ToLab($0.baseAddress!, &lab, pixelCount: w * h) }
        let planes = (0..<3).map { c in (0..<(w * h)).map { lab[3 * $0 + c] } }
        let coloured = (0..<(w * h)).filter { (planes[1][$0] * planes[1][$0] + planes[2][$0] * planes[2][$0]) > 25 }
        guard Float(coloured.count) >= minColouredShare * Float(w * h) else {
            throw ImageFileError(
                .badData, file: path,
                "a black-and-white picture (\(coloured.count * 100 / max(1, w * h)) % of pixels coloured); "
                    + "personalize learns colours from colour photos: take it out of the folder")
        }
        let half = planes.map { $0.map { Float16($0) } }
        return UserPhoto(
            path: path, sha256: sha256, widthPx: w, heightPx: h, lightness: half[0], a: half[1], b: half[2])
    }

    /// One training view as the product would show this photo printed and under the camera: a crop keeping
    /// 85–100 % of each side (`jitter` false: the whole photo), a mirror half the time, resized (half-pixel
    /// bilinear) to `n`×`n` like a rectified print, and `look` applied to its L. Returns the model input (L, n×n)
    /// and the target (a then b, 2·n×n).
    public func view(
        sizePx n: Int, look: PrintLook, jitter: Bool, rng: inout some RandomNumberGenerator
    ) -> (input: [Float], target: [Float]) {
        var x0 = 0, y0 = 0, cw = widthPx, ch = heightPx
        var mirror = false
        if jitter {
            cw = Int(Float(widthPx) * .random(in: 0.85...1, using: &rng))
            ch = Int(Float(heightPx) * .random(in: 0.85...1, using: &rng))
            x0 = Int.random(in: 0...(widthPx - cw), using: &rng)
            y0 = Int.random(in: 0...(heightPx - ch), using: &rng)
            mirror = Bool.random(using: &rng)
        }
        func crop(_ plane: [Float16]) -> [Float] {
            var out = [Float](repeating: 0, count: cw * ch)
            for y in 0..<ch {
                for x in 0..<cw {
                    out[y * cw + x] = Float(plane[(y0 + y) * widthPx + (mirror ? x0 + cw - 1 - x : x0 + x)])
                }
            }
            var resized = [Float](repeating: 0, count: n * n)
            Colorizer.bilinear(out, widthPx: cw, heightPx: ch, into: &resized, outWidthPx: n, outHeightPx: n)
            return resized
        }
        var input = crop(lightness)
        look.apply(to: &input, widthPx: n, heightPx: n, rng: &rng)
        return (input, crop(a) + crop(b))
    }
}

/// The colour issue's figures on one prediction: ab L1 (mean |Δa| + |Δb| over 2, Lab units) and hue agreement
/// (pixels whose original chroma is > 10 where the prediction's chroma is > 5 and its hue within 30°).
public struct ColourScore: Sendable, Equatable {
    /// Sum over pictures of each picture's mean ab L1.
    public var abL1Sum: Double = 0
    public var pictures = 0
    public var hueAgreeing = 0
    public var hueCounted = 0

    public init() {}

    /// ab L1 averaged over pictures.
    public var abL1: Double { pictures == 0 ? 0 : abL1Sum / Double(pictures) }
    /// Hue agreement, 0…1.
    public var hue: Double { hueCounted == 0 ? 0 : Double(hueAgreeing) / Double(hueCounted) }

    /// Adds one picture: `predicted` and `target` are planar a then b of the same size.
    public mutating func add(predicted: [Float], target: [Float]) {
        let n = target.count / 2
        var sum: Double = 0
        for i in 0..<n {
            let pa = predicted[i], pb = predicted[n + i], ta = target[i], tb = target[n + i]
            sum += Double(abs(pa - ta) + abs(pb - tb)) / 2
            let tc = (ta * ta + tb * tb).squareRoot()
            guard tc > 10 else { continue }
            hueCounted += 1
            let pc = (pa * pa + pb * pb).squareRoot()
            var d = abs(atan2(pb, pa) - atan2(tb, ta))
            d = min(d, 2 * .pi - d)
            if pc > 5 && d <= .pi / 6 { hueAgreeing += 1 }
        }
        abL1Sum += sum / Double(n)
        pictures += 1
    }
}
