//! The CPU reference: the same product accumulated in `f64`, the yardstick for the
//! kernels' correctness.
use crate::element::{Element, Scalar};
use crate::error::{Error, Result};
use crate::matrix::Matrix;

/// Checks that `A (m x k) * B (k x n)` is defined; returns `(m, n, k)`.
pub fn check_product_shape<T: Copy, U: Copy>(
    a: &Matrix<T>,
    b: &Matrix<U>,
) -> Result<(usize, usize, usize)> {
    product_dims(a.shape(), b.shape())
}

/// `(m, n, k)` of the product of an `a_rows x a_cols` and a `b_rows x b_cols` matrix, or
/// [`Error::InnerDimensionMismatch`]: the one shape check of host and device products.
pub fn product_dims(
    (a_rows, a_cols): (usize, usize),
    (b_rows, b_cols): (usize, usize),
) -> Result<(usize, usize, usize)> {
    if a_cols != b_rows {
        return Err(Error::InnerDimensionMismatch {
            a_rows,
            a_cols,
            b_rows,
            b_cols,
        });
    }
    Ok((a_rows, b_cols, a_cols))
}

/// Checks that an output of shape `(rows, cols)` holds an `m x n` product.
pub fn check_output_shape((rows, cols): (usize, usize), m: usize, n: usize) -> Result<()> {
    if (rows, cols) != (m, n) {
        return Err(Error::OutputShapeMismatch {
            rows,
            cols,
            expected_rows: m,
            expected_cols: n,
        });
    }
    Ok(())
}

/// The relative error ([`max_relative_error`]) the binaries accept between a kernel and
/// cuBLAS or the reference: errors of the size of accumulation over K terms in the
/// kernel's precision pass; a wrong index does not.
pub fn agreement_limit<T: Element>(k: usize) -> f64 {
    64.0 * T::ACC_UNIT_ROUNDOFF * (k as f64).sqrt().max(1.0)
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
