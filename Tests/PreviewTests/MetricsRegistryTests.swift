import Testing

@testable import Preview

@Test func renderedRegistryParsesAsPrometheusText() throws {
    let registry = MetricsRegistry()
    let frames = registry.counter("x_frames_total", help: "Frames.\nSecond line \\ backslash")
    let late = registry.counter("x_dropped_total", help: "Drops.", labels: [("reason", "late")])
    let odd = registry.counter("x_dropped_total", help: "Drops.", labels: [("reason", "a\"b\\c\nd")])
    let gauge = registry.gauge("x_in_flight", help: "In flight.")
    let histogram = registry.histogram("x_lag_seconds", help: "Lag.", upperBounds: [0.01, 0.1, 1])
    frames.add(3)
    frames.increment()
    frames.add(-5)  // ignored: counters never go down
    late.increment()
    odd.add(2)
    gauge.set(-1.5)
    for value in [0.005, 0.01, 0.05, 0.5, 7, .nan] { histogram.observe(value) }

    let parsed = try PrometheusText(registry.render())
    #expect(
        parsed.types == [
            "x_frames_total": "counter", "x_dropped_total": "counter", "x_in_flight": "gauge",
            "x_lag_seconds": "histogram"
        ])
    #expect(parsed.value("x_frames_total") == 4)
    #expect(parsed.value("x_dropped_total", ["reason": "late"]) == 1)
    #expect(parsed.value("x_dropped_total", ["reason": "a\"b\\c\nd"]) == 2)
    #expect(parsed.value("x_in_flight") == -1.5)
    #expect(parsed.value("x_lag_seconds_bucket", ["le": "0.01"]) == 2, "le is inclusive")
    #expect(parsed.value("x_lag_seconds_bucket", ["le": "0.1"]) == 3)
    #expect(parsed.value("x_lag_seconds_bucket", ["le": "1"]) == 4)
    #expect(parsed.value("x_lag_seconds_bucket", ["le": "+Inf"]) == 5, "NaN is not counted")
    #expect(parsed.value("x_lag_seconds_count") == 5)
    let sum = try #require(parsed.value("x_lag_seconds_sum"))
    #expect(abs(sum - 7.565) < 1e-9)
}

@Test func previewMetricsCarryEveryDropReason() throws {
    let metrics = PreviewMetrics()
    metrics.dropped(reason: "driver_gap")?.add(2)
    #expect(metrics.dropped(reason: "no_such_reason") == nil)
    let parsed = try PrometheusText(metrics.registry.render())
    for reason in PreviewMetrics.defaultDropReasons {
        #expect(parsed.value("colorcam_frames_dropped_total", ["reason": reason]) == (reason == "driver_gap" ? 2 : 0))
    }
    #expect(parsed.types["colorcam_output_lag_seconds"] == "histogram")
    #expect(parsed.types["colorcam_inference_latency_seconds"] == "histogram")
    #expect(parsed.types["colorcam_inference_seconds_total"] == "counter")
}

@Test(arguments: [
    (1.0, "1"), (0.25, "0.25"), (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"), (Double.nan, "NaN")
])
func sampleValuesUsePrometheusSpelling(value: Double, text: String) {
    #expect(MetricsRegistry.format(value) == text)
}
