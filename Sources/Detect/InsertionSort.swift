/// Sorts `buffer` in place by `areInIncreasingOrder` — stable, no allocation — for the handfuls the detector and
/// tracker sort every frame (candidates, match pairs, peaks, lane widths, cell residuals), where the standard
/// library's sort may allocate.
@inline(__always)
func insertionSort<T>(_ buffer: UnsafeMutableBufferPointer<T>, by areInIncreasingOrder: (T, T) -> Bool) {
    guard buffer.count > 1 else { return }
    for i in 1..<buffer.count {
        let item = buffer[i]
        var j = i - 1
        while j >= 0 && areInIncreasingOrder(item, buffer[j]) {
            buffer[j + 1] = buffer[j]
            j -= 1
        }
        buffer[j + 1] = item
    }
}
