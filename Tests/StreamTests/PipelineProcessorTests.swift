import ColorcamCore
import Stream
import Synchronization
import Testing

/// A processor that sees two "photos": photo 1 is new at frame 0, photo 2 new at frame 20 and changes at frame 40.
final class ScriptedProcessor: FrameProcessor, @unchecked Sendable {
    // Invariant: mutable state is only touched under `state`.
    struct State {
        var analysed: [Int] = []
        var slotsInUse: Set<Int> = []
        var maxSlotsInUse = 0
        var cache: [Int: CompositeStamp] = [:]
        var pending: [Int: (photo: Int, frame: Int)] = [:]
        var inputSlotCount = 0
        var wantsColour: Set<Int> = []
    }
    let state = Locked(State())
    let isSimulated = false
    let label = "scripted"

    func prepare(framePoolSize: Int, inputSlotCount: Int) { state.withLock { $0.inputSlotCount = inputSlotCount } }

    func analyse(_ frame: FrameBuffer) -> Int? {
        state.withLock { s in
            s.analysed.append(frame.sequence)
            if frame.sequence == 0 { s.wantsColour.insert(1) }
            if frame.sequence == 20 || frame.sequence == 40 { s.wantsColour.insert(2) }
            return frame.sequence < 20 ? 1 : 2
        }
    }

    func prepareInference(_ frame: FrameBuffer, slot: Int, inferenceIdle: Bool) -> InferenceRequest? {
        state.withLock { s in
            guard let photo = s.wantsColour.min() else { return nil }
            s.wantsColour.remove(photo)
            #expect(!s.slotsInUse.contains(slot), "slot handed out twice")
            s.slotsInUse.insert(slot)
            s.maxSlotsInUse = max(s.maxSlotsInUse, s.slotsInUse.count)
            s.pending[slot] = (photo, frame.sequence)
            let reason: InferenceReason = frame.sequence == 40 ? .changed : .new
            return InferenceRequest(photo: photo, reason: reason)
        }
    }

    func infer(slot: Int, frame: Int, captureTsNs: Int64) -> InferenceOutcome {
        state.withLock { s in
            let job = s.pending.removeValue(forKey: slot)!
            #expect(job.frame == frame)
            s.cache[job.photo] = CompositeStamp(resultFrame: frame, resultCaptureTsNs: captureTsNs)
            s.slotsInUse.remove(slot)
        }
        return .local
    }

    func composite(_ frame: FrameBuffer, scheduled: CompositeStamp?) -> CompositeStamp? {
        state.withLock { s in s.cache.values.min(by: { $0.resultFrame < $1.resultFrame }) }
    }
}

@Suite("Pipeline with a frame processor")
struct PipelineProcessorTests {
    @Test func processorHooksRunInOrderAndTheTraceSaysWhichPhotoAndWhy() throws {
        let clock = SystemClock()
        let trace = RecordingTraceSink()
        var config = PipelineConfig()
        config.pace = .asap
        let processor = ScriptedProcessor()
        let stats = try Pipeline(
            source: SyntheticSource(count: 60, fps: 30), sink: nil,
            processor: processor, trace: trace, clock: clock, config: config
        ).run()
        #expect(stats.framesOutput == 60)
        #expect(stats.inferences == 3)
        processor.state.withLock { s in
            #expect(s.analysed == Array(0..<60))
            #expect(s.slotsInUse.isEmpty, "every slot came back")
            #expect(s.maxSlotsInUse <= s.inputSlotCount)
        }
        #expect(trace.events(.detect).map(\.count) == (0..<60).map { $0 < 20 ? 1 : 2 })
        let infers = trace.events(.infer)
        #expect(infers.map(\.photo) == [1, 2, 2])
        #expect(infers.map(\.inferReason) == [.new, .new, .changed])
        #expect(infers.map(\.frame) == [0, 20, 40])
        // Output carries the stalest photo's colours: frame 0's until photo 1 is... never recoloured.
        let outputs = trace.events(.output)
        #expect(outputs.allSatisfy { $0.resultFrame == 0 })
        #expect(outputs[30].resultAgeNs == outputs[30].captureTsNs - outputs[0].captureTsNs)
    }
}
