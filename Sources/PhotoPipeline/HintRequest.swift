import Foundation
import Infer

/// Where a hint is given: a pixel of the output picture (the photo under it, through the homography of the last
/// frame analysed), or a point in the photo's own coordinates (fractions of its width and height, 0…1).
public enum HintPlace: Sendable, Equatable {
    case frame(xPx: Double, yPx: Double)
    case photo(u: Double, v: Double)
}

/// One hint as the preview's JSON API and the hints file write it: `{"x": px, "y": px, "color": "#rrggbb"}` or
/// `{"u": 0…1, "v": 0…1, "color": "#rrggbb"}` (a move may leave out the place or the colour). Value type.
public struct HintRequest: Sendable, Equatable {
    public var place: HintPlace?
    public var colour: (red: UInt8, green: UInt8, blue: UInt8)?

    public static func == (l: HintRequest, r: HintRequest) -> Bool {
        l.place == r.place && l.colour?.red == r.colour?.red && l.colour?.green == r.colour?.green
            && l.colour?.blue == r.colour?.blue
    }

    /// Parses a request body: one hint object, or a list of them. Throws a one-line reason.
    public static func parse(_ body: [UInt8]) throws(HintRequestError) -> [HintRequest] {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(body), options: .fragmentsAllowed)
        } catch {
            let detail = (error as NSError).userInfo["NSDebugDescription"] as? String ?? "\(error)"
            throw HintRequestError("the body is not JSON (\(detail))")
        }
        let list = object as? [Any] ?? [object]
        var out: [HintRequest] = []
        for (k, item) in list.enumerated() {
            let at = list.count > 1 || object is [Any] ? "hint \(k): " : ""
            guard let fields = item as? [String: Any] else { throw HintRequestError(at + "a hint is a JSON object") }
            let known: Set<String> = ["x", "y", "u", "v", "color"]
            if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
                throw HintRequestError(at + "unknown field \"\(unknown)\" (a hint has x, y or u, v, and color)")
            }
            var request = HintRequest()
            let x = number(fields["x"]), y = number(fields["y"]), u = number(fields["u"]), v = number(fields["v"])
            switch (x, y, u, v) {
            case (nil, nil, nil, nil): break
            case (let x?, let y?, nil, nil): request.place = .frame(xPx: x, yPx: y)
            case (nil, nil, let u?, let v?):
                guard (0...1).contains(u), (0...1).contains(v) else {
                    throw HintRequestError(at + "u and v are fractions of the photo, 0…1; got \(u), \(v)")
                }
                request.place = .photo(u: u, v: v)
            default:
                throw HintRequestError(at + "a hint's place is x and y (frame pixels) or u and v (photo fractions)")
            }
            if let text = fields["color"] {
                guard let text = text as? String, let colour = ColourHint.colour(hex: Substring(text)) else {
                    throw HintRequestError(at + "color wants \"#rrggbb\"")
                }
                request.colour = colour
            }
            out.append(request)
        }
        return out
    }

    /// A finite JSON number (booleans are not numbers: JSONSerialization gives them as `char` NSNumbers).
    static func number(_ value: Any?) -> Double? {
        guard let n = value as? NSNumber, String(cString: n.objCType) != "c" else { return nil }
        return n.doubleValue.isFinite ? n.doubleValue : nil
    }

    /// A stored hint (`{"u", "v", "color"}`, the hints file) as hint `id`; nil when malformed.
    static func photoHint(_ fields: [String: Any], id: Int) -> PhotoHint? {
        guard let u = number(fields["u"]), let v = number(fields["v"]), (0...1).contains(u), (0...1).contains(v),
            let text = fields["color"] as? String, let c = ColourHint.colour(hex: Substring(text))
        else { return nil }
        return PhotoHint(id: id, u: Float(u), v: Float(v), red: c.red, green: c.green, blue: c.blue)
    }
}

/// A hint request that cannot be followed: a one-line reason (the API answers it with a 4xx status).
public struct HintRequestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
