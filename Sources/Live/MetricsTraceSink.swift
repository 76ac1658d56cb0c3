import ColorcamCore
import Preview
import Stream

/// Forwards trace events to the trace file (if any) and turns them into the preview's Prometheus metrics, so the
/// metrics and the trace can never disagree: frames output, drops by reason, inference latency and total seconds, inferences without a result,
/// request→start lag, capture→output latency, in-flight.
///
/// Threading: `record` is called from every pipeline thread; metrics types are thread-safe; nothing allocates.
public final class MetricsTraceSink: TraceSink, @unchecked Sendable {
    // Invariant for @unchecked Sendable: all stored properties are immutable references to thread-safe objects.
    private let inner: TraceSink
    private let metrics: PreviewMetrics
    private let dropCounters: [DropReason: Counter]
    private let preview: PreviewSink?

    public init(forwardingTo inner: TraceSink, metrics: PreviewMetrics, preview: PreviewSink?) {
        self.inner = inner
        self.metrics = metrics
        self.preview = preview
        var counters: [DropReason: Counter] = [:]
        for reason in DropReason.allCases {
            if let counter = metrics.dropped(reason: reason.rawValue) { counters[reason] = counter }
        }
        dropCounters = counters
    }

    public func record(_ event: TraceEvent) {
        inner.record(event)
        switch event.kind {
        case .output:
            metrics.framesOutput.increment()
            metrics.outputLagSeconds.observe(Double(event.endNs - event.captureTsNs) / 1e9)
        case .drop:
            dropCounters[event.reason]?.increment()
        case .infer:
            let seconds = Double(event.endNs - event.startNs) / 1e9
            metrics.inferenceLatencySeconds.observe(seconds)
            metrics.inferenceSecondsTotal.add(seconds)
            preview?.lastLagUs.store(event.startNs / 1000 - event.requestedNs / 1000, ordering: .relaxed)
            if event.failure != .none {
                // Linear over five entries: no dictionary lookup, no allocation.
                for entry in metrics.inferenceFailures where entry.reason == event.failure { entry.counter.increment() }
            }
        case .inFlight:
            metrics.inFlight.set(Double(event.count))
            preview?.inFlight.store(event.count, ordering: .relaxed)
        default:
            break
        }
    }
}
