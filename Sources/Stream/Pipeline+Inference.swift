import CSched
import ColorcamCore

/// An inference stage's job between its steps. Owned by that stage (one per in-flight place).
struct InferenceState {
    /// The job to run next: one the scheduler started when the previous job finished (it never waits in
    /// `startQueue`).
    var next: InferenceJob?
    /// The job whose model run has returned, to be finished (traced, its place given back) at the stage's time.
    var ran: (job: InferenceJob, startNs: Int64, outcome: InferenceOutcome)?
}

extension Pipeline {
    /// One step of an inference stage: takes a started job and runs the model on it (one step), then traces it and
    /// tells the scheduler it finished, which may hand this stage the next job at once (the next step). Never
    /// blocks; see `StageWait`.
    func inferenceStep(_ state: inout InferenceState) -> StageWait {
        guard let processor else { return .ended }
        if let (job, startNs, outcome) = state.ran {
            state.ran = nil
            let endNs = clock.nowNs()
            var span = TraceEvent.span(.infer, frame: job.frame, startNs: startNs, endNs: endNs)
            span.requestedNs = job.requestedNs
            span.queuedNs = job.requestedNs - job.arrivedNs
            span.count = processor.isSimulated ? 1 : 0
            span.photo = job.photo
            span.inferReason = job.reason
            span.backend = outcome.backend
            span.failure = outcome.failure
            trace.record(span)
            if outcome.backend != .local { recordRemoteParts(outcome, frame: job.frame, startNs: startNs) }
            if job.inputSlot >= 0 { freeSlots.withLock { $0.append(job.inputSlot) } }
            state.next = core.withLock { $0.finish(job, nowNs: endNs, trace: trace) }
            resultCondition.lock()
            resultCondition.broadcast()
            resultCondition.unlock()
            return .none
        }
        let job: InferenceJob
        if let next = state.next {
            job = next
            state.next = nil
        } else {
            startCondition.lock()
            guard !startQueue.isEmpty else {
                let ended = stopping
                startCondition.unlock()
                return ended ? .ended : .job
            }
            job = startQueue.removeFirst()
            pendingStarts.subtract(1, ordering: .relaxed)
            startCondition.unlock()
        }
        let startNs = clock.nowNs()
        let outcome = processor.infer(slot: job.inputSlot, frame: job.frame, captureTsNs: job.captureTsNs)
        state.ran = (job, startNs, outcome)
        return .none
    }

    /// A remote inference's send / wait / receive spans, laid end to end from the `infer` span's start (the
    /// durations are measured by the client on the real clock; a fallback run after a failed request has none).
    private func recordRemoteParts(_ outcome: InferenceOutcome, frame: Int, startNs: Int64) {
        var at = startNs
        func part(_ kind: TraceEvent.Kind, _ ns: Int64) {
            guard ns > 0 else { return }
            trace.record(TraceEvent.span(kind, frame: frame, startNs: at, endNs: at + ns))
            at += ns
        }
        part(.inferSend, outcome.sendNs)
        part(.inferWait, outcome.waitNs)
        part(.inferReceive, outcome.receiveNs)
    }

    /// Busy-waits (with the CPU's spin hint, reading the clock every 256 turns) until a request is pending, the
    /// capture stage has ended, or `ns` of real time has passed (`Int64.max`: no limit). Real time is
    /// `CLOCK_MONOTONIC`, not the pipeline's clock: the poll spends CPU time, which a manual clock does not advance.
    /// The caller then takes the request, or sleeps on `startCondition` as without polling. Runs on an inference
    /// thread only (`PipelineStepper` never polls); allocates nothing.
    func pollForRequest(forNs ns: Int64) {
        let (sum, overflow) = SystemClock.rawNs().addingReportingOverflow(ns)
        let deadlineNs = overflow ? Int64.max : sum
        var turns = 0
        while pendingStarts.load(ordering: .acquiring) == 0 && !captureEnded.load(ordering: .relaxed) {
            colorcam_cpu_relax()
            turns &+= 1
            if turns & 255 == 0 && SystemClock.rawNs() >= deadlineNs { return }
        }
    }
}
