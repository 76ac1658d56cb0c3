import ColorcamCore

/// A JSON API served beside the preview under `/photos` (colour hints, wired by the CLI): the server frames the
/// requests — access token, methods, `Content-Length` bodies up to `maxBodyBytes` of `application/json` — and the
/// API answers each.
///
/// Threading: `respond` runs on the preview's event-loop thread and must answer at once (a lock held for
/// microseconds, a copy), never wait for the pipeline.
public protocol PreviewAPI: AnyObject, Sendable {
    /// Answers one request: `method` (`GET`, `POST`, `PUT`, `DELETE`), `path` and `query` (the target split at its
    /// `?`; "" when none), `body` (empty for `GET`/`DELETE`).
    func respond(method: String, path: String, query: String, body: [UInt8]) -> PreviewAPIResponse
}

/// An API answer: a status and a JSON body (an error answers `{"error": "one line"}`).
public struct PreviewAPIResponse: Sendable, Equatable {
    public var status: Int
    public var json: String

    public init(status: Int, json: String) {
        self.status = status
        self.json = json
    }

    /// `status` with `{"error": message}`.
    public static func error(_ status: Int, _ message: String) -> PreviewAPIResponse {
        var json = "{\"error\": "
        JSONText.appendQuoted(message, to: &json)
        return PreviewAPIResponse(status: status, json: json + "}\n")
    }
}

/// How the server frames API requests.
enum PreviewAPIRules {
    /// Largest request body accepted (413 above).
    static let maxBodyBytes = 64 * 1024
    /// Paths the API serves.
    static func serves(_ path: Substring) -> Bool { path == "/photos" || path.hasPrefix("/photos/") }
    static let methods = ["GET", "HEAD", "POST", "PUT", "DELETE"]
}
