import Foundation
import Infer
import Testing

@testable import PhotoPipeline

/// Which way is up on a print: quarter turns of grids and points (`QuarterTurn`), the vote of the orientation head's
/// four answers (`UprightVote`), and a view coloured upright and turned back (`UprightTurner`, a tiny model whose head
/// knows its pictures' up).
@Suite struct UprightTests {
    @Test func aQuarterTurnIsNumPysRot90AndFourMakeNone() {
        // 3×3, turned once counterclockwise: the last column becomes the first row (NumPy rot90).
        let grid: [Int] = [0, 1, 2, 3, 4, 5, 6, 7, 8]
        var once = [Int](repeating: -1, count: 9), back = once
        QuarterTurn.turn(grid, into: &once, sidePx: 3, turns: 1)
        #expect(once == [2, 5, 8, 1, 4, 7, 0, 3, 6])
        QuarterTurn.turn(once, into: &back, sidePx: 3, turns: -1)
        #expect(back == grid)
        var twice = once
        QuarterTurn.turn(grid, into: &twice, sidePx: 3, turns: 2)
        #expect(twice == grid.reversed())
        // Cells of several elements move together.
        let pairs = (0..<8).map { $0 }
        var turned = [Int](repeating: -1, count: 8)
        QuarterTurn.turn(pairs, into: &turned, sidePx: 2, turns: 1, stride: 2)
        #expect(turned == [2, 3, 6, 7, 0, 1, 4, 5])
    }

    @Test func aPictureOfAnyShapeTurnsAsNumPysRot90() {
        // 3 wide × 2 high, one channel value per pixel (R = G = B): [[1, 2, 3], [4, 5, 6]].
        let picture = RGBImage(widthPx: 3, heightPx: 2, pixels: [1, 2, 3, 4, 5, 6].flatMap { [$0, $0, $0] })
        func values(_ i: RGBImage) -> [UInt8] { stride(from: 0, to: i.pixels.count, by: 3).map { i.pixels[$0] } }
        let once = QuarterTurn.turned(picture, turns: 1)
        #expect((once.widthPx, once.heightPx) == (2, 3))
        #expect(values(once) == [3, 6, 2, 5, 1, 4])  // np.rot90: [[3, 6], [2, 5], [1, 4]]
        #expect(values(QuarterTurn.turned(picture, turns: 2)) == [6, 5, 4, 3, 2, 1])
        let thrice = QuarterTurn.turned(picture, turns: 3)
        #expect((thrice.widthPx, thrice.heightPx) == (2, 3))
        #expect(values(thrice) == [4, 1, 5, 2, 6, 3])  // np.rot90(·, 3): [[4, 1], [5, 2], [6, 3]]
        #expect(values(QuarterTurn.turned(once, turns: -1)) == values(picture))
        #expect(QuarterTurn.cornerOrder(turns: 0) == [0, 1, 2, 3])
        #expect(QuarterTurn.cornerOrder(turns: 1) == [1, 2, 3, 0])  // the top-right corner becomes the top-left
        #expect(QuarterTurn.cornerOrder(turns: -1) == [3, 0, 1, 2])
    }

    @Test(arguments: 0..<4)
    func aPointTurnsWithItsGrid(turns: Int) {
        let n = 5
        for y in 0..<n {
            for x in 0..<n {
                var grid = [Int](repeating: 0, count: n * n), turned = grid
                grid[y * n + x] = 1
                QuarterTurn.turn(grid, into: &turned, sidePx: n, turns: turns)
                let cell = turned.firstIndex(of: 1)!
                let (u, v) = QuarterTurn.turn(
                    u: (Float(x) + 0.5) / Float(n), v: (Float(y) + 0.5) / Float(n), turns: turns)
                #expect(Int(u * Float(n)) == cell % n && Int(v * Float(n)) == cell / n, "\(x),\(y) turned \(turns)")
            }
        }
    }

    @Test func theFourAnswersVoteAndThePriorBreaksATie() {
        // A view that is its upright picture turned 3: turned j more, the head sees turn (3 + j) mod 4, fairly sure.
        var vote = UprightVote(priorUpright: 0.5)
        for j in 0..<4 {
            var p = [Float](repeating: 0.1, count: 4)
            p[(3 + j) % 4] = 0.7
            p.withUnsafeBufferPointer { vote.add($0, viewTurns: j) }
        }
        #expect(vote.viewTurns == 3 && vote.uprightTurns == 1)
        // Answers that say nothing: the prior's upright wins.
        var blank = UprightVote(priorUpright: 0.5)
        let flat = [Float](repeating: 0.25, count: 4)
        for j in 0..<4 { flat.withUnsafeBufferPointer { blank.add($0, viewTurns: j) } }
        #expect(blank.uprightTurns == 0)
        // One confident answer among three that say nothing wins over a mild prior.
        var one = UprightVote(priorUpright: 0.4)
        for j in 0..<4 {
            var p = flat
            if j == 0 { p = [0.01, 0.97, 0.01, 0.01] }
            p.withUnsafeBufferPointer { one.add($0, viewTurns: j) }
        }
        #expect(one.viewTurns == 1)
    }

