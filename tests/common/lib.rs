//! Shared test support: the GPU gate, random matrices and the tolerance check.
use libtest_mimic::{Completion, Failed, Trial};
use rand::{Rng, SeedableRng, rngs::StdRng};
use rgemm::{Context, Element, Matrix, Scalar};
use std::sync::{Arc, OnceLock};

/// `REQUIRE_GPU=1` turns "no GPU" from a skip into a failure.
pub fn gpu_required() -> bool {
    std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// The one context the GPU tests share, or why there is none.
pub fn gpu() -> Result<Arc<Context>, String> {
    static GPU: OnceLock<Result<Arc<Context>, String>> = OnceLock::new();
    GPU.get_or_init(|| Context::new(0).map(Arc::new).map_err(|e| e.to_string()))
        .clone()
}

/// A test that needs the GPU: run on it; without one, ignored with the reason, or failed
/// under `REQUIRE_GPU=1`.
pub fn gpu_trial(
    name: impl Into<String>,
    test: impl FnOnce(&Context) -> Result<(), String> + Send + 'static,
) -> Trial {
    Trial::ignorable_test(name, move || match gpu() {
        Ok(ctx) => test(&ctx)
            .map(|()| Completion::Completed)
            .map_err(Failed::from),
        Err(reason) if gpu_required() => Err(format!("REQUIRE_GPU=1 but no GPU: {reason}").into()),
        Err(reason) => Ok(Completion::ignored_with(format!("no GPU: {reason}"))),
    })
}

/// A `rows x cols` matrix of values uniform in [-1, 1), rounded to `T`, from `seed`.
pub fn random_matrix<T: Scalar>(rows: usize, cols: usize, seed: u64) -> Matrix<T> {
    let mut rng = StdRng::seed_from_u64(seed);
    Matrix::from_fn(rows, cols, |_, _| T::from_f64(rng.random_range(-1.0..1.0))).unwrap()
}

/// Checks `c` against the f64 CPU reference of `a * b`, element by element.
///
/// Tolerance: the kernels accumulate with one fused multiply-add per term, K roundings in
/// the accumulator's precision (unit roundoff u), and the inputs widen exactly, so the
/// classic bound for a dot product holds: `|c - exact| <= gamma_K(u) * (|a|.|b|)` with
/// `gamma_K(u) = K u / (1 - K u)`. The f64 reference obeys the same bound with
/// `u = 2^-53`, so `|c - ref| <= (gamma_K(u) + gamma_K(2^-53)) * (|a|.|b|)`: for f64
/// kernels the reference's own rounding is half the budget. We allow 1.01 times that, plus
/// 1e-30 for underflow; an element whose bound is zero (an all-zero row or column, or
/// K = 0) must be exact. NaN never passes.
pub fn check_product<T: Element>(
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &Matrix<T::Out>,
) -> Result<(), String> {
    let reference = rgemm::matmul_reference(a, b).map_err(|e| e.to_string())?;
    let scale = rgemm::abs_product(a, b).map_err(|e| e.to_string())?;
    if c.shape() != reference.shape() {
        return Err(format!(
            "shape {:?}, expected {:?}",
            c.shape(),
            reference.shape()
        ));
    }
    let k = a.cols() as f64;
    let gamma_k = |u: f64| k * u / (1.0 - k * u);
    let gamma = 1.01 * (gamma_k(T::ACC_UNIT_ROUNDOFF) + gamma_k(f64::EPSILON / 2.0));
    let n = c.cols().max(1);
    for (i, ((got, want), s)) in c
        .as_slice()
        .iter()
        .zip(reference.as_slice())
        .zip(scale.as_slice())
        .enumerate()
    {
        let got = got.to_f64();
        let bound = if *s == 0.0 { 0.0 } else { gamma * s + 1e-30 };
        let err = (got - want).abs();
        if err.is_nan() || err > bound {
            return Err(format!(
                "C[{}][{}] = {got:e}, reference {want:e}, |error| {err:e} > bound {bound:e} ({}x{}x{})",
                i / n,
                i % n,
                a.rows(),
                b.cols(),
                a.cols()
            ));
        }
    }
    Ok(())
}

/// Turns any `Display` error into a test failure message.
pub fn fail(e: impl std::fmt::Display) -> String {
    e.to_string()
}
