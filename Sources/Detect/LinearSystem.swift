/// Small dense linear systems, solved in caller-owned memory (no allocation): the 4-point homography's 8×8 system
/// and the photo-motion fit's 10×10 normal equations.
enum LinearSystem {
    /// Solves `A · X = B` in place by Gauss–Jordan elimination with partial pivoting. `a` holds the augmented
    /// matrix [A | B] row-major: `unknowns` rows of `unknowns + rightHandSides` values. On success column
    /// `unknowns + k` holds the solution for right-hand side k (A becomes the identity); false when A is singular
    /// (a pivot under 1e-12), and `a` is then left part-eliminated.
    static func solve(_ a: UnsafeMutablePointer<Double>, unknowns n: Int, rightHandSides m: Int = 1) -> Bool {
        let stride = n + m
        for col in 0..<n {
            var pivot = col
            for r in (col + 1)..<n where abs(a[r * stride + col]) > abs(a[pivot * stride + col]) { pivot = r }
            guard abs(a[pivot * stride + col]) > 1e-12 else { return false }
            if pivot != col {
                for c in 0..<stride { swap(&a[pivot * stride + c], &a[col * stride + c]) }
            }
            let d = a[col * stride + col]
            for c in col..<stride { a[col * stride + c] /= d }
            for r in 0..<n where r != col {
                let f = a[r * stride + col]
                if f != 0 { for c in col..<stride { a[r * stride + c] -= f * a[col * stride + c] } }
            }
        }
        return true
    }
}