    @Test(arguments: 0..<4)
    func aTurnedViewIsColouredUprightAndTurnedBack(viewTurns: Int) throws {
        let t = try TurnedView(viewTurns: viewTurns, tag: "back")
        defer { t.remove() }
        let (n, bundle, engine, view, path) = (TestUprightONNX.sidePx, t.bundle, t.engine, t.view, t.path)
        let turner = UprightTurner(inputSizePx: n, abWidthPx: n, abHeightPx: n, maxHints: 4, keptSuggestions: 0)
        #expect(turner.canTurn(bundle))
        let noHints = UnsafeBufferPointer<HintPoint>(start: nil, count: 0)
        let turns = view.withUnsafeBufferPointer {
            turner.uprightTurns(view: $0, hints: noHints, orientation: t.orientation, bundle: bundle)
        }
        #expect(turns == (4 - viewTurns) % 4)
        // Coloured turned upright (this model's ab is its input), the ab comes back in the view's own frame.
        var ab = [Float](repeating: -1, count: 2 * n * n)
        _ = view.withUnsafeBufferPointer { v in
            ab.withUnsafeMutableBufferPointer {
                turner.colorize(
                    view: v, turns: turns, hints: noHints, engine: engine, bundle: bundle, remote: nil,
                    fallbackLocal: false, ab: $0)
            }
        }
        #expect(Array(ab[0..<(n * n)]) == view && Array(ab[(n * n)...]) == view)
        // A bundle without a head is never turned.
        #expect(!turner.canTurn(ModelBundle(name: "plain", modelPath: path, inputSizePx: n)))
    }

    /// The product's path (`colour`): the turn decided by the graph cut at the head, the view coloured turned so by
    /// one run of the colorizer, its ab and kept suggestions turned back into the view's frame. The tiny model's
    /// "distribution" is its quadrant means (1 bin, 2 × 2 cells).
    @Test(arguments: 0..<4)
    func aTrackIsColouredUprightByOneRunAfterTheHeadsVote(viewTurns: Int) throws {
        let t = try TurnedView(viewTurns: viewTurns, tag: "once", withDistribution: true)
        defer { t.remove() }
        let (n, bundle, engine, view) = (TestUprightONNX.sidePx, t.bundle, t.engine, t.view)
        let kept = 4 * ABSuggestions.keptPerCell
        let turner = UprightTurner(inputSizePx: n, abWidthPx: n, abHeightPx: n, maxHints: 4, keptSuggestions: kept)
        let noHints = UnsafeBufferPointer<HintPoint>(start: nil, count: 0)
        var bins = [UInt16](repeating: 9, count: kept), probabilities = [Float](repeating: 9, count: kept)
        var ab = [Float](repeating: -1, count: 2 * n * n)
        let (turns, outcome, suggested) = bins.withUnsafeMutableBufferPointer { b in
            probabilities.withUnsafeMutableBufferPointer { p in
                view.withUnsafeBufferPointer { v in
                    ab.withUnsafeMutableBufferPointer {
                        turner.colour(
                            view: v, knownTurns: nil, hints: noHints, engine: engine, orientation: t.orientation,
                            bundle: bundle, remote: nil, fallbackLocal: false, ab: $0,
                            suggestions: SuggestionSink(
                                distribution: bundle.distribution!, cells: 4, bins: b.baseAddress!,
                                probabilities: p.baseAddress!))
                    }
                }
            }
        }
        #expect(turns == (4 - viewTurns) % 4 && suggested && outcome.gaveResult)
        #expect(Array(ab[0..<(n * n)]) == view && Array(ab[(n * n)...]) == view)
        // Without the orientation engine the view is coloured as fed.
        var asFed = [Float](repeating: -1, count: 2 * n * n)
        let fed = view.withUnsafeBufferPointer { v in
            asFed.withUnsafeMutableBufferPointer {
                turner.colour(
                    view: v, knownTurns: nil, hints: noHints, engine: engine, orientation: nil, bundle: bundle,
                    remote: nil, fallbackLocal: false, ab: $0, suggestions: nil)
            }
        }
        #expect(fed.turns == 0 && asFed == ab)
        // In the view's frame, each cell's one bin is the mean of the view's quadrant there.
        for cell in 0..<4 {
            let (qx, qy) = (cell % 2, cell / 2)
            var sum: Float = 0
            for y in 0..<4 { for x in 0..<4 { sum += view[(qy * 4 + y) * n + qx * 4 + x] } }
            #expect(abs(probabilities[cell * ABSuggestions.keptPerCell] - sum / 16) < 1e-4, "cell \(cell)")
        }
    }

