/// Which OpenBLAS kernel family (`OPENBLAS_CORETYPE` value) suits a CPU, decided from its `/proc/cpuinfo` flags.
///
/// Debian's OpenBLAS 0.3.21 misdetects recent AMD CPUs as `Prescott` (SSE3 kernels, 4–6× slower sgemm); colorcam
/// picks the core from the flags instead and passes it through `OPENBLAS_CORETYPE` before the library loads.
public enum OpenBLASCoreSelection {
    /// The core for a set of CPU flags (lower-case, as `/proc/cpuinfo` spells them).
    ///
    /// AVX-512 F+BW+VL+DQ → `SkylakeX` (`Cooperlake` with BF16); AVX2+FMA → `Haswell` (also on AMD: OpenBLAS's
    /// `Zen` core uses the same AVX2 sgemm kernel, and measured interleaved on this EPYC it was not faster);
    /// AVX → `Sandybridge`; SSE3 → `Prescott`; otherwise `Core2`.
    public static func core(forFlags flags: Set<String>) -> String {
        if ["avx512f", "avx512bw", "avx512vl", "avx512dq"].allSatisfy(flags.contains) {
            return flags.contains("avx512_bf16") ? "Cooperlake" : "SkylakeX"
        }
        if flags.contains("avx2") && flags.contains("fma") { return "Haswell" }
        if flags.contains("avx") { return "Sandybridge" }
        if flags.contains("pni") || flags.contains("sse3") { return "Prescott" }
        return "Core2"
    }

    /// The flags of the first CPU in `/proc/cpuinfo` (empty when it cannot be read).
    public static func cpuFlags(cpuinfo: String? = nil) -> Set<String> {
        let text = cpuinfo ?? readTextFile("/proc/cpuinfo") ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("flags") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return Set(line[line.index(after: colon)...].split(separator: " ").map(String.init))
        }
        return []
    }

    /// The CPU vendor id from `/proc/cpuinfo` (`GenuineIntel`, `AuthenticAMD`), or empty.
    public static func cpuVendor(cpuinfo: String? = nil) -> String {
        let text = cpuinfo ?? readTextFile("/proc/cpuinfo") ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("vendor_id") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            }
        }
        return ""
    }

    /// The CPU model name from `/proc/cpuinfo`, or `unknown`.
    public static func cpuModelName() -> String {
        let text = readTextFile("/proc/cpuinfo") ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            }
        }
        return "unknown"
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return String(s)
    }
}
