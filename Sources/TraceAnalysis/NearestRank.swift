import ColorcamCore
import Stream

/// Nearest-rank percentiles: the p-th percentile of n sorted values is the value at 1-based rank ⌈p·n/100⌉
/// (rank 1 for p = 0). Always one of the samples, never interpolated. This is the only percentile method in
/// colorcam, so every report agrees with every other.
public enum NearestRank {
    /// The 1-based rank of percentile `percent` (0...100) among `count` values; nil when `count` is 0.
    public static func rank(percent: Int, count: Int) -> Int? {
        precondition((0...100).contains(percent), "percentile \(percent) outside 0...100")
        guard count > 0 else { return nil }
        return max(1, (percent * count + 99) / 100)
    }

    /// The `percent` percentile of `sorted` (ascending); nil when empty.
    public static func percentile(_ percent: Int, ofSorted sorted: [Int64]) -> Int64? {
        guard let rank = rank(percent: percent, count: sorted.count) else { return nil }
        return sorted[rank - 1]
    }
}

/// p50/p95/p99/max of a set of microsecond samples (nearest rank, see `NearestRank`).
public struct PercentileSummary: Sendable, Equatable {
    public var count: Int
    public var p50Us: Int64
    public var p95Us: Int64
    public var p99Us: Int64
    public var maxUs: Int64

    /// nil when there are no samples. Sorts a copy; O(n log n).
    public init?(_ samplesUs: [Int64]) {
        guard !samplesUs.isEmpty else { return nil }
        let sorted = samplesUs.sorted()
        count = sorted.count
        p50Us = NearestRank.percentile(50, ofSorted: sorted)!
        p95Us = NearestRank.percentile(95, ofSorted: sorted)!
        p99Us = NearestRank.percentile(99, ofSorted: sorted)!
        maxUs = sorted[sorted.count - 1]
    }
}
