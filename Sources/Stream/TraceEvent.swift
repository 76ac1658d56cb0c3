import ColorcamCore

/// Why a frame (or a frame's inference) was dropped. Raw values are the trace's `reason` strings.
public enum DropReason: String, Sendable, CaseIterable {
    /// A frame waiting in the newest-wins slot was replaced by a newer one (its inference is dropped).
    case superseded
    /// Inference was busy and `--queue 0` admits nothing more (its inference is dropped; the frame is output).
    case busy
    /// The frame would miss its output deadline, or the output could not take it (the frame is not output).
    case late
    /// The camera's sequence numbers skipped: a frame the driver never delivered.
    case driverGap = "driver_gap"
    /// The frame could not be decoded.
    case decodeError = "decode_error"
    /// One output sink (a V4L2 output device) could not take the frame without waiting — its consumer held every
    /// buffer, or a newer frame replaced it — so it skipped the frame; the other outputs still got it.
    case sinkBusy = "sink_busy"
    /// One output sink's device refused the frame or was gone (being reopened); the other outputs still got it.
    case sinkError = "sink_error"
}

extension DropReason {
    /// `late`, `driver_gap` and `decode_error` drop the frame; `superseded` and `busy` only its inference;
    /// `sink_busy` and `sink_error` only one output sink's copy of it.
    public var dropsFrame: Bool { self == .late || self == .driverGap || self == .decodeError }
    /// `superseded` and `busy`.
    public var dropsInference: Bool { self == .superseded || self == .busy }
}

/// The trace's stage tracks (`tid`s), one per pipeline stage plus a control track.
public enum TraceTrack: Int, Sendable, CaseIterable {
    case capture = 1, detect = 2, infer = 3, composite = 4, output = 5, control = 6

    public var name: String {
        switch self {
        case .capture: return "capture"
        case .detect: return "detect"
        case .infer: return "infer"
        case .composite: return "composite"
        case .output: return "output"
        case .control: return "control"
        }
    }
}

/// One trace record as stages produce it: a fixed-size value (no strings, no allocation) that the trace writer
/// formats later on its own thread. Times are nanoseconds on the pipeline clock; the writer converts to µs.
public struct TraceEvent: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        /// `capture` span: `frame`, `captureTsNs`.
        case capture
        /// `detect` span: `frame`, `count` = photos found.
        case detect
        /// `infer` span: `frame`, `requestedNs`, `queuedNs`, `photo`, `inferReason`, `backend`, `failure`;
        /// `count` 1 = simulated.
        case infer
        /// A remote inference's parts, inside its `infer` span: `infer_send` (connect + request written),
        /// `infer_wait` (until the answer's first byte: server + network), `infer_receive` (the rest). `frame`.
        case inferSend
        case inferWait
        case inferReceive
        /// `composite` span: `frame`, `resultFrame`.
        case composite
        /// `output` span: `frame`, `resultFrame`, `resultAgeNs`, `captureTsNs` (for latency).
        case output
        /// `drop` instant at `startNs` on `track`: `frame`, `reason`.
        case drop
        /// `in_flight` counter at `startNs`: `count`.
        case inFlight
        /// `queue_depth` counter at `startNs`: `count`.
        case queueDepth
    }

    public var kind: Kind
    public var frame: Int = -1
    public var startNs: Int64 = 0
    public var endNs: Int64 = 0
    public var captureTsNs: Int64 = 0
    public var requestedNs: Int64 = 0
    public var queuedNs: Int64 = 0
    /// Frame whose inference result was used; -1 when none exists yet.
    public var resultFrame: Int = -1
    /// This frame's capture time minus the result frame's capture time; meaningful when `resultFrame >= 0`.
    public var resultAgeNs: Int64 = 0
    public var count: Int = 0
    /// `infer`: the photo colorized (-1 = none / whole frame).
    public var photo: Int = -1
    /// `infer`: why.
    public var inferReason: InferenceReason = .frame
    /// `infer`: where it ran.
    public var backend: InferenceBackend = .local
    /// `infer`: why it gave no result (`.none`: it did).
    public var failure: InferenceFailure = .none
    public var reason: DropReason = .late
    public var track: TraceTrack = .control

    public init(kind: Kind) { self.kind = kind }

    public static func span(_ kind: Kind, frame: Int, startNs: Int64, endNs: Int64) -> TraceEvent {
        var event = TraceEvent(kind: kind)
        event.frame = frame
        event.startNs = startNs
        event.endNs = endNs
        return event
    }

    public static func drop(frame: Int, reason: DropReason, atNs: Int64, track: TraceTrack) -> TraceEvent {
        var event = TraceEvent(kind: .drop)
        event.frame = frame
        event.reason = reason
        event.startNs = atNs
        event.track = track
        return event
    }

    public static func counter(_ kind: Kind, value: Int, atNs: Int64) -> TraceEvent {
        var event = TraceEvent(kind: kind)
        event.count = value
        event.startNs = atNs
        return event
    }
}

/// Where stages send trace events.
///
/// Threading: `record` is called from every pipeline thread concurrently; it must not block for long and must not
/// allocate (the hot loop calls it per frame).
public protocol TraceSink: AnyObject, Sendable {
    func record(_ event: TraceEvent)
}

/// A sink that drops everything (no `--trace`).
public final class NullTraceSink: TraceSink {
    public init() {}
    public func record(_ event: TraceEvent) {}
}
