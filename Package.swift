// swift-tools-version:6.0
// colorcam: a real-time frame-stream processor. Layering (see each module's README):
//   C shims (CPNG, …) → ColorcamCore (frames, clocks, errors, sockets) → Stream / Detect / Infer → PhotoPipeline
//   (joins them: the product's frame processor), TraceAnalysis (reads traces back), Remote (inference servers)
//   → colorcam (CLI). Stream never imports Detect or Infer.
import PackageDescription

/// `-O` in debug builds as well as release, for Detect and its tests: their unit tests detect on whole rendered frames
/// (unoptimized, three quarters of the unit suite's time). Declared before `package`: a top-level constant read
/// before its declaration is still empty, and the flags would silently be lost.
let optimizedInDebugBuilds: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "colorcam",
    products: [
        .executable(name: "colorcam", targets: ["colorcam"]),
        .executable(name: "preview-harness", targets: ["preview-harness"])
    ],
    targets: [
        .systemLibrary(
            name: "CPNG",
            path: "Sources/CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .systemLibrary(name: "CV4L2", path: "Sources/CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(
            name: "CTurboJPEG", path: "Sources/CTurboJPEG", pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        .systemLibrary(name: "CSched", path: "Sources/CSched"),
        .systemLibrary(name: "CSanitizer", path: "Sources/CSanitizer"),
        .target(
            name: "ColorcamCore", dependencies: ["CSanitizer", "CPNG"], path: "Sources/ColorcamCore",
            exclude: ["README.md"]),
        .target(
            name: "Stream",
            dependencies: ["ColorcamCore", "CV4L2", "CTurboJPEG", "CSched"],
            path: "Sources/Stream",
            exclude: ["README.md", "TRACE-FORMAT.md"]
        ),
        .target(
            name: "TraceAnalysis", dependencies: ["ColorcamCore", "Stream"], path: "Sources/TraceAnalysis",
            exclude: ["README.md"]
        ),
        .target(
            name: "Detect", dependencies: ["ColorcamCore"], path: "Sources/Detect", exclude: ["README.md"],
            swiftSettings: optimizedInDebugBuilds),
        // The engine's hot loops: one source set (Sources/InferKernels/Shared), compiled per instruction set; Infer
        // picks one at load time (CPU flags or COLORCAM_ISA). Everything else is built for baseline x86-64.
        .target(name: "InferKernelSet", path: "Sources/InferKernels/Interface"),
        kernelTarget("Baseline", define: "COLORCAM_ISA_BASELINE", flags: []),
        kernelTarget("AVX2", define: "COLORCAM_ISA_AVX2", flags: ["-mavx2", "-mfma"]),
        kernelTarget(
            "AVX512", define: "COLORCAM_ISA_AVX512",
            flags: ["-mavx2", "-mfma", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq"]),
        .target(
            name: "Infer",
            dependencies: [
                "ColorcamCore", "CTurboJPEG", "InferKernelSet", "InferKernelsBaseline", "InferKernelsAVX2",
                "InferKernelsAVX512"
            ],
            path: "Sources/Infer", exclude: ["README.md"], swiftSettings: [.unsafeFlags(["-Ounchecked"])]),
        .target(
            name: "Preview", dependencies: ["ColorcamCore", "CTurboJPEG"], path: "Sources/Preview",
            exclude: ["README.md"]
        ),
        .executableTarget(
            name: "preview-harness", dependencies: ["ColorcamCore", "Preview"], path: "Sources/PreviewHarness",
            exclude: ["README.md"]
        ),
        .target(
            name: "Live", dependencies: ["ColorcamCore", "Stream", "Preview"], path: "Sources/Live",
            exclude: ["README.md"]
        ),
        .target(
            name: "Remote", dependencies: ["ColorcamCore", "Infer"], path: "Sources/Remote", exclude: ["README.md"]
        ),
        .target(
            name: "PhotoPipeline", dependencies: ["ColorcamCore", "Stream", "Detect", "Infer"],
            path: "Sources/PhotoPipeline", exclude: ["README.md"], swiftSettings: [.unsafeFlags(["-Ounchecked"])]
        ),
        .executableTarget(
            name: "colorcam",
            dependencies: [
                "ColorcamCore", "Stream", "TraceAnalysis", "Preview", "Live", "Infer", "Detect", "PhotoPipeline",
                "Remote"
            ],
            path: "Sources/colorcam",
            exclude: ["README.md"]
        ),
        .testTarget(
            name: "StreamTests",
            dependencies: ["Stream", "TraceAnalysis", "ColorcamCore", "CV4L2", "CTurboJPEG"],
            path: "Tests/StreamTests"
        ),
        .testTarget(
            name: "TraceAnalysisTests", dependencies: ["TraceAnalysis", "Stream", "ColorcamCore"],
            path: "Tests/TraceAnalysisTests"
        ),
        .testTarget(
            name: "PreviewTests", dependencies: ["Preview", "ColorcamCore", "CTurboJPEG"], path: "Tests/PreviewTests"
        ),
        .testTarget(name: "LiveTests", dependencies: ["Live", "Stream", "ColorcamCore"], path: "Tests/LiveTests"),
        .testTarget(name: "RemoteTests", dependencies: ["Remote", "Infer", "ColorcamCore"], path: "Tests/RemoteTests"),
        .testTarget(
            name: "InferTests", dependencies: ["Infer", "ColorcamCore"], path: "Tests/InferTests",
            exclude: ["Fixtures"]),
        .testTarget(
            name: "DetectTests", dependencies: ["Detect", "ColorcamCore"], path: "Tests/DetectTests",
            swiftSettings: optimizedInDebugBuilds),
        .testTarget(
            name: "PhotoPipelineTests", dependencies: ["PhotoPipeline", "Stream", "Detect", "Infer", "ColorcamCore"],
            path: "Tests/PhotoPipelineTests"
        )
    ]
)

/// One instruction set's build of the shared kernel sources (`Sources/InferKernels/<name>` holds links to them).
func kernelTarget(_ name: String, define: String, flags: [String]) -> Target {
    .target(
        name: "InferKernels" + name, dependencies: ["InferKernelSet"], path: "Sources/InferKernels/" + name,
        swiftSettings: [.define(define), .unsafeFlags(["-Ounchecked"] + flags.flatMap { ["-Xcc", $0] })])
}
