import ColorcamCore
import Foundation

/// Fine-tunes a colorizer bundle's later layers on a user's colour photos (transfer learning: the rest of the
/// graph stays frozen and is computed once per training view, `FrozenCache`).
///
/// Views are made as the product sees prints (`UserPhoto.view`, `PrintLook`); a share of the photos is held out
/// and scored (ab L1, hue agreement) before training and at each evaluation; the parameters with the highest
/// held-out merit (relative ab L1 gain + hue agreement gain over the base) are kept. Adam with decay towards the
/// base weights (`Adam`), smooth-L1 on the model's ab output.
///
/// Rehearsal keeps the model's colours on everything else: general photos (`train(rehearsal:)`, not the user's)
/// are trained on with the base model's own output as the target (distillation), mixed with the user's views, so
/// that learning "sky" from a folder of seascapes does not repaint every picture blue. A share of them, never
/// trained on, guards the choice: weights that score more than `generalTolerance` worse than the base on their
/// own colours are never kept.
///
/// Threading: `train` runs on the caller's thread; `progress` is called on it; `shouldStop` is polled between
/// steps (a signal handler's flag).
public final class Personalizer {
    public struct Options: Sendable {
        public var selection: TrainGraph.Selection = .head
        /// Share of the photos held out for validation (0…0.5).
        public var holdout: Double = 0.2
        public var seed: UInt64 = 1
        /// Training views per photo (each a random crop, mirror and print look), fewer when `maxCachedBytes` asks.
        public var viewsPerPhoto = 8
        /// Held-out views per held-out photo.
        public var heldoutViews = 2
        public var learningRate: Float = 1e-3
        /// Decay towards the base weights (per step, scaled by the learning rate).
        public var decay: Float = 0.05
        /// Weight of the cross-entropy on the model's ab distribution (when its manifest declares one) next to
        /// the smooth-L1 on its ab output.
        public var classWeight: Float = 3
        /// Views per Adam step.
        public var batch = 8
        /// Evaluations on the held-out photos over the run, at most: each is followed by at least
        /// `trainingPerEvaluation` times its own cost of training, so that a short run on a slow machine still trains
        /// (0.6 minutes on a Zen 3 core: 2 steps when evaluations were due every twelfth of the run, ~2 s each).
        public var evaluations = 12
        /// Training after an evaluation, at least, as a multiple of that evaluation's own time (see `evaluations`).
        public var trainingPerEvaluation = 3.0
        /// Cap on the frozen cache (float16 frontier values + targets of every view: held-out, training, rehearsal,
        /// guard), bytes: views per photo shrink to fit it (`ViewPlan`), never below one.
        public var maxCachedBytes = 520 << 20
        /// Weight of the rehearsal views' loss (smooth-L1 towards the base model's output) beside a user view's.
        public var rehearsalWeight: Float = 1
        /// Training views per rehearsal photo.
        public var rehearsalViews = 2
        /// Share of the rehearsal photos kept aside, never trained on, to guard the choice of weights.
        public var guardShare = 0.25
        /// The most merit (relative ab L1 loss + hue agreement loss, against their own colours) that kept weights
        /// may lose on the guard photos compared with the base.
        public var generalTolerance = 0.05
        public init() {}
    }

    /// A progress report.
    public struct Progress: Sendable {
        public enum Phase: Sendable { case caching(done: Int, of: Int), training }
        public var phase: Phase
        public var step = 0
        /// Mean training loss since the last report.
        public var loss: Float = 0
        public var heldout: ColourScore?
        public var best: ColourScore?
        /// The guard photos' score at this evaluation (nil without rehearsal photos).
        public var general: ColourScore?
        public var secondsLeft: Double = 0
    }

    public struct Outcome: Sendable {
        /// The trained initializers' best values (highest held-out merit: relative ab L1 gain + hue agreement gain;
        /// the base values when nothing beat them).
        public var parameters: [String: Tensor]
        public var before: ColourScore
        public var after: ColourScore
        /// The guard photos' score with the base weights and with the kept ones (nil without rehearsal photos).
        public var generalBefore: ColourScore?
        public var generalAfter: ColourScore?
        public var rehearsalPhotos: [String]
        public var guardPhotos: [String]
        public var steps: Int
        public var trainViews: Int
        public var heldoutViews: Int
        public var trainPhotos: [String]
        public var heldoutPhotos: [String]
        public var cacheSeconds: Double
        public var trainSeconds: Double
        /// Mean wall time of one view's forward + backward pass, ms.
        public var stepMs: Double
        public var cacheBytes: Int
        public var stoppedEarly: Bool
        public var trainedNodes: [String]
        public var trainable: [String]
    }

