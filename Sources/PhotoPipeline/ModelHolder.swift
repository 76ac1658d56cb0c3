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
    /// One inference's engines: the colorizer and, when the bundle has an orientation head, the graph cut at it
    /// (`Colorizer.orientationEngine`).
    final class Engines {
        let colorizer: InferenceEngine
        let orientation: InferenceEngine?

        init(bundle: ModelBundle) throws {
            colorizer = try Colorizer.engine(for: bundle)
            orientation = try Colorizer.orientationEngine(for: bundle)
        }
    }

    struct Loaded: @unchecked Sendable {
        // Invariant for @unchecked Sendable: engines are used by one thread at a time (acquire/release).
        var bundle: ModelBundle
        var generation: Int
        var idle: [Engines]
    }

    let inputShape: [Int]
    let outputShape: [Int]
    private let state: Locked<Loaded>

    init(bundle: ModelBundle) throws {
        let engines = try Engines(bundle: bundle)
        inputShape = engines.colorizer.inputShape
        outputShape = engines.colorizer.outputShape
        state = Locked(Loaded(bundle: bundle, generation: 0, idle: [engines]))
    }

    var bundle: ModelBundle { state.withLock { $0.bundle } }
    var generation: Int { state.withLock { $0.generation } }

    /// Engines of the current model (new ones only when every loaded set is busy: with several in flight).
    /// Nil, with the error logged, if that extra set cannot be loaded (the file changed since it was checked).
    func acquire() -> (engines: Engines, generation: Int, bundle: ModelBundle)? {
        let (engines, generation, bundle) = state.withLock { s in (s.idle.popLast(), s.generation, s.bundle) }
        if let engines { return (engines, generation, bundle) }
        do {
            return (try Engines(bundle: bundle), generation, bundle)
        } catch {
            Log.error("colorizer: cannot load another engine for a parallel inference: \(error)")
            return nil
        }
    }

    /// Returns engines; those of a replaced model are dropped.
    func release(_ engines: Engines, generation: Int) {
        state.withLock { s in if s.generation == generation { s.idle.append(engines) } }
    }

    /// Loads `bundle` and makes it current; throws (old model kept) when it cannot be used.
    func reload(_ bundle: ModelBundle) throws {
        let engines = try Engines(bundle: bundle)
        let engine = engines.colorizer
        guard engine.inputShape == inputShape, engine.outputShape == outputShape else {
            throw ModelBundleError(
                .badData, file: bundle.modelPath,
                "takes \(engine.inputShape) → \(engine.outputShape); the running model takes "
                    + "\(inputShape) → \(outputShape) (restart to change sizes)")
        }
        state.withLock { s in
            s.bundle = bundle
            s.generation += 1
            s.idle = [engines]
        }
    }
}
