import ColorcamCore

/// The output stage's frame between its steps. Owned by the output stage.
struct OutputState {
    enum Phase {
        /// Take the next frame from capture.
        case take
        /// Admitted (in time); composite it, once its own result is in when `ownResult` (asap).
        case composite(FrameBuffer, ownResult: Bool)
        /// Composited; write it (when due, with a presentation delay).
        case present(FrameBuffer, result: CompositeStamp?, compositeStartNs: Int64, compositeEndNs: Int64)
        /// Written; trace the output and give the buffer back.
        case written(FrameBuffer, result: CompositeStamp?, outputStartNs: Int64)
    }

    var phase = Phase.take
}

extension Pipeline {
    /// One step of the output stage: takes frames in capture order, drops those past the latency budget (`late`),
    /// composites the latest result into each (asap: its own), presents it (after `presentationDelayNs` when set)
    /// and writes it to the sink. Never waits for inference in realtime pace. Never blocks; see `StageWait`.
    func outputStep(_ state: inout OutputState) -> StageWait {
        switch state.phase {
        case .take:
            outputCondition.lock()
            guard !outputQueue.isEmpty else {
                outputCondition.unlock()
                return .outputItem
            }
            let item = outputQueue.removeFirst()
            outputCondition.unlock()
            guard let (frame, submitted) = item else { return .ended }
            if failure.withLock({ $0 != nil }) {
                noteComposited(frame.sequence)
                framePool.release(frame)
                return .none
            }
            let nowNs = clock.nowNs()
            let admitted = core.withLock {
                $0.admitOutput(
                    frame: frame.sequence, captureTsNs: frame.captureTimestampNs, nowNs: nowNs,
                    budgetNs: outputBudgetNs, trace: trace)
            }
            if admitted {
                state.phase = .composite(frame, ownResult: config.pace == .asap && submitted)
            } else {
                noteComposited(frame.sequence)
                framePool.release(frame)
            }
            return .none
        case .composite(let frame, let ownResult):
            // asap waits for this frame's own inference. Not `latestResult >= frame`: a later frame's inference can
            // finish first (several in flight), and by the time this stage reads `latestResult` the next frame's may
            // have finished too (seen under the sanitizers' slowdown: frame N carried N+1).
            if ownResult && !core.withLock({ $0.hasFinished(frame: frame.sequence) }) {
                return .ownResult(frame: frame.sequence)
            }
            let compositeStartNs = clock.nowNs()
            // The scheduler's result for the frame: its own (asap), else the latest finished inference. A processor
            // composites its own results and says which the frame carries (per-photo caches); the simulation
            // passes the scheduler's on.
            let scheduled =
                ownResult
                ? CompositeStamp(resultFrame: frame.sequence, resultCaptureTsNs: frame.captureTimestampNs)
                : core.withLock { $0.latestResult }.map {
                    CompositeStamp(resultFrame: $0.frame, resultCaptureTsNs: $0.captureTsNs)
                }
            let result = processor?.composite(frame, scheduled: scheduled)
            let compositeEndNs = clock.nowNs()
            noteComposited(frame.sequence)
            state.phase = .present(
                frame, result: result, compositeStartNs: compositeStartNs, compositeEndNs: compositeEndNs)
            if config.pace == .realtime, let delayNs = config.presentationDelayNs,
                compositeEndNs < frame.captureTimestampNs + delayNs
            {
                return .until(frame.captureTimestampNs + delayNs)
            }
            return .none
        case .present(let frame, let result, let compositeStartNs, let compositeEndNs):
            let outputStartNs = clock.nowNs()
            var composite = TraceEvent.span(
                .composite, frame: frame.sequence, startNs: compositeStartNs, endNs: compositeEndNs)
            composite.resultFrame = result?.resultFrame ?? -1
            trace.record(composite)
            do {
                try sink?.write(frame)
            } catch {
                fail(error)
                framePool.release(frame)
                state.phase = .take
                return .none
            }
            state.phase = .written(frame, result: result, outputStartNs: outputStartNs)
            return .none
        case .written(let frame, let result, let outputStartNs):
            var span = TraceEvent.span(.output, frame: frame.sequence, startNs: outputStartNs, endNs: clock.nowNs())
            span.resultFrame = result?.resultFrame ?? -1
            span.resultAgeNs = result.map { frame.captureTimestampNs - $0.resultCaptureTsNs } ?? 0
            span.captureTsNs = frame.captureTimestampNs
            trace.record(span)
            framesOutput.add(1, ordering: .releasing)
            framePool.release(frame)
            state.phase = .take
            return .none
        }
    }

    /// asap: frame `sequence` is composited (or dropped); capture may start the next frame's inference.
    func noteComposited(_ sequence: Int) {
        guard config.pace == .asap else { return }
        compositedThrough.store(sequence, ordering: .releasing)
        resultCondition.lock()
        resultCondition.broadcast()
        resultCondition.unlock()
    }
}