    /// Stopped (`shouldStop`) before any training step: there are no trained weights to keep.
    public struct Interrupted: Error {}

    public let bundle: ModelBundle
    public let model: ONNXModel
    public let modelBytes: [UInt8]
    public private(set) var graph: TrainGraph
    let options: Options
    /// The distribution's soft targets and the logits (the Softmax's input) its cross-entropy seeds, when the
    /// bundle declares a distribution that the trained part computes.
    let binTargets: (targets: ABBinTargets, distribution: String, logits: String)?

    /// - Throws: `InferError` when the model cannot be read or its later layers cannot be trained.
    public init(bundle: ModelBundle, options: Options) throws {
        let bytes = try readWholeFile(bundle.modelPath, what: "model file")
        self.bundle = bundle
        self.options = options
        modelBytes = bytes
        model = try ONNXModel.decode(bytes, file: bundle.modelPath)
        graph = try TrainGraph(
            model: model, file: bundle.modelPath, selection: options.selection, fixed: Self.fixedDecodes(model))
        if let d = bundle.distribution, options.classWeight > 0,
            let softmax = model.graph.nodes.first(where: { $0.opType == "Softmax" && $0.outputs.contains(d.tensor) }),
            graph.steps.contains(where: { $0.outputs.contains(d.tensor) })
        {
            binTargets = (ABBinTargets(binA: d.binA, binB: d.binB), d.tensor, softmax.inputs[0])
        } else {
            binTargets = nil
        }
    }

    /// A bias-free 1×1 Conv reading a Softmax is a distribution's decode (its weights are the bins' ab, not learned
    /// features): never trained.
    static func fixedDecodes(_ model: ONNXModel) -> Set<String> {
        let softmaxOutputs = Set(model.graph.nodes.filter { $0.opType == "Softmax" }.flatMap(\.outputs))
        return Set(
            model.graph.nodes.filter {
                $0.opType == "Conv" && $0.inputs.count == 2 && softmaxOutputs.contains($0.inputs[0])
            }
            .flatMap(\.outputs))
    }

