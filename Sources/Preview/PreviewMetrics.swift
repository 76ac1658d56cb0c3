import ColorcamCore

/// The metrics `colorcam live` exports on `/metrics`, registered once; the pipeline keeps the returned objects and
/// updates them from its threads without allocating (e.g. `metrics.dropped(reason: "busy")?.increment()` — look the
/// counter up once at start-up and keep it).
public final class PreviewMetrics: Sendable {
    public let registry: MetricsRegistry
    /// Frames output by the pipeline.
    public let framesOutput: Counter
    /// Frame drops by reason (labels `reason=…`), in the order given at init.
    public let drops: [(reason: String, counter: Counter)]
    /// Capture-to-output lag of each output frame, seconds.
    public let outputLagSeconds: Histogram
    /// Inference latency (request to result) of each completed inference, seconds.
    public let inferenceLatencySeconds: Histogram
    /// Total seconds spent in inference.
    public let inferenceSecondsTotal: Counter
    /// Inference requests in flight.
    public let inFlight: Gauge
    /// Remote inference requests that failed (timeout, lost connection, HTTP error, malformed answer, or not sent
    /// during the retry back-off), by the trace's `failed` reason (label `reason`); with `--infer-fallback local`
    /// the local model then gave the result.
    public let inferenceFailures: [(reason: InferenceFailure, counter: Counter)]
    /// Clients connected to the preview server (any endpoint) and MJPEG streams open.
    public let previewConnections: Gauge
    public let previewStreams: Gauge
    /// JPEGs the preview encoded (at most one per published frame, only while someone watches).
    public let previewFramesEncoded: Counter
    /// Frames `publish` skipped because the event loop held the hand-off lock at that instant (never waits).
    public let previewPublishSkipped: Counter
    /// Time to encode one preview JPEG, seconds (on the preview's event-loop thread).
    public let previewEncodeSeconds: Histogram
    /// Frames a stream client did not get because its socket was still busy with an older one.
    public let previewFramesSkipped: Counter
    /// Requests rejected: bad or oversized heads, missing or wrong access token (401), timeouts, too many
    /// connections (label `status`).
    public let previewRejected: [(status: Int, counter: Counter)]

    /// Drop reasons colorcam's pipeline uses (the trace's `DropReason` raw values).
    public static let defaultDropReasons = ["superseded", "busy", "late", "driver_gap", "decode_error"]
    /// Status codes the server rejects requests with.
    public static let rejectionStatuses = [400, 401, 404, 405, 408, 414, 431, 503, 505]

    public init(dropReasons: [String] = PreviewMetrics.defaultDropReasons) {
        let registry = MetricsRegistry()
        self.registry = registry
        let latencyBounds = [0.005, 0.01, 0.02, 0.033, 0.05, 0.067, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2, 5]
        framesOutput = registry.counter("colorcam_frames_output_total", help: "Frames output by the pipeline.")
        drops = dropReasons.map { reason in
            (
                reason,
                registry.counter(
                    "colorcam_frames_dropped_total", help: "Frames (or their inference) dropped, by reason.",
                    labels: [("reason", reason)])
            )
        }
        outputLagSeconds = registry.histogram(
            "colorcam_output_lag_seconds", help: "Capture-to-output lag of output frames.", upperBounds: latencyBounds)
        inferenceLatencySeconds = registry.histogram(
            "colorcam_inference_latency_seconds", help: "Inference latency, request to result.",
            upperBounds: latencyBounds)
        inferenceSecondsTotal = registry.counter(
            "colorcam_inference_seconds_total", help: "Seconds spent running inference.")
        inFlight = registry.gauge("colorcam_inference_in_flight", help: "Inference requests in flight.")
        inferenceFailures = InferenceFailure.allCases.filter { $0 != .none }.map { reason in
            (
                reason,
                registry.counter(
                    "colorcam_inference_failed_total",
                    help: "Remote inference requests that failed, by reason (with a local fallback, "
                        + "the local model then gave the result).",
                    labels: [("reason", reason.name)])
            )
        }
        previewConnections = registry.gauge("colorcam_preview_connections", help: "Open preview HTTP connections.")
        previewStreams = registry.gauge("colorcam_preview_streams", help: "Open MJPEG streams.")
        previewFramesEncoded = registry.counter(
            "colorcam_preview_frames_encoded_total", help: "JPEG frames encoded for the preview.")
        previewPublishSkipped = registry.counter(
            "colorcam_preview_publish_skipped_total", help: "Frames not handed to the preview (hand-off lock busy).")
        previewEncodeSeconds = registry.histogram(
            "colorcam_preview_encode_seconds", help: "Time to encode one preview JPEG.",
            upperBounds: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064])
        previewFramesSkipped = registry.counter(
            "colorcam_preview_frames_skipped_total", help: "Stream frames a busy client did not get (newest wins).")
        previewRejected = Self.rejectionStatuses.map { status in
            (
                status,
                registry.counter(
                    "colorcam_preview_rejected_total", help: "Preview requests rejected, by status.",
                    labels: [("status", String(status))])
            )
        }
    }

    /// The drop counter for `reason`, or nil when the reason was not registered. Look it up once, keep the counter.
    public func dropped(reason: String) -> Counter? { drops.first(where: { $0.reason == reason })?.counter }

    func rejected(status: Int) -> Counter? { previewRejected.first(where: { $0.status == status })?.counter }
}