    /// The graph cut at the head (`ONNXModel.truncated`) keeps only what the head needs (not the tiny model's ab
    /// `Concat`) and answers as the whole graph does with the head tapped.
    @Test func theGraphCutAtTheHeadAnswersAsTheWholeGraph() throws {
        let t = try TurnedView(viewTurns: 1, tag: "cut")
        defer { t.remove() }
        let n = TestUprightONNX.sidePx
        let model = try ONNXModel.decode(TestUprightONNX.model(), file: "tiny")
        let cut = try #require(model.truncated(at: "turn_probs"))
        #expect(cut.graph.nodes.map(\.opType) == ["AveragePool", "Flatten", "Gemm", "Softmax"])
        #expect(cut.graph.outputs.map(\.name) == ["turn_probs"] && cut.graph.initializers.count == 2)
        #expect(model.truncated(at: "no-such-tensor") == nil)
        let whole = try InferenceEngine(model: model, tapping: ["turn_probs"])
        var ab = [Float](repeating: 0, count: 2 * n * n), answer = [Float](repeating: 0, count: 4)
        t.view.withUnsafeBufferPointer { v in
            ab.withUnsafeMutableBufferPointer { whole.run(input: v, output: $0) }
            answer.withUnsafeMutableBufferPointer { t.orientation.run(input: v, output: $0) }
        }
        let tapped = try #require(whole.tapped("turn_probs"))
        #expect(Array(tapped.values) == answer && answer.reduce(0, +) > 0.99)
    }

    @Test func aHeadOfTheWrongShapeOrABadPriorIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("upright-bad-\(getpid()).onnx").path
        try Data(TestUprightONNX.model()).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bundle = ModelBundle(name: "upright", modelPath: path, inputSizePx: TestUprightONNX.sidePx)
        bundle.orientation = .init(tensor: "quadrants", priorUpright: 0.5)  // [1, 1, 2, 2], not [1, 4]
        #expect(throws: ModelBundleError.self) { try Colorizer.orientationEngine(for: bundle) }
        bundle.orientation = .init(tensor: "no-such-tensor", priorUpright: 0.5)
        #expect(throws: ModelBundleError.self) { try Colorizer.orientationEngine(for: bundle) }
        let manifest = """
            {"name": "m", "file": "m.onnx", "input": {"name": "L", "shape": [1, 1, 16, 16]},
             "output": {"name": "ab", "shape": [1, 2, 16, 16]}, "orientation": {"tensor": "turn_probs", "prior_upright": %@}}
            """
        for prior in ["1.5", "0", "\"half\""] {
            let data = Data(manifest.replacingOccurrences(of: "%@", with: prior).utf8)
            #expect(throws: ModelBundleError.self, "\(prior)") {
                try ModelBundle.parseManifest(data, directory: "/tmp", manifestPath: "/tmp/manifest.json")
            }
        }
        let good = Data(manifest.replacingOccurrences(of: "%@", with: "0.5").utf8)
        let parsed = try ModelBundle.parseManifest(good, directory: "/tmp", manifestPath: "/tmp/manifest.json")
        #expect(parsed.orientation == .init(tensor: "turn_probs", priorUpright: 0.5))
    }
}

/// The tiny model (`TestUprightONNX`) in a file of its own (parameterised cases run side by side; `remove` deletes it),
/// its bundle with the orientation head (and its quadrant means as a 1-bin, 2 × 2-cell distribution when asked) and
/// engine, and the upright picture turned `viewTurns`: a bright top left quadrant, and a ramp that tells every pixel
/// apart.
struct TurnedView {
    let path: String
    let bundle: ModelBundle
    let engine: InferenceEngine
    /// The model cut at its head (`Colorizer.orientationEngine`).
    let orientation: InferenceEngine
    let view: [Float]

    init(viewTurns: Int, tag: String, withDistribution: Bool = false) throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "upright-\(tag)-\(getpid())-\(viewTurns).onnx"
            ).path
        try Data(TestUprightONNX.model()).write(to: URL(fileURLWithPath: path))
        let n = TestUprightONNX.sidePx
        var bundle = ModelBundle(name: "upright", modelPath: path, inputSizePx: n)
        bundle.orientation = .init(tensor: "turn_probs", priorUpright: 0.5)
        if withDistribution {
            bundle.distribution = .init(tensor: "quadrants", shape: [1, 1, 2, 2], binA: [0], binB: [0])
        }
        self.bundle = bundle
        engine = try Colorizer.engine(for: bundle)
        orientation = try #require(try Colorizer.orientationEngine(for: bundle))
        var upright = [Float](repeating: 0, count: n * n)
        for y in 0..<n { for x in 0..<n { upright[y * n + x] = (x < 4 && y < 4 ? 80 : 10) + Float(y * n + x) / 8 } }
        var view = upright
        QuarterTurn.turn(upright, into: &view, sidePx: n, turns: viewTurns)
        self.view = view
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
