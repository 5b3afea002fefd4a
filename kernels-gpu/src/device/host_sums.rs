//! The host's tensor-core sums: each accumulator of a thread's fragment plus its row of A
//! times its column of B, one fused multiply-add per K step, in K order.
//!
//! The emulations of `mma.sync` and `wgmma` read each element of A and B a thread needs
//! once, widened to f32, and hand them here. `f32::mul_add` is a call into the maths
//! library on an x86-64 build without the FMA feature; where the CPU has it, the loops are
//! compiled with it and each step is one instruction. Both give the IEEE fused result, so
//! the sums are the same bit for bit.

/// An element the sums take: f32, or f64 (DMMA).
pub trait Fused: Copy {
    /// `self * b + c`, rounded once.
    fn fused(self, b: Self, c: Self) -> Self;
}

impl Fused for f32 {
    #[inline(always)]
    fn fused(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
}

impl Fused for f64 {
    #[inline(always)]
    fn fused(self, b: f64, c: f64) -> f64 {
        self.mul_add(b, c)
    }
}

/// `acc[r] = fma(rows[h][k], cols[c][k], acc[r])` for `k` in `0..K`, in that order, where
/// accumulator `r` is row `h = (r / 2) % 2` and column `c = 2 (r / 4) + r % 2` of the
/// thread's fragment: the layout of `mma.sync` m16n8's C (rows `g`, `g + 8`; columns `2t`,
/// `2t + 1`) and of `wgmma`'s D, 8 columns apart per four accumulators.
///
/// # Panics
/// If `cols` holds fewer than `acc.len() / 2` columns (rounded up).
pub fn fused_sums<T: Fused, const K: usize>(acc: &mut [T], rows: &[[T; K]; 2], cols: &[[T; K]]) {
    assert!(
        2 * cols.len() >= acc.len(),
        "{} accumulators take {} columns, not {}",
        acc.len(),
        acc.len().div_ceil(2),
        cols.len()
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the FMA instructions the function is compiled with.
        return unsafe { sums_with_fma(acc, rows, cols) };
    }
    sums(acc, rows, cols)
}

#[inline(always)]
fn sums<T: Fused, const K: usize>(acc: &mut [T], rows: &[[T; K]; 2], cols: &[[T; K]]) {
    for (r, d) in acc.iter_mut().enumerate() {
        let (a, b) = (&rows[(r / 2) % 2], &cols[2 * (r / 4) + r % 2]);
        for k in 0..K {
            *d = a[k].fused(b[k], *d);
        }
    }
}

/// [`sums`] compiled with FMA.
///
/// # Safety
/// The CPU has the FMA instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn sums_with_fma<T: Fused, const K: usize>(
    acc: &mut [T],
    rows: &[[T; K]; 2],
    cols: &[[T; K]],
) {
    sums(acc, rows, cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dispatched sums equal `mul_add`'s, in K order, bit for bit: on values whose
    /// products and sums round (an unfused multiply-add would differ), and through NaN and
    /// Inf.
    #[test]
    fn fused_sums_equal_mul_add_in_k_order() {
        let mut seed = 0x9e37_79b9_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            f32::from_bits(0x3f80_0000 | (seed >> 9)) * if seed & 1 == 0 { 1.0 } else { -3.0 }
        };
        let rows: [[f32; 16]; 2] = core::array::from_fn(|_| core::array::from_fn(|_| next()));
        let mut cols: Vec<[f32; 16]> = (0..8).map(|_| core::array::from_fn(|_| next())).collect();
        cols[5][3] = f32::NAN;
        cols[6][0] = f32::INFINITY;
        let start: Vec<f32> = (0..16).map(|_| next()).collect();
        let mut got = start.clone();
        fused_sums(&mut got, &rows, &cols);
        let mut unfused_differs = false;
        for (r, &c) in start.iter().enumerate() {
            let (a, b) = (&rows[(r / 2) % 2], &cols[2 * (r / 4) + r % 2]);
            let (mut fused, mut unfused) = (c, c);
            for k in 0..16 {
                fused = a[k].mul_add(b[k], fused);
                unfused += a[k] * b[k];
            }
            assert_eq!(got[r].to_bits(), fused.to_bits(), "accumulator {r}");
            unfused_differs |= unfused.to_bits() != fused.to_bits();
        }
        assert!(
            unfused_differs,
            "the values should tell fused sums from unfused ones"
        );
        assert!(got[9].is_nan() && got[12].is_infinite());
    }
}
