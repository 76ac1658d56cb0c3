import PhotoPipeline
import Preview

/// `colorcam live`'s colour-hint API on the preview server (`PreviewAPI`), over `PhotoColorProcessor`'s hint
/// control plane:
///
/// - `GET /photos`: the photos in view or with hints: `{"photos": [{"id", "inView", "corners": [[x, y] ×4], "hints":
///   [{"id", "u", "v", "color"}]}]}` (corners in frame pixels, in the last frame that showed the photo; `u`, `v`
///   fractions of the photo in its own coordinates).
/// - `GET /photos/ID/hints`: one photo, as above.
/// - `POST /photos/ID/hints` with `{"x", "y", "color"}` (frame pixels of the last frame analysed) or `{"u", "v",
///   "color"}`, or a list of them: adds (201, the photo).
/// - `PUT /photos/ID/hints/HINT` with a place and/or a colour: moves or recolours one hint (200).
/// - `DELETE /photos/ID/hints/HINT`, `DELETE /photos/ID/hints`: removes one, or all (200, the photo).
/// - `GET /photos/ID/suggestions?x=…&y=…` (or `u=…&v=…`): what the model thinks the colour there could be, from its
///   ab distribution in the photo's current colours: `{"photo", "suggestions": [{"a", "b", "probability"}]}`, most
///   likely first (none when the model has no distribution or the photo no colours yet).
///
/// Refusals are 4xx with `{"error": "one line"}`: 400 malformed JSON or fields, 404 unknown photo, hint or path, 405
/// a method the path does not take, 409 a model that cannot follow hints or a place in pixels on a photo out of
/// view, 422 a place outside the photo, more than `PhotoHints.maxPerPhoto` hints in one request, or a new hint
/// without place or colour. (The server answers 401, 411, 413 and 415 before a request gets here.)
/// Threading: the preview's loop thread (`PreviewAPI`).
final class PhotoHintsAPI: PreviewAPI, @unchecked Sendable {
    // Invariant for @unchecked Sendable: `processor` is a let of a thread-safe control plane.
    let processor: PhotoColorProcessor

    init(processor: PhotoColorProcessor) { self.processor = processor }

    func respond(method: String, path: String, query: String, body: [UInt8]) -> PreviewAPIResponse {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()  // "", "photos", …
        let photo = parts.count >= 2 ? Int(parts[parts.startIndex + 1]) : nil
        let hint = parts.count == 4 ? Int(parts[parts.startIndex + 3]) : nil
        let route: Route
        switch (parts.count, photo, parts.count >= 3 ? parts[parts.startIndex + 2] : "", hint) {
        case (1, _, _, _): route = .photos
        case (3, let id?, "hints", _): route = .hints(id)
        case (3, let id?, "suggestions", _): route = .suggestions(id)
        case (4, let id?, "hints", let h?): route = .hint(id, h)
        default: return .error(404, "no such page: \(path)")
        }
        do throws(HintEditError) {
            switch (route, method) {
            case (.photos, "GET"):
                return ok(200, "{\"photos\": [" + processor.photoHints().map(Self.json).joined(separator: ", ") + "]}")
            case (.hints(let id), "GET"):
                return ok(200, Self.json(try processor.photoHints(photo: id)))
            case (.suggestions(let id), "GET"):
                let place = try Self.place(query)
                let suggestions = try processor.colourSuggestions(photo: id, at: place)
                return ok(
                    200,
                    "{\"photo\": \(id), \"suggestions\": ["
                        + suggestions.map {
                            "{\"a\": \(Self.number(Double($0.a))), \"b\": \(Self.number(Double($0.b))), "
                                + "\"probability\": \(Self.number(Double($0.probability), digits: 3))}"
                        }.joined(separator: ", ") + "]}")
            case (.hints(let id), "POST"):
                let requests = try parse(body)
                guard !requests.isEmpty else { return .error(422, "no hints in the request") }
                _ = try processor.addHints(photo: id, requests)
                return ok(201, Self.json(try processor.photoHints(photo: id)))
            case (.hint(let id, let h), "PUT"):
                let requests = try parse(body)
                guard requests.count == 1 else { return .error(400, "PUT takes one hint object") }
                return ok(200, Self.json(try processor.moveHint(photo: id, hint: h, requests[0])))
            case (.hints(let id), "DELETE"):
                _ = try processor.removeHints(photo: id, hint: nil)
                return ok(200, Self.json(try processor.photoHints(photo: id)))
            case (.hint(let id, let h), "DELETE"):
                _ = try processor.removeHints(photo: id, hint: h)
                return ok(200, Self.json(try processor.photoHints(photo: id)))
            default:
                return .error(405, "\(method) is not taken by \(path)")
            }
        } catch {
            return .error(Self.status(of: error), error.description)
        }
    }

    private enum Route {
        case photos
        case hints(Int)
        case suggestions(Int)
        case hint(Int, Int)
    }

    /// Parse failures surface as `HintEditError`-shaped 400s through `BadRequest`.
    private func parse(_ body: [UInt8]) throws(HintEditError) -> [HintRequest] {
        do { return try HintRequest.parse(body) } catch { throw .badRequest(error.description) }
    }

    /// `x=…&y=…` (frame pixels) or `u=…&v=…` (photo fractions) from a query string.
    static func place(_ query: String) throws(HintEditError) -> HintPlace {
        var fields: [String: Double] = [:]
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let value = Double(kv[1]), value.isFinite else {
                throw .badRequest("the query wants x=…&y=… (frame pixels) or u=…&v=… (photo fractions)")
            }
            fields[String(kv[0])] = value
        }
        switch (fields["x"], fields["y"], fields["u"], fields["v"], fields.count) {
        case (let x?, let y?, nil, nil, 2): return .frame(xPx: x, yPx: y)
        case (nil, nil, let u?, let v?, 2) where (0...1).contains(u) && (0...1).contains(v): return .photo(u: u, v: v)
        default: throw .badRequest("the query wants x=…&y=… (frame pixels) or u=…&v=… (photo fractions, 0…1)")
        }
    }

    static func status(of error: HintEditError) -> Int {
        switch error {
        case .badRequest: return 400
        case .unknownPhoto, .unknownHint: return 404
        case .cannotFollowHints, .notInView: return 409
        case .outsidePhoto, .tooMany, .incomplete: return 422
        }
    }

    private func ok(_ status: Int, _ json: String) -> PreviewAPIResponse {
        PreviewAPIResponse(status: status, json: json + "\n")
    }

    static func json(_ view: PhotoHintsView) -> String {
        let corners = view.corners.map { "[\(number($0.x)), \(number($0.y))]" }.joined(separator: ", ")
        return "{\"id\": \(view.photo), \"inView\": \(view.inView), \"corners\": [\(corners)], \"hints\": ["
            + view.hints.map(json).joined(separator: ", ") + "]}"
    }

    static func json(_ hint: PhotoHint) -> String {
        "{\"id\": \(hint.id), \"u\": \(number(Double(hint.point.u), digits: 4)), "
            + "\"v\": \(number(Double(hint.point.v), digits: 4)), \"color\": \"\(hint.colourText)\"}"
    }

    static func number(_ value: Double, digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
}
