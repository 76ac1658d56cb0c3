import ColorcamCore

extension PreviewEventLoop {
    /// The `/stats.json` document: the newest frame's stats and overlays, drop counts from the metrics, health.
    ///
    /// Fields: `sequence` (-1 before the first frame), `widthPx`, `heightPx`, `outputFps`, `lagMs`, `inFlight`,
    /// `model`, `framesOutput`, `drops` (object reason → count), `health` (`ok` / `device_lost`), `healthReason`,
    /// `publishedFrames`, `encodedFrames`, `streams`, `connections`, `overlays` (array of `{trackId, corners:
    /// [[x, y] × 4]}` in frame pixels).
    func statsJSON() -> String {
        let metrics = server.metrics
        var json = "{"
        if let slot = readerSlot {
            let stats = slot.stats
            json += "\"sequence\":\(slot.frame.sequence),\"widthPx\":\(slot.frame.geometry.widthPx),"
            json += "\"heightPx\":\(slot.frame.geometry.heightPx),"
            json += "\"outputFps\":\(Self.number(stats.outputFps)),\"lagMs\":\(Self.number(stats.lagMs)),"
            json += "\"inFlight\":\(stats.inFlight),\"model\":\(Self.string(stats.model)),"
        } else {
            json += "\"sequence\":-1,\"widthPx\":0,\"heightPx\":0,\"outputFps\":0,\"lagMs\":0,\"inFlight\":0,"
            json += "\"model\":\"\","
        }
        json += "\"framesOutput\":\(Self.number(metrics.framesOutput.current)),\"drops\":{"
        json += metrics.drops.map { "\(Self.string($0.reason)):\(Self.number($0.counter.current))" }
            .joined(separator: ",")
        json += "},"
        switch server.health.withLock({ $0 }) {
        case .ok:
            json += "\"health\":\"ok\",\"healthReason\":\"\","
        case .deviceLost(let reason):
            json += "\"health\":\"device_lost\",\"healthReason\":\(Self.string(reason)),"
        }
        json += "\"publishedFrames\":\(server.publishedFrames),"
        json += "\"encodedFrames\":\(Self.number(metrics.previewFramesEncoded.current)),"
        json += "\"streams\":\(streamCount),\"connections\":\(connections.count),\"overlays\":["
        if let slot = readerSlot {
            json += slot.overlays[0..<slot.overlayCount].map { quad in
                let c = quad.corners
                let points = [c.0, c.1, c.2, c.3].map {
                    "[\(Self.number(Double($0.xPx))),\(Self.number(Double($0.yPx)))]"
                }
                return "{\"trackId\":\(quad.trackId),\"corners\":[\(points.joined(separator: ","))]}"
            }.joined(separator: ",")
        }
        json += "]}"
        return json
    }

    /// A JSON number; non-finite values (which JSON cannot hold) become 0.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if abs(value) >= 1e12 { return "\(value)" }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(format3: value)
    }

    /// A JSON string literal with quotes, backslashes and control characters escaped.
    static func string(_ value: String) -> String { JSONText.quoted(value) }
}

extension String {
    /// `value` rounded to 3 decimals, without exponent notation for the magnitudes stats hold.
    init(format3 value: Double) {
        let scaled = (value * 1000).rounded()
        let negative = scaled < 0
        let magnitude = Int64(abs(scaled))
        let fraction = String(magnitude % 1000)
        self =
            (negative ? "-" : "") + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count)
            + fraction
    }
}
