import ColorcamCore
import Infer
import Synchronization

/// The colorizer model in use and its engines: hands an engine to each inference, and swaps in a new model
/// (SIGHUP) without stopping the stream.
///
/// Threading: `acquire`/`release` from inference threads; `reload` from the control plane (it loads and prepares
/// the new engine on the caller's thread, then swaps under the lock, so inference never waits for a load).
/// A reloaded model must take the same input and give the same output shape (the pipeline's buffers are sized
/// for them); otherwise `reload` throws and the old model stays.
final class ModelHolder: Sendable {
    struct Loaded: @unchecked Sendable {
        // Invariant for @unchecked Sendable: an engine is used by one thread at a time (acquire/release).
        var bundle: ModelBundle
        var generation: Int
        var idle: [InferenceEngine]
    }

    let inputShape: [Int]
    let outputShape: [Int]
    private let state: Locked<Loaded>

    init(bundle: ModelBundle) throws {
        let engine = try Colorizer.engine(for: bundle)
        inputShape = engine.inputShape
        outputShape = engine.outputShape
        state = Locked(Loaded(bundle: bundle, generation: 0, idle: [engine]))
    }

    var bundle: ModelBundle { state.withLock { $0.bundle } }
    var generation: Int { state.withLock { $0.generation } }

    /// An engine of the current model (a new one only when every loaded engine is busy: with several in flight).
    /// Nil, with the error logged, if that extra engine cannot be loaded (the file changed since it was checked).
    func acquire() -> (engine: InferenceEngine, generation: Int, bundle: ModelBundle)? {
        let (engine, generation, bundle) = state.withLock { s in (s.idle.popLast(), s.generation, s.bundle) }
        if let engine { return (engine, generation, bundle) }
        do {
            return (try Colorizer.engine(for: bundle), generation, bundle)
        } catch {
            Log.error("colorizer: cannot load another engine for a parallel inference: \(error)")
            return nil
        }
    }

    /// Returns an engine; engines of a replaced model are dropped.
    func release(_ engine: InferenceEngine, generation: Int) {
        state.withLock { s in if s.generation == generation { s.idle.append(engine) } }
    }

    /// Loads `bundle` and makes it current; throws (old model kept) when it cannot be used.
    func reload(_ bundle: ModelBundle) throws {
        let engine = try Colorizer.engine(for: bundle)
        guard engine.inputShape == inputShape, engine.outputShape == outputShape else {
            throw ModelBundleError(
                .badData, file: bundle.modelPath,
                "takes \(engine.inputShape) → \(engine.outputShape); the running model takes "
                    + "\(inputShape) → \(outputShape) (restart to change sizes)")
        }
        state.withLock { s in
            s.bundle = bundle
            s.generation += 1
            s.idle = [engine]
        }
    }
}
