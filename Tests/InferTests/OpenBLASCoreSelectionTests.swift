import Testing

@testable import Infer

@Suite struct OpenBLASCoreSelectionTests {
    @Test func avx512PicksSkylakeX() {
        let flags: Set<String> = ["sse3", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"]
        #expect(OpenBLASCoreSelection.core(forFlags: flags) == "SkylakeX")
        #expect(OpenBLASCoreSelection.core(forFlags: flags.union(["avx512_bf16"])) == "Cooperlake")
    }

    @Test func avx2OnlyPicksHaswell() {
        #expect(OpenBLASCoreSelection.core(forFlags: ["pni", "avx", "avx2", "fma"]) == "Haswell")
        // AVX-512F alone (no BW/VL) is not enough for the SkylakeX kernels.
        #expect(OpenBLASCoreSelection.core(forFlags: ["avx", "avx2", "fma", "avx512f"]) == "Haswell")
    }

    @Test func neitherPicksSandybridgeOrPrescott() {
        #expect(OpenBLASCoreSelection.core(forFlags: ["pni", "avx"]) == "Sandybridge")
        #expect(OpenBLASCoreSelection.core(forFlags: ["pni", "avx", "avx2"]) == "Sandybridge")
        #expect(OpenBLASCoreSelection.core(forFlags: ["pni", "ssse3"]) == "Prescott")
        #expect(OpenBLASCoreSelection.core(forFlags: []) == "Core2")
    }

    @Test func parsesCpuinfoFlags() {
        let text =
            "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu sse2 avx2 fma\n\nprocessor\t: 1\nflags\t: sse2\n"
        #expect(OpenBLASCoreSelection.cpuFlags(cpuinfo: text) == ["fpu", "sse2", "avx2", "fma"])
        #expect(OpenBLASCoreSelection.cpuVendor(cpuinfo: "vendor_id\t: AuthenticAMD\n") == "AuthenticAMD")
    }

    @Test func loadedLibraryRunsTheRequestedCore() throws {
        let blas = try OpenBLAS.shared()
        switch blas.coreSource {
        case .userEnvironment(let requested), .chosenFromFlags(let requested):
            #expect(blas.coreName.lowercased() == requested.lowercased())
        }
        var c: [Float] = [0, 0, 0, 0]
        let a: [Float] = [1, 2, 3, 4], b: [Float] = [5, 6, 7, 8]
        blas.sgemm(
            transA: false, transB: false, m: 2, n: 2, k: 2, alpha: 1, a: a, lda: 2, b: b, ldb: 2, beta: 0,
            c: &c, ldc: 2)
        #expect(c == [19, 22, 43, 50])
    }
}
