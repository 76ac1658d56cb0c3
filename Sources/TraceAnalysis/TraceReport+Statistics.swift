import ColorcamCore
import Stream

/// The report's pure computations, separate from event collection so tests can call them on plain arrays.
extension TraceReport {
    static let microsecondsPerSecond: Int64 = 1_000_000

    /// Mean rate and worst 1-second window of output timestamps.
    /// - Parameter timesUs: output event timestamps, ascending.
    static func outputRate(sortedTimesUs timesUs: [Int64]) -> OutputRate {
        var rate = OutputRate()
        guard let first = timesUs.first, let last = timesUs.last else { return rate }
        if timesUs.count >= 2, last > first {
            rate.meanFps = Double(timesUs.count - 1) * 1e6 / Double(last - first)
        }
        // Window i covers [tᵢ, tᵢ + 1 s); only windows that end by the last output count (a full second observed).
        var end = 0
        for (i, start) in timesUs.enumerated() where start + microsecondsPerSecond <= last {
            if end < i { end = i }
            while end < timesUs.count, timesUs[end] < start + microsecondsPerSecond { end += 1 }
            let frames = end - i
            if rate.worstWindowFrames == nil || frames < rate.worstWindowFrames! {
                rate.worstWindowFrames = frames
                rate.worstWindowStartUs = start
            }
        }
        return rate
    }

    /// Slope and quarter means of lag against time; nil without samples.
    /// - Parameter samples: (infer start ts, lag), ascending by ts.
    static func lagTrend(sortedSamples samples: [(tsUs: Int64, lagUs: Int64)]) -> LagTrend? {
        guard !samples.isEmpty else { return nil }
        let n = Double(samples.count)
        let origin = samples[0].tsUs
        var sumT = 0.0, sumL = 0.0
        for sample in samples {
            sumT += Double(sample.tsUs - origin) / 1e6
            sumL += Double(sample.lagUs)
        }
        let meanT = sumT / n, meanL = sumL / n
        var covariance = 0.0, variance = 0.0
        for sample in samples {
            let dt = Double(sample.tsUs - origin) / 1e6 - meanT
            covariance += dt * (Double(sample.lagUs) - meanL)
            variance += dt * dt
        }
        let slope = variance > 0 ? covariance / variance : 0
        let quarter = max(1, samples.count / 4)
        func mean(_ slice: ArraySlice<(tsUs: Int64, lagUs: Int64)>) -> Double {
            slice.reduce(0.0) { $0 + Double($1.lagUs) } / Double(slice.count)
        }
        return LagTrend(
            slopeUsPerS: slope, firstQuarterMeanUs: mean(samples[..<quarter]),
            lastQuarterMeanUs: mean(samples[(samples.count - quarter)...]), sampleCount: samples.count)
    }

    /// Most intervals open at once; each is half-open [start, end), so one ending when another starts is not overlap.
    static func maxOverlap(_ intervals: [(startUs: Int64, endUs: Int64)]) -> Int64 {
        let starts = intervals.map(\.startUs).sorted()
        let ends = intervals.map { max($0.endUs, $0.startUs) }.sorted()
        var open: Int64 = 0, most: Int64 = 0, endIndex = 0
        for start in starts {
            while endIndex < ends.count, ends[endIndex] <= start {
                endIndex += 1
                open -= 1
            }
            open += 1
            most = max(most, open)
        }
        return most
    }
}
