//! The CPU reference: the same product accumulated in `f64`, the yardstick for the
//! kernels' correctness.
use crate::element::Scalar;
use crate::error::{Error, Result};
use crate::matrix::Matrix;

/// Checks that `A (m x k) * B (k x n)` is defined; returns `(m, n, k)`.
pub fn check_product_shape<T: Copy, U: Copy>(
    a: &Matrix<T>,
    b: &Matrix<U>,
) -> Result<(usize, usize, usize)> {
    if a.cols() != b.rows() {
        return Err(Error::InnerDimensionMismatch {
            a_rows: a.rows(),
            a_cols: a.cols(),
            b_rows: b.rows(),
            b_cols: b.cols(),
        });
    }
    Ok((a.rows(), b.cols(), a.cols()))
}

/// `A * B` with every product and sum in `f64` (exact products for f32/f16/bf16 inputs).
pub fn matmul_reference<T: Scalar>(a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<f64>> {
    product(a, b, |x| x.to_f64())
}

/// `|A| * |B|` in `f64`: the scale of each element's rounding error bound
/// (`|fl(a.b) - a.b| <= gamma_k * (|a|.|b|)`).
pub fn abs_product<T: Scalar>(a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<f64>> {
    product(a, b, |x| x.to_f64().abs())
}

fn product<T: Scalar>(a: &Matrix<T>, b: &Matrix<T>, f: impl Fn(T) -> f64) -> Result<Matrix<f64>> {
    let (m, n, k) = check_product_shape(a, b)?;
    let mut c = Matrix::<f64>::zeros(m, n)?.into_vec();
    let (a, b) = (a.as_slice(), b.as_slice());
    // i-k-j order: the inner loop walks rows of B and C contiguously.
    for i in 0..m {
        let c_row = &mut c[i * n..(i + 1) * n];
        for p in 0..k {
            let x = f(a[i * k + p]);
            for (c_ij, &b_pj) in c_row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *c_ij += x * f(b_pj);
            }
        }
    }
    Matrix::from_vec(m, n, c)
}

/// `max |x - y| / max |y|` over two equally long slices: an error relative to the scale of
/// `y` (the plain maximum difference if `y` is all zeros). NaN in `x` gives infinity.
pub fn max_relative_error<T: Scalar, U: Scalar>(x: &[T], y: &[U]) -> f64 {
    let scale = y.iter().fold(0.0f64, |s, v| s.max(v.to_f64().abs()));
    let worst = x.iter().zip(y).fold(0.0f64, |w, (a, b)| {
        let d = (a.to_f64() - b.to_f64()).abs();
        if d.is_nan() { f64::INFINITY } else { w.max(d) }
    });
    if scale > 0.0 { worst / scale } else { worst }
}