    /// Splits `photos` into training and held-out (seeded), builds the frozen cache, trains until `deadline`
    /// (seconds on `clock`, which also times the held-out evaluations and the outcome's figures) or `shouldStop`, and
    /// returns the best parameters. With a clock that moves a fixed step per reading, the run is the same whatever
    /// the machine's load.
    /// `rehearsal`: general colour photos (not the user's; empty: none), split into rehearsed and guard photos
    /// (seeded, `guardShare`).
    /// - Throws: `InferError` when the graph's shapes do not fit; `Interrupted` when stopped while caching.
    public func train(
        photos: [UserPhoto], rehearsal: [UserPhoto] = [], deadline: Double, clock: any MonotonicClock,
        progress: (Progress) -> Void, shouldStop: () -> Bool
    ) throws -> Outcome {
        func seconds() -> Double { Double(clock.nowNs()) / 1e9 }
        var rng = SeededGenerator(seed: options.seed)
        let order = photos.indices.shuffled(using: &rng)
        let heldoutCount = min(max(1, Int((Double(photos.count) * options.holdout).rounded())), photos.count - 1)
        let heldout = order.prefix(heldoutCount).map { photos[$0] }
        let training = order.dropFirst(heldoutCount).map { photos[$0] }
        var rehearsalRng = SeededGenerator(seed: options.seed ^ 0x5245_4845_4152_5345)
        let rehearsalOrder = rehearsal.indices.shuffled(using: &rehearsalRng)
        let guardCount =
            rehearsal.count < 2 ? 0 : max(1, Int((Double(rehearsal.count) * options.guardShare).rounded()))
        let guardPhotos = rehearsalOrder.prefix(guardCount).map { rehearsal[$0] }
        let rehearsed = rehearsalOrder.dropFirst(guardCount).map { rehearsal[$0] }
        let n = bundle.inputSizePx
        let cacheStart = seconds()
        let trainCache = try FrozenCache(
            model: model, file: bundle.modelPath, frontier: graph.frontier, inputShape: [1, 1, n, n])
        let heldCache = try FrozenCache(
            model: model, file: bundle.modelPath, frontier: graph.frontier, inputShape: [1, 1, n, n])
        let guardCache = try FrozenCache(
            model: model, file: bundle.modelPath, frontier: graph.frontier, inputShape: [1, 1, n, n])
        var trainTargets: [[Float16]] = [], heldTargets: [[Float]] = [], guardTargets: [[Float]] = []
        let counts = ViewPlan.Counts(
            heldout: heldout.count, training: training.count, rehearsed: rehearsed.count,
            guardPhotos: guardPhotos.count)
        // The plan needs one view's size: it is made after the first held-out view is cached.
        var plan: ViewPlan?
        var total = ViewPlan(counts: counts, perViewBytes: 0, options: options).views(counts)
        var done = 0
        func input(_ view: [Float]) -> [Float] { view.map { $0 * bundle.inputScale + bundle.inputOffset } }
        for photo in heldout {
            if shouldStop() { throw Interrupted() }
            var made = 0
            while made < (plan?.heldout ?? 1) {
                let v = photo.view(sizePx: n, look: .random(&rng), jitter: false, rng: &rng)
                heldCache.add(input: input(v.input))
                heldTargets.append(v.target)
                done += 1
                made += 1
                if plan == nil {
                    plan = ViewPlan(counts: counts, perViewBytes: heldCache.bytes + 4 * n * n, options: options)
                    total = plan!.views(counts)
                }
            }
            progress(Progress(phase: .caching(done: done, of: total)))
        }
        let views = plan ?? ViewPlan(counts: counts, perViewBytes: 0, options: options)
        for photo in training {
            if shouldStop() { throw Interrupted() }
            for _ in 0..<views.training {
                let v = photo.view(sizePx: n, look: .random(&rng), jitter: true, rng: &rng)
                trainCache.add(input: input(v.input))
                trainTargets.append(v.target.map { Float16($0) })
                done += 1
            }
            progress(Progress(phase: .caching(done: done, of: total)))
        }
        // Rehearsal: the views' targets are the base model's own output, filled in below.
        let userViews = trainCache.count
        for photo in rehearsed {
            if shouldStop() { throw Interrupted() }
            for _ in 0..<views.rehearsal {
                let v = photo.view(sizePx: n, look: .random(&rng), jitter: true, rng: &rng)
                trainCache.add(input: input(v.input))
                done += 1
            }
            progress(Progress(phase: .caching(done: done, of: total)))
        }
        for i in userViews..<trainCache.count {
            let out = try graph.forward(frontier: trainCache.frontierValues(i)).output
            trainTargets.append(out.data.map { Float16($0 * bundle.outputScale) })
        }
        for photo in guardPhotos {
            if shouldStop() { throw Interrupted() }
            for _ in 0..<views.guardViews {
                let v = photo.view(sizePx: n, look: .random(&rng), jitter: false, rng: &rng)
                guardCache.add(input: input(v.input))
                guardTargets.append(v.target)
                done += 1
            }
            progress(Progress(phase: .caching(done: done, of: total)))
        }
        let cacheSeconds = seconds() - cacheStart
        let scale = 1 / max(bundle.outputScale, 1e-12)

        func score(_ cache: FrozenCache, _ targets: [[Float]]) throws -> ColourScore {
            var s = ColourScore()
            for i in 0..<cache.count {
                let out = try graph.forward(frontier: cache.frontierValues(i)).output
                s.add(predicted: out.data.map { $0 * bundle.outputScale }, target: targets[i])
            }
            return s
        }
        func score() throws -> ColourScore { try score(heldCache, heldTargets) }
        func generalScore() throws -> ColourScore? {
            guardCache.count == 0 ? nil : try score(guardCache, guardTargets)
        }
        let before = try score()
        let generalBefore = try generalScore()
        /// How much better than `base` a score is: the relative ab L1 gain plus the hue agreement gain (both count:
        /// ab L1 alone rewards grey).
        func merit(_ s: ColourScore, over base: ColourScore) -> Double {
            (base.abL1 - s.abL1) / max(base.abL1, 1e-9) + (s.hue - base.hue)
        }
        func merit(_ s: ColourScore) -> Double { merit(s, over: before) }
        /// Whether weights scoring `general` on the guard photos keep the model's colours on everything else.
        func keepsGeneral(_ general: ColourScore?) -> Bool {
            guard let general, let generalBefore else { return true }
            return merit(general, over: generalBefore) >= -options.generalTolerance
        }
        var best = before
        var bestGeneral = generalBefore
        var bestParameters = graph.parameters
        /// Scores the current weights and keeps them when they beat the best so far and pass the guard.
        func evaluate() throws -> (ColourScore, ColourScore?) {
            let s = try score()
            let g = try generalScore()
            if merit(s) > merit(best) && keepsGeneral(g) {
                best = s
                bestGeneral = g
                bestParameters = graph.parameters
            }
            return (s, g)
        }
        var adam = Adam(learningRate: options.learningRate, decay: options.decay, anchor: graph.parameters)
        let trainStart = seconds()
        let budget = max(1, deadline - trainStart)
        var nextEval = trainStart + budget / Double(max(1, options.evaluations))
        var steps = 0, viewsRun = 0, lossSum: Float = 0, lossCount = 0, stepTime: Double = 0
        var stopped = false
        var grads: [String: Tensor] = [:]
        training: while true {
            for i in (0..<trainCache.count).shuffled(using: &rng) {
                let now = seconds()
                if shouldStop() { stopped = true; break training }
                if now >= deadline { break training }
                let t0 = now
                let acts = try graph.forward(frontier: trainCache.frontierValues(i))
                let targetAB = trainTargets[i].map { Float($0) }
                let target = Tensor(shape: acts.output.shape, data: targetAB.map { $0 * scale })
                var (loss, dy) = TrainLoss.smoothL1(
                    prediction: acts.output, target: target, weight: chromaWeight(trainTargets[i], n))
                let rehearsing = i >= userViews
                if rehearsing {
                    let w = options.rehearsalWeight
                    dy.data.withUnsafeMutableBufferPointer { g in for k in 0..<g.count { g[k] *= w } }
                    loss *= w
                }
                var seeds = [graph.outputName: dy]
                if !rehearsing, let (targets, distribution, logits) = binTargets, let p = acts.tensor(distribution) {
                    var (ce, dz) = targets.crossEntropy(
                        probabilities: p, targetAB: targetAB, sizePx: n)
                    let w = options.classWeight
                    dz.data.withUnsafeMutableBufferPointer { g in for k in 0..<g.count { g[k] *= w } }
                    seeds[logits] = dz
                    ce *= w
                    loss += ce / bundle.outputScale
                }
                try graph.backward(acts, seeds: seeds, into: &grads)
                stepTime += seconds() - t0
                viewsRun += 1
                lossSum += loss * bundle.outputScale
                lossCount += 1
                if viewsRun % options.batch == 0 {
                    adam.step(&graph.parameters, gradients: grads, scale: 1 / Float(options.batch))
                    grads.removeAll(keepingCapacity: true)
                    steps += 1
                }
                if seconds() >= nextEval {
                    let evaluationStart = seconds()
                    let (s, g) = try evaluate()
                    let evaluationEnd = seconds()
                    nextEval = max(
                        nextEval + budget / Double(max(1, options.evaluations)),
                        evaluationEnd + options.trainingPerEvaluation * (evaluationEnd - evaluationStart))
                    progress(
                        Progress(
                            phase: .training, step: steps, loss: lossSum / Float(max(1, lossCount)), heldout: s,
                            best: best, general: g,
                            secondsLeft: max(0, deadline - seconds())))
                    lossSum = 0
                    lossCount = 0
                }
            }
        }
        // A last look at the final weights (the run may end between evaluations).
        if !stopped { _ = try evaluate() }
        return Outcome(
            parameters: bestParameters, before: before, after: best, generalBefore: generalBefore,
            generalAfter: bestGeneral, rehearsalPhotos: rehearsed.map(\.path), guardPhotos: guardPhotos.map(\.path),
            steps: steps, trainViews: trainCache.count,
            heldoutViews: heldCache.count, trainPhotos: training.map(\.path), heldoutPhotos: heldout.map(\.path),
            cacheSeconds: cacheSeconds, trainSeconds: seconds() - trainStart,
            stepMs: viewsRun == 0 ? 0 : 1000 * stepTime / Double(viewsRun),
            cacheBytes: trainCache.bytes + heldCache.bytes + guardCache.bytes + trainTargets.count * 4 * n * n,
            stoppedEarly: stopped, trainedNodes: graph.trainedNodes, trainable: graph.trainable)
    }
}

/// Per pixel of an n×n target (planar a then b, Lab units): 1 + chroma / 10, at most 5 — coloured pixels weigh
/// more in the smooth-L1, as class rebalancing does for a classifier (ab L1 alone rewards grey).
func chromaWeight(_ target: [Float16], _ n: Int) -> [Float] {
    (0..<(n * n)).map { i in
        let a = Float(target[i]), b = Float(target[n * n + i])
        return min(1 + (a * a + b * b).squareRoot() / 10, 5)
    }
}

/// SplitMix64: a small seeded generator, so a personalize run with the same seed draws the same views.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
