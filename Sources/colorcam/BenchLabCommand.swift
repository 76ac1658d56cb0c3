import ColorcamCore
import Infer

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam bench lab`: times the Lab conversions on a 640×480 frame, and (with --input/--output) converts a
/// raw float32 file for Tests/integration/test_lab.py.
///
///     colorcam bench lab [--runs 50]
///     colorcam bench lab --mode rgb2lab|lab2rgb|rgb8-roundtrip --input IN.f32 --output OUT.f32
///
/// `rgb2lab`/`lab2rgb` read and write interleaved float triples; `rgb8-roundtrip` reads float triples holding
/// 8-bit codes (0…255), runs 8-bit → Lab → 8-bit, and writes the codes back as floats.
enum BenchLab {
    static func run(_ a: Arguments) throws -> Int32 {
        if let input = a.string("input") {
            guard let output = a.string("output") else { throw UsageError("bench lab: --input needs --output") }
            let mode = try a.choice("mode", ["rgb2lab", "lab2rgb", "rgb8-roundtrip"], default: "rgb2lab")
            var st = stat()
            guard stat(input, &st) == 0 else { throw InferError(.missingInput, file: input, "cannot read the file") }
            let count = Int(st.st_size) / 4
            guard count % 3 == 0, Int(st.st_size) % 4 == 0 else {
                throw InferError(
                    .badData, file: input, "size \(st.st_size) bytes is not a whole number of float triples")
            }
            let values = try RawFloatFile.read(input, count: count)
            var out = [Float](repeating: 0, count: count)
            switch mode {
            case "rgb2lab": Lab.convertRGBToLab(values, &out, pixelCount: count / 3)
            case "lab2rgb": Lab.convertLabToRGB(values, &out, pixelCount: count / 3)
            default:
                let codes = values.map { UInt8(max(0, min(255, $0.rounded()))) }
                var lab = [Float](repeating: 0, count: count)
                Lab.convertRGB8ToLab(codes, &lab, pixelCount: count / 3)
                var back = [UInt8](repeating: 0, count: count)
                Lab.convertLabToRGB8(lab, &back, pixelCount: count / 3)
                out = back.map { Float($0) }
            }
            try RawFloatFile.write(out, to: output)
            return 0
        }
        let runs = try a.int("runs", default: 50, range: 1...100_000)!
        let w = 640, h = 480, n = w * h
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        let rgb8 = (0..<(3 * n)).map { _ -> UInt8 in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: seed >> 56)
        }
        let rgbF = rgb8.map { Float($0) / 255 }
        var lab = [Float](repeating: 0, count: 3 * n), rgbOut = [Float](repeating: 0, count: 3 * n)
        var rgb8Out = [UInt8](repeating: 0, count: 3 * n), lightness = [Float](repeating: 0, count: n)
        Lab.convertRGBToLab(rgbF, &lab, pixelCount: n)
        // Planar L, a, b for the eight-lane API (a compositor's layout: L from the camera, a and b from the model).
        let planes = (0..<3).map { c in (0..<n).map { lab[3 * $0 + c] } }
        var rgbx8 = [UInt8](repeating: 0, count: 4 * n)
        func time(_ body: () -> Void) -> Double {
            var samples: [Double] = []
            for _ in 0..<runs {
                let t0 = SystemClock.rawNs()
                body()
                samples.append(Double(SystemClock.rawNs() - t0) / 1e6)
            }
            samples.sort()
            return samples[(samples.count - 1) / 2]
        }
        let rows: [(String, Double)] = [
            ("RGB float → Lab", time { Lab.convertRGBToLab(rgbF, &lab, pixelCount: n) }),
            ("Lab → RGB float", time { Lab.convertLabToRGB(lab, &rgbOut, pixelCount: n) }),
            ("RGB 8-bit → Lab", time { Lab.convertRGB8ToLab(rgb8, &lab, pixelCount: n) }),
            ("Lab → RGB 8-bit", time { Lab.convertLabToRGB8(lab, &rgb8Out, pixelCount: n) }),
            ("RGB 8-bit → L only", time { Lab.lightnessFromRGB8(rgb8, &lightness, pixelCount: n) }),
            ("Lab planes → RGBX 8 lanes", time { lanesToRGBX(planes[0], planes[1], planes[2], &rgbx8, pixelCount: n) })
        ]
        print("lab 640x480, one thread, p50 over \(runs) runs")
        for (label, ms) in rows { print("  \(label.padding(27))\(BenchCommand.fmt(ms)) ms") }
        return 0
    }

    /// Planar L, a, b → 8-bit RGBX through `Lab.rgb8(L:a:b:)`, eight pixels per call (`pixelCount` a multiple of 8):
    /// what a compositor's inner loop does.
    static func lanesToRGBX(_ l: [Float], _ a: [Float], _ b: [Float], _ out: inout [UInt8], pixelCount: Int) {
        l.withUnsafeBytes { lp in
            a.withUnsafeBytes { ap in
                b.withUnsafeBytes { bp in
                    out.withUnsafeMutableBytes { op in
                        var offset = 0
                        while offset < 4 * pixelCount {
                            let c = Lab.rgb8(
                                L: lp.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self),
                                a: ap.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self),
                                b: bp.loadUnaligned(fromByteOffset: offset, as: SIMD8<Float>.self))
                            for k in 0..<8 {
                                op[offset + 4 * k] = c.r[k]; op[offset + 4 * k + 1] = c.g[k];
                                op[offset + 4 * k + 2] = c.b[k]
                                op[offset + 4 * k + 3] = 255
                            }
                            offset += 32
                        }
                    }
                }
            }
        }
    }
}
