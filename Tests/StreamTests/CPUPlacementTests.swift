import ColorcamCore
import Foundation
import Stream
import Synchronization
import Testing

/// The inference thread's own core: `CPUPlacement.split()` and `PipelineConfig.inferenceCPU`.
@Suite struct CPUPlacementTests {
    /// Runs `body` on a fresh thread (so changing its CPU set cannot touch the test runner's threads) and waits.
    private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0! }
    }

    @Test func splitReservesTheHighestCPUAndNewThreadsInheritTheRest() throws {
        let (before, split, after, child) = onOwnThread { () -> ([Int], CPUPlacement.Split?, [Int], [Int]) in
            let before = CPUPlacement.threadCPUs()
            let split = CPUPlacement.split()
            let after = CPUPlacement.threadCPUs()
            let child = Locked<[Int]>([])
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                child.withLock { $0 = CPUPlacement.threadCPUs() }
                done.signal()
            }
            thread.start()
            done.wait()
            return (before, split, after, child.withLock { $0 })
        }
        #expect(!before.isEmpty, "sched_getaffinity reports at least one CPU")
        if before.count >= 2 {
            let split = try #require(split, "2+ CPUs: split succeeds")
            #expect(split.inferenceCPU == before.last)
            #expect(split.streamCPUs == Array(before.dropLast()))
            #expect(after == split.streamCPUs, "the calling thread leaves the inference CPU")
            #expect(child == split.streamCPUs, "threads started afterwards inherit the stream CPUs")
        } else {
            #expect(split == nil && after == before, "one CPU: nothing to split, nothing changed")
        }
    }

    /// Records the CPU set of the thread that runs inference.
    final class CPURecordingRunner: ScheduledInference, @unchecked Sendable {
        let seen = Locked<Set<[Int]>>([])
        init() { super.init(clock: SystemClock()) { _ in 0 } }
        override func infer(slot: Int, frame: Int, captureTsNs: Int64) -> InferenceOutcome {
            seen.withLock { _ = $0.insert(CPUPlacement.threadCPUs()) }
            return .local
        }
    }

    @Test func theInferenceThreadRunsOnlyOnTheConfiguredCPU() throws {
        let cpus = CPUPlacement.threadCPUs()
        let target = try #require(cpus.last)
        let runner = CPURecordingRunner()
        var config = PipelineConfig()
        config.pace = .asap
        config.inferenceCPU = target
        let stats = try Pipeline(
            source: SyntheticSource(count: 5, fps: 30), sink: nil, processor: runner,
            trace: RecordingTraceSink(), clock: SystemClock(), config: config
        ).run()
        #expect(stats.inferences == 5)
        #expect(runner.seen.withLock { $0 } == [[target]])
        #expect(CPUPlacement.threadCPUs() == cpus, "the caller's own CPU set is untouched")
    }

    /// The poll before sleeping: its default follows the placement, and a thread polling without a time limit
    /// still takes every request and ends with the stream (the capture loop's end stops the poll).
    @Test func theInferencePollDefaultsToAFrameAndAQuarterOnAnOwnCoreAndEndsWithTheStream() throws {
        let source = SyntheticSource(count: 6, fps: 30)
        var config = PipelineConfig()
        let resolve = { (config: PipelineConfig) in
            Pipeline(
                source: SyntheticSource(count: 1, fps: 30), sink: nil, processor: nil, trace: RecordingTraceSink(),
                clock: SystemClock(), config: config
            ).inferenceSpinNs
        }
        #expect(resolve(config) == 0, "shared placement: no poll")
        let cpus = CPUPlacement.threadCPUs()
        try #require(!cpus.isEmpty)
        config.inferenceCPU = cpus[cpus.count - 1]
        #expect(resolve(config) == source.nominalFrameIntervalNs * 5 / 4)
        config.inferenceSpinNs = 2_000_000
        #expect(resolve(config) == 2_000_000, "an explicit setting wins")

        config.inferenceSpinNs = .max
        config.pace = .asap
        let runner = CPURecordingRunner()
        let trace = RecordingTraceSink()
        let stats = try Pipeline(
            source: source, sink: nil, processor: runner, trace: trace, clock: SystemClock(),
            config: config
        ).run()
        #expect(stats.inferences == 6, "every request taken from the poll")
        #expect(stats.maxInFlightSeen == 1)
        #expect(trace.events(.infer).count == 6)
    }
}
