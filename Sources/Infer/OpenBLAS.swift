import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a whole small text file (e.g. `/proc/cpuinfo`), or nil.
func readTextFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, 65536, file) }
        if n <= 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// OpenBLAS, loaded with `dlopen` after colorcam has chosen its kernel core.
///
/// OpenBLAS reads `OPENBLAS_CORETYPE` in its load-time constructor, so the executable does not link it: the first
/// use of `OpenBLAS.shared` sets `OPENBLAS_CORETYPE` (unless the user set it), `dlopen`s the library and resolves
/// the few functions colorcam calls. Thread-safe: the load happens once; `sgemm` may be called from any thread
/// (OpenBLAS serialises its own thread pool).
public final class OpenBLAS: Sendable {
    /// Where the core came from.
    public enum CoreSource: Sendable, Equatable {
        /// `OPENBLAS_CORETYPE` was already set in the environment (by the user); colorcam left it alone.
        case userEnvironment(String)
        /// colorcam chose it from the CPU flags.
        case chosenFromFlags(String)
    }

    typealias SgemmFn =
        @convention(c) (
            Int32, Int32, Int32, Int32, Int32, Int32, Float,
            UnsafePointer<Float>?, Int32, UnsafePointer<Float>?, Int32, Float,
            UnsafeMutablePointer<Float>?, Int32
        ) -> Void
    typealias CorenameFn = @convention(c) () -> UnsafeMutablePointer<CChar>?
    typealias SetThreadsFn = @convention(c) (Int32) -> Void
    typealias GetThreadsFn = @convention(c) () -> Int32

    private let sgemmFn: SgemmFn
    private let corenameFn: CorenameFn
    private let setThreadsFn: SetThreadsFn
    private let getThreadsFn: GetThreadsFn
    /// The path that `dlopen` succeeded with.
    public let libraryPath: String
    /// What `OPENBLAS_CORETYPE` asked for, and who asked.
    public let coreSource: CoreSource

    private static let loaded: Result<OpenBLAS, InferError> = Result { try OpenBLAS() }
        .mapError { $0 as? InferError ?? InferError(.unavailable, "\($0)") }

    /// The process-wide library; throws (`.unavailable`, exit 69) when libopenblas cannot be loaded.
    public static func shared() throws -> OpenBLAS { try loaded.get() }

    private init() throws {
        let userCore = getenv("OPENBLAS_CORETYPE").map { String(cString: $0) }
        if let userCore, !userCore.isEmpty {
            coreSource = .userEnvironment(userCore)
        } else {
            let chosen = OpenBLASCoreSelection.core(forFlags: OpenBLASCoreSelection.cpuFlags())
            setenv("OPENBLAS_CORETYPE", chosen, 1)
            coreSource = .chosenFromFlags(chosen)
        }
        // One thread unless told otherwise; set before load so the pool is not spun up for all cores.
        if getenv("OPENBLAS_NUM_THREADS") == nil { setenv("OPENBLAS_NUM_THREADS", "1", 1) }
        let candidates = [
            "libopenblas.so.0", "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
            "libopenblas.so"
        ]
        var handle: UnsafeMutableRawPointer?
        var path = ""
        for candidate in candidates {
            if let h = dlopen(candidate, RTLD_NOW | RTLD_LOCAL) { handle = h; path = candidate; break }
        }
        guard let handle else {
            throw InferError(
                .unavailable, file: "libopenblas.so.0",
                "cannot dlopen OpenBLAS (install libopenblas0-pthread / libopenblas-dev)")
        }
        func symbol<T>(_ name: String, _ type: T.Type) throws -> T {
            guard let p = dlsym(handle, name) else {
                throw InferError(.unavailable, file: path, "OpenBLAS has no symbol \(name)")
            }
            return unsafeBitCast(p, to: type)
        }
        libraryPath = path
        sgemmFn = try symbol("cblas_sgemm", SgemmFn.self)
        corenameFn = try symbol("openblas_get_corename", CorenameFn.self)
        setThreadsFn = try symbol("openblas_set_num_threads", SetThreadsFn.self)
        getThreadsFn = try symbol("openblas_get_num_threads", GetThreadsFn.self)
        setThreadsFn(1)
    }

    /// The kernel core OpenBLAS actually runs (e.g. `Haswell`), as it reports it.
    public var coreName: String { corenameFn().map { String(cString: $0) } ?? "unknown" }

    /// OpenBLAS's thread count.
    public var threads: Int {
        get { Int(getThreadsFn()) }
    }

    /// Sets OpenBLAS's thread count (≥ 1). Call between runs, not during one.
    public func setThreads(_ count: Int) { setThreadsFn(Int32(max(1, count))) }

    /// Row-major `C[M×N] = alpha · op(A)[M×K] · op(B)[K×N] + beta · C`, leading dimensions in elements.
    ///
    /// Allocates nothing; pointers must be valid for the sizes given.
    @inline(__always)
    public func sgemm(
        transA: Bool, transB: Bool, m: Int, n: Int, k: Int, alpha: Float,
        a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>, ldb: Int, beta: Float,
        c: UnsafeMutablePointer<Float>, ldc: Int
    ) {
        sgemmFn(
            101, transA ? 112 : 111, transB ? 112 : 111, Int32(m), Int32(n), Int32(k), alpha,
            a, Int32(lda), b, Int32(ldb), beta, c, Int32(ldc))
    }
}
