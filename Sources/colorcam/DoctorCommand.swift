import ColorcamCore
import Infer
import PhotoPipeline

#if canImport(Glibc)
    import Glibc
#endif

/// `colorcam doctor`: what colorcam found on this machine (OpenBLAS core and threads, CPU, cameras, model path).
enum DoctorCommand {
    static let command = Command(
        name: "doctor", summary: "report CPU features, kernel ISA, OpenBLAS core, cameras, model path",
        help:
            "usage: colorcam doctor\n\nPrints the CPU features, the engine's kernel instruction set (baseline, avx2 or avx512: the fastest\nthe CPU flags allow, or COLORCAM_ISA's), the OpenBLAS core (and whether it came from\nOPENBLAS_CORETYPE or colorcam's choice from the CPU flags), threads, V4L2 devices, the model\nsearch path and the detect model found.",
        run: run)

    static func run(_ args: ArraySlice<String>) throws -> Int32 {
        _ = try Arguments(args, command: "doctor", valued: [])
        let flags = OpenBLASCoreSelection.cpuFlags()
        let interesting = [
            "pni", "sse3", "ssse3", "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
            "avx512vl", "avx512dq", "avx512_bf16", "avx512_vnni"
        ]
        print(
            "cpu        \(OpenBLASCoreSelection.cpuVendor()) \(OpenBLASCoreSelection.cpuModelName()), \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) online"
        )
        print("features   \(interesting.filter(flags.contains).joined(separator: " "))")
        switch InstructionSetChoice.process {
        case .success(let choice): print("kernels    \(choice.set.rawValue): \(choice.reason)")
        case .failure(let error):
            print("kernels    UNUSABLE: \(error.description)")
            return error.kind.exitCode
        }
        do {
            let blas = try OpenBLAS.shared()
            let source: String
            switch blas.coreSource {
            case .userEnvironment(let c): source = "OPENBLAS_CORETYPE=\(c) from the environment (user's choice)"
            case .chosenFromFlags(let c): source = "chosen by colorcam from CPU flags: \(c)"
            }
            print("openblas   core \(blas.coreName) (\(source)), threads \(blas.threads), \(blas.libraryPath)")
        } catch let error as ColorcamError {
            print("openblas   unavailable: \(error.description)")
        }
        var devices: [String] = []
        if let dir = opendir("/dev") {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name.hasPrefix("video") { devices.append("/dev/" + name) }
            }
            closedir(dir)
        }
        print("v4l2       \(devices.isEmpty ? "no /dev/video* devices" : devices.sorted().joined(separator: " "))")
        print("models     \(ModelSearchPath.directories().joined(separator: ":"))")
        do {
            if let detect = try DetectModel.resolve(nil) {
                print("detect     \(detect.modelPath) (default detector: both; --detect-model none for classic)")
            } else {
                print(
                    "detect     no \(DetectModel.defaultBundleName) bundle (Models/ or the model search path): classic "
                        + "detector")
            }
        } catch let error as ColorcamError {
            print("detect     unusable: \(error.description)")
        }
        return 0
    }
}
