extension PreviewEventLoop {
    /// Applies the access token (`config.accessToken`) to one request. Returns true when the request may be served;
    /// otherwise it has been answered: 303 See Other with the login cookie for a right `?token=` login, 401 with
    /// `WWW-Authenticate: Bearer realm="colorcam"` (counted in `colorcam_preview_rejected_total{status="401"}`) for
    /// anything else. `/healthz` and an open preview (no token) always pass. HEAD gets the same heads as GET.
    ///
    /// Loop thread only; runs per request, never on the frame path.
    func admit(_ head: HTTPRequestHead, on connection: PreviewConnection, keepAlive: Bool, headOnly: Bool) -> Bool {
        guard let secret = server.accessSecret, let token = config.accessToken, head.path != "/healthz" else {
            return true
        }
        switch PreviewAccess.decide(head, secret: secret) {
        case .allowed:
            return true
        case .login(let location):
            respond(
                connection,
                bytes: HTTPResponseHead.textResponse(
                    status: 303, body: "logged in: \(location)\n", keepAlive: keepAlive,
                    extraHeaders: [("Location", location), ("Set-Cookie", PreviewAccess.loginCookie(token: token))],
                    includeBody: !headOnly), keepAlive: keepAlive)
        case .denied:
            server.metrics.rejected(status: 401)?.increment()
            respond(
                connection,
                bytes: HTTPResponseHead.textResponse(
                    status: 401, body: Self.unauthorizedBody, keepAlive: keepAlive,
                    extraHeaders: [("WWW-Authenticate", "Bearer realm=\"\(PreviewAccess.realm)\"")],
                    includeBody: !headOnly), keepAlive: keepAlive)
        }
        return false
    }

    static let unauthorizedBody =
        "this preview needs its access token: open the login URL colorcam printed "
        + "(/?token=...) or send 'Authorization: Bearer TOKEN'\n"
}
