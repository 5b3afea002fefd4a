//! Shared test support: the GPU gate, random matrices and the tolerance check.
use libtest_mimic::{Completion, Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use rgemm::{Context, CpuExecutor, Element, Kernel, Matrix, Output, Precision, Scalar};
use std::sync::{Arc, OnceLock};

/// Where a product runs: the GPU, or the same kernels on the CPU executor.
#[derive(Clone, Debug)]
pub enum Backend {
    Gpu(Arc<Context>),
    Cpu(CpuExecutor),
}

impl Backend {
    /// The device the kernels' launches are planned for.
    pub fn props(&self) -> rgemm::DeviceProps {
        match self {
            Backend::Gpu(ctx) => ctx.props().clone(),
            Backend::Cpu(cpu) => cpu.props(),
        }
    }

    pub fn matmul<T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
    ) -> rgemm::Result<Matrix<T::Out>> {
        match self {
            Backend::Gpu(ctx) => ctx.matmul(a, b),
            Backend::Cpu(cpu) => cpu.matmul(a, b),
        }
    }

    pub fn matmul_with<T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        kernel: Kernel,
    ) -> rgemm::Result<Matrix<T::Out>> {
        match self {
            Backend::Gpu(ctx) => ctx.matmul_with(a, b, kernel),
            Backend::Cpu(cpu) => cpu.matmul_with(a, b, kernel),
        }
    }

    /// `A * B` with C of type `O`, the backend's own choice of kernel (the CPU's: `tiled16`).
    pub fn matmul_as<O: Output<T>, T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
    ) -> rgemm::Result<Matrix<O>> {
        match self {
            Backend::Gpu(ctx) => ctx.matmul_as(a, b),
            Backend::Cpu(cpu) => cpu.matmul_as(a, b),
        }
    }

    /// `C = A * B` into an existing C (of either output type), which may hold anything
    /// (poison, to see that every element is written): on the GPU through device buffers,
    /// on the CPU in place.
    pub fn matmul_into<T: Element, O: Output<T>>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        c: &mut Matrix<O>,
        kernel: Kernel,
    ) -> rgemm::Result<()> {
        match self {
            Backend::Gpu(ctx) => {
                let (da, db) = (ctx.upload(a)?, ctx.upload(b)?);
                let mut dc = ctx.upload(c)?;
                ctx.matmul_device(&da, &db, &mut dc, Some(kernel))?;
                *c = ctx.download(&dc)?;
                Ok(())
            }
            Backend::Cpu(cpu) => cpu.matmul_into(a, b, c, kernel),
        }
    }
}

/// `$of::<T, O>(args)` for every pairing of input and C types that the forms and lists
/// cover (f32, f64, bf16 with C in f32 and in bf16, f16 with C in f16), joined.
macro_rules! each_pairing {
    ($of:ident($($arg:expr),*)) => {{
        let mut all = $of::<f32, f32>($($arg),*);
        all.extend($of::<f64, f64>($($arg),*));
        all.extend($of::<rgemm::bf16, f32>($($arg),*));
        all.extend($of::<rgemm::bf16, rgemm::bf16>($($arg),*));
        all.extend($of::<rgemm::f16, rgemm::f16>($($arg),*));
        all
    }};
}

pub mod forms;
pub mod lists;

impl Backend {
    /// `C = alpha op(A) op(B) + beta C` over views of the buffers `a`, `b` and `c` (laid out
    /// as their layouts say) and a batch; returns C's whole buffer. `kernel: None` is the
    /// GPU's own choice (the CPU executor needs a kernel).
    #[allow(clippy::too_many_arguments)]
    pub fn gemm<T: Element, O: Output<T>>(
        &self,
        kernel: Option<Kernel>,
        (alpha, beta): (f64, f64),
        (a, la): (&[T], rgemm::MatrixLayout),
        (b, lb): (&[T], rgemm::MatrixLayout),
        (c, lc): (&[O], rgemm::MatrixLayout),
        batch: rgemm::Batch,
    ) -> rgemm::Result<Vec<O>> {
        match self {
            Backend::Gpu(ctx) => {
                let up = |x: &[T]| ctx.upload(&Matrix::from_vec(1, x.len(), x.to_vec())?);
                let (da, db) = (up(a)?, up(b)?);
                let mut dc = ctx.upload(&Matrix::from_vec(1, c.len(), c.to_vec())?)?;
                let mut call = ctx
                    .gemm(da.view_as(la)?, db.view_as(lb)?, dc.view_mut_as(lc)?)
                    .alpha(<T::Out as Scalar>::from_f64(alpha))
                    .beta(<T::Out as Scalar>::from_f64(beta))
                    .batch(batch);
                if let Some(kernel) = kernel {
                    call = call.kernel(kernel).precision(kernel.spec().precision);
                }
                call.run()?;
                Ok(ctx.download(&dc)?.into_vec())
            }
            Backend::Cpu(cpu) => {
                let kernel = kernel.unwrap_or(Kernel::Tiled16);
                let mut out = c.to_vec();
                let (va, vb) = (
                    rgemm::MatrixView::new(a, la)?,
                    rgemm::MatrixView::new(b, lb)?,
                );
                let mut vc = rgemm::MatrixViewMut::new(&mut out, lc)?;
                cpu.gemm(kernel, (alpha, beta), (&va, &vb), &mut vc, batch)?;
                Ok(out)
            }
        }
    }
}

/// A list of operands for [`Backend::gemm_batched`]: buffers, and per product the buffer
/// its view is of and the view.
pub type Operands<'a, X> = (&'a [Vec<X>], &'a [(usize, rgemm::MatrixLayout)]);

impl Backend {
    /// A batch of independent products over lists of views (`Context::gemm_batched`, or
    /// `CpuExecutor::gemm_batched`); C's buffers are one per product, in order. Returns C's
    /// buffers. `kernel: None` is the GPU's own choice (the CPU executor needs a kernel).
    pub fn gemm_batched<T: Element, O: Output<T>>(
        &self,
        kernel: Option<Kernel>,
        (alpha, beta): (f64, f64),
        (a, va): Operands<T>,
        (b, vb): Operands<T>,
        (c, vc): (&[Vec<O>], &[rgemm::MatrixLayout]),
    ) -> rgemm::Result<Vec<Vec<O>>> {
        match self {
            Backend::Gpu(ctx) => {
                let up = |x: &[T]| ctx.upload(&Matrix::from_vec(1, x.len(), x.to_vec())?);
                let da = a.iter().map(|x| up(x)).collect::<rgemm::Result<Vec<_>>>()?;
                let db = b.iter().map(|x| up(x)).collect::<rgemm::Result<Vec<_>>>()?;
                let mut dc = (c.iter())
                    .map(|x| ctx.upload(&Matrix::from_vec(1, x.len(), x.to_vec())?))
                    .collect::<rgemm::Result<Vec<_>>>()?;
                fn views<'d, T>(
                    d: &'d [rgemm::DeviceMatrix<T>],
                    v: &[(usize, rgemm::MatrixLayout)],
                ) -> rgemm::Result<Vec<rgemm::DeviceView<'d, T>>> {
                    v.iter().map(|&(i, l)| d[i].view_as(l)).collect()
                }
                let (xa, xb) = (views(&da, va)?, views(&db, vb)?);
                let xc = (dc.iter_mut().zip(vc))
                    .map(|(d, &l)| d.view_mut_as(l))
                    .collect::<rgemm::Result<Vec<_>>>()?;
                let mut call = ctx
                    .gemm_batched(xa, xb, xc)
                    .alpha(<T::Out as Scalar>::from_f64(alpha))
                    .beta(<T::Out as Scalar>::from_f64(beta));
                if let Some(kernel) = kernel {
                    call = call.kernel(kernel).precision(kernel.spec().precision);
                }
                call.run()?;
                dc.iter().map(|d| Ok(ctx.download(d)?.into_vec())).collect()
            }
            Backend::Cpu(cpu) => {
                let kernel = kernel.unwrap_or(Kernel::Tiled16);
                let mut out: Vec<Vec<O>> = c.to_vec();
                fn views<'d, T: Copy>(
                    d: &'d [Vec<T>],
                    v: &[(usize, rgemm::MatrixLayout)],
                ) -> rgemm::Result<Vec<rgemm::MatrixView<'d, T>>> {
                    v.iter()
                        .map(|&(i, l)| rgemm::MatrixView::new(&d[i], l))
                        .collect()
                }
                let (xa, xb) = (views(a, va)?, views(b, vb)?);
                let mut xc = (out.iter_mut().zip(vc))
                    .map(|(d, &l)| rgemm::MatrixViewMut::new(d, l))
                    .collect::<rgemm::Result<Vec<_>>>()?;
                cpu.gemm_batched(kernel, (alpha, beta), (&xa, &xb), &mut xc)?;
                drop(xc);
                Ok(out)
            }
        }
    }
}

/// `$each::<T>(args)` for T = f32, f64, f16 and bf16 in turn, up to the first error.
#[macro_export]
macro_rules! each_element {
    ($each:ident($($arg:expr),*)) => {
        $each::<f32>($($arg),*)
            .and_then(|()| $each::<f64>($($arg),*))
            .and_then(|()| $each::<rgemm::f16>($($arg),*))
            .and_then(|()| $each::<rgemm::bf16>($($arg),*))
    };
}

/// One property trial per (kernel or choice, element type) that exists: `$one::<T>(under)`
/// for every `under` in [`Under::all_for::<T>`], for f32, f64, f16 and bf16.
#[macro_export]
macro_rules! property_trials {
    ($one:ident) => {{
        let mut trials = Vec::new();
        trials.extend($crate::Under::all_for::<f32>().into_iter().map($one::<f32>));
        trials.extend($crate::Under::all_for::<f64>().into_iter().map($one::<f64>));
        trials.extend(
            $crate::Under::all_for::<rgemm::f16>()
                .into_iter()
                .map($one::<rgemm::f16>),
        );
        trials.extend(
            $crate::Under::all_for::<rgemm::bf16>()
                .into_iter()
                .map($one::<rgemm::bf16>),
        );
        trials
    }};
}

/// One property trial per (kernel or choice, 16-bit type) with C in the input type:
/// `$one::<T, T>(under)` for f16 and bf16.
#[macro_export]
macro_rules! narrow_property_trials {
    ($one:ident) => {{
        let mut trials = Vec::new();
        trials.extend(
            $crate::Under::all_for::<rgemm::f16>()
                .into_iter()
                .map($one::<rgemm::f16, rgemm::f16>),
        );
        trials.extend(
            $crate::Under::all_for::<rgemm::bf16>()
                .into_iter()
                .map($one::<rgemm::bf16, rgemm::bf16>),
        );
        trials
    }};
}

/// Every kernel, and the sized one at `width`.
pub fn every_kernel(width: u32) -> impl Iterator<Item = Kernel> {
    Kernel::FIXED
        .into_iter()
        .chain([Kernel::TiledDynamic(width)])
}

/// The stream-K kernels (a grid of one wave, and a fix-up launch for the split tiles).
pub fn stream_k_kernels() -> impl Iterator<Item = Kernel> {
    Kernel::FIXED.into_iter().filter(is_stream_k)
}

fn is_stream_k(k: &Kernel) -> bool {
    matches!(
        k.spec().grid,
        rgemm_kernels::catalogue::Grid::StreamK { .. }
    )
}

/// The kernels whose grid is planned as one wave from their launch rule's blocks per SM
/// (stream-K's, `few_columns`' slices of K) that have entry points for `T`.
pub fn one_wave_kernels<T: Element>() -> impl Iterator<Item = Kernel> {
    let slices = |k: &Kernel| k.spec().grid == rgemm_kernels::catalogue::Grid::SplitKStrips;
    Kernel::FIXED
        .into_iter()
        .filter(move |k| k.supports::<T>() && (is_stream_k(k) || slices(k)))
}

/// Every kernel with entry points for `T`, and the sized one at `width`.
pub fn kernels_for<T: Element>(width: u32) -> impl Iterator<Item = Kernel> {
    every_kernel(width).filter(|k| k.supports::<T>())
}

/// Which kernel a property test drives; `Auto` is the backend's own choice and `Dynamic`
/// draws its tile width (1..=32) per case.
#[derive(Clone, Copy, Debug)]
pub enum Under {
    Fixed(Kernel),
    Dynamic,
    Auto,
}

impl From<Option<Kernel>> for Under {
    /// `kernel`, or (`None`) the backend's own choice.
    fn from(kernel: Option<Kernel>) -> Self {
        kernel.map_or(Under::Auto, Under::Fixed)
    }
}

impl Under {
    /// Every kernel that has entry points for `T`, and the automatic choice.
    pub fn all_for<T: Element>() -> Vec<Under> {
        Self::all()
            .into_iter()
            .filter(|u| !matches!(u, Under::Fixed(k) if !k.supports::<T>()))
            .collect()
    }

    /// Whether results may come from the tensor cores (the kernel's, or the automatic
    /// choice for 16-bit inputs and for f64, which DMMA may take), whose additions round
    /// differently ([`check_product_with`]).
    pub fn tensor_cores<T: Element>(&self) -> bool {
        match self {
            Under::Fixed(k) => k.spec().tensor_cores,
            Under::Dynamic => false,
            Under::Auto => !matches!(T::ELEM, rgemm::Elem::F32),
        }
    }

    /// How its results are computed, for their tolerance.
    pub fn arith<T: Element>(&self) -> Arith {
        match self {
            Under::Fixed(k) => Arith::from(*k),
            _ => Arith::from(self.tensor_cores::<T>()),
        }
    }

    /// Every kernel, and the automatic choice.
    pub fn all() -> Vec<Under> {
        let mut all: Vec<Under> = Kernel::FIXED.into_iter().map(Under::Fixed).collect();
        all.extend([Under::Dynamic, Under::Auto]);
        all
    }

    pub fn name(&self) -> String {
        match self {
            Under::Fixed(k) => k.to_string(),
            Under::Dynamic => "tiled_dyn".into(),
            Under::Auto => "auto".into(),
        }
    }
}

/// Side lengths from 1 to `max`, biased toward the cases that break tiling: primes, tile
/// multiples and one either side, and very thin (1..=3).
pub fn side(max: usize) -> impl Strategy<Value = usize> {
    let primes: Vec<usize> = [2, 3, 5, 7, 13, 31, 61, 97, 127, 211, 257, 293]
        .into_iter()
        .filter(|p| *p <= max)
        .collect();
    let tiles: Vec<usize> = [8, 16, 32, 64, 96, 128, 256]
        .into_iter()
        .filter(|t| *t < max)
        .collect();
    let near_tiles =
        (prop::sample::select(tiles), -1i64..=1).prop_map(|(t, d)| (t as i64 + d) as usize);
    prop_oneof![
        3 => 1usize..=max,
        2 => prop::sample::select(primes),
        3 => near_tiles,
        2 => 1usize..=3,
    ]
}

/// `cases` random products (shapes from [`side`]`(max_side)`, values in [-1, 1)) on
/// `backend` with `under`, each checked by [`check_product`].
pub fn property<T: Element>(
    backend: &Backend,
    under: Under,
    cases: u32,
    max_side: usize,
) -> Result<(), String> {
    property_as::<T, T::Out>(backend, under, cases, max_side)
}

/// [`property`] with C of type `O`, which starts as NaN (every element must be written).
pub fn property_as<T: Element, O: Output<T>>(
    backend: &Backend,
    under: Under,
    cases: u32,
    max_side: usize,
) -> Result<(), String> {
    let strategy = (
        side(max_side),
        side(max_side),
        side(max_side),
        any::<u64>(),
        1u32..=32,
    );
    run_cases(cases, &strategy, |(m, n, k, seed, tile)| {
        // Half the tensor-core cases with K and N multiples of 8, the shapes their
        // pipelines (cp.async chunks, TMA) take; the others take their fallback paths.
        let (n, k) = match under.tensor_cores::<T>() && seed % 2 == 0 {
            true => (n.next_multiple_of(8), k.next_multiple_of(8)),
            false => (n, k),
        };
        let a = random_matrix::<T>(m, k, seed);
        let b = random_matrix::<T>(k, n, seed ^ 0x9e37_79b9);
        let mut c = Matrix::from_vec(m, n, vec![O::from_f64(f64::NAN); m * n]).unwrap();
        match under {
            Under::Fixed(kernel) => backend.matmul_into(&a, &b, &mut c, kernel),
            Under::Dynamic => backend.matmul_into(&a, &b, &mut c, Kernel::TiledDynamic(tile)),
            Under::Auto => backend.matmul_as(&a, &b).map(|auto| c = auto),
        }
        .map_err(fail)?;
        check_product_with(&a, &b, &c, under.arith::<T>())
    })
}

/// Runs `test` on `cases` random values of `strategy` (no failures kept between runs).
pub fn run_cases<S: Strategy>(
    cases: u32,
    strategy: &S,
    test: impl Fn(S::Value) -> Result<(), String>,
) -> Result<(), String> {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(strategy, |value| test(value).map_err(TestCaseError::fail))
        .map_err(|e| e.to_string())
}

/// `PROPTEST_CASES` from the environment, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

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
    test: impl FnOnce(&Arc<Context>) -> Result<(), String> + Send + 'static,
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
    Matrix::random(rows, cols, seed).unwrap()
}

/// Random operands of an `m x n x k` product: A (`m x k`) from `seed`, B (`k x n`) from
/// `seed + 1`.
pub fn random_operands<T: Scalar>(
    (m, n, k): (usize, usize, usize),
    seed: u64,
) -> (Matrix<T>, Matrix<T>) {
    (random_matrix(m, k, seed), random_matrix(k, n, seed + 1))
}

/// [`random_operands`] of each of `shapes`, seeds two apart from `seed` on: the shape, A, B.
pub fn random_products<T: Scalar>(
    shapes: impl IntoIterator<Item = (usize, usize, usize)>,
    seed: u64,
) -> impl Iterator<Item = ((usize, usize, usize), Matrix<T>, Matrix<T>)> {
    (shapes.into_iter().enumerate()).map(move |(i, mnk)| {
        let (a, b) = random_operands(mnk, seed + 2 * i as u64);
        (mnk, a, b)
    })
}

/// Operands of an `m x n x k` product in small integers (-4 to 4), whose products and sums
/// every type holds exactly: any kernel must reproduce the f64 reference.
pub fn integer_operands<T: Element>((m, n, k): (usize, usize, usize)) -> (Matrix<T>, Matrix<T>) {
    let a = Matrix::from_fn(m, k, |r, c| T::from_f64(((r * 7 + c * 3) % 9) as f64 - 4.0));
    let b = Matrix::from_fn(k, n, |r, c| T::from_f64(((r * 5 + c) % 7) as f64 - 3.0));
    (a.unwrap(), b.unwrap())
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
    check_product_with(a, b, c, false)
}

/// How a product was computed, for its tolerance: on the tensor cores or not, in which
/// [`Precision`] (a kernel says both; a bool says "tensor cores", in FP32 arithmetic).
#[derive(Clone, Copy, Debug)]
pub struct Arith {
    pub tensor_cores: bool,
    pub precision: Precision,
}

impl From<bool> for Arith {
    fn from(tensor_cores: bool) -> Self {
        Arith {
            tensor_cores,
            precision: Precision::Exact,
        }
    }
}

impl From<Kernel> for Arith {
    fn from(kernel: Kernel) -> Self {
        Arith {
            tensor_cores: kernel.spec().tensor_cores,
            precision: kernel.spec().precision,
        }
    }
}

/// [`check_product`], for a product that may come from the tensor cores (`tensor_cores`):
/// their f32 additions are not IEEE round-to-nearest (published measurements of Volta to
/// Hopper report truncation, an error of up to 2u per addition instead of u), so the bound
/// uses twice the accumulator's unit roundoff. Products of 16-bit inputs are exact in f32 on
/// both, so nothing else changes.
///
/// A C in a 16-bit type (`O`) is the f32 sum rounded once more: `O::ROUNDING`'s
/// `u |x| + eta` on top, of the reference plus the sum's own bound; the reference rounded
/// to `O` (an Inf past the type's range) always passes.
///
/// A TF32 precision adds its [`Precision::product_error`] per product (`|a| |b|` times it)
/// and, for 3xTF32, three additions per term of K.
pub fn check_product_with<T: Element, O: Output<T>>(
    a: &Matrix<T>,
    b: &Matrix<T>,
    c: &Matrix<O>,
    arith: impl Into<Arith>,
) -> Result<(), String> {
    let Arith {
        tensor_cores,
        precision,
    } = arith.into();
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
    let gamma_k = |k: f64, u: f64| k * u / (1.0 - k * u);
    let u = T::ACC_UNIT_ROUNDOFF * if tensor_cores { 2.0 } else { 1.0 };
    let additions = k * precision.additions() as f64;
    let gamma =
        1.01 * (gamma_k(additions, u) + gamma_k(k, f64::EPSILON / 2.0) + precision.product_error());
    let n = c.cols().max(1);
    for (i, ((got, want), s)) in c
        .as_slice()
        .iter()
        .zip(reference.as_slice())
        .zip(scale.as_slice())
        .enumerate()
    {
        let got = got.to_f64();
        let sum_bound = if *s == 0.0 { 0.0 } else { gamma * s + 1e-30 };
        let (u, eta) = O::ROUNDING;
        let bound = sum_bound + u * (want.abs() + sum_bound) + eta;
        // The reference rounded to C's type is always right (and is how an Inf passes).
        let err = match got == O::from_f64(*want).to_f64() {
            true => 0.0,
            false => (got - want).abs(),
        };
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

/// A split-K product run twice with `kernel` (C of type `O`, from zeros): the first checked
/// against the reference, the second identical to it (whichever block finished last, and
/// with the counters the first left behind).
fn same_twice<T: Element, O: Output<T>>(
    be: &Backend,
    (a, b): (&Matrix<T>, &Matrix<T>),
    kernel: Kernel,
) -> Result<(), String> {
    let (m, n, k) = (a.rows(), b.cols(), a.cols());
    let run = || -> Result<Matrix<O>, String> {
        let mut c = Matrix::<O>::zeros(m, n).map_err(fail)?;
        be.matmul_into(a, b, &mut c, kernel).map_err(fail)?;
        Ok(c)
    };
    let first = run()?;
    check_product_with(a, b, &first, kernel).map_err(|e| format!("{kernel} {m}x{n}x{k}: {e}"))?;
    if run()? != first {
        return Err(format!("{kernel} {m}x{n}x{k}: a second run differs"));
    }
    Ok(())
}

/// The split-strip kernels' products: `shapes` with B as stored twice on `as_stored` and
/// `both_ways` ([`same_twice_on`]), then once each with B stored `n x k` on `both_ways`.
fn strips_twice<T: Element>(
    be: &Backend,
    shapes: impl IntoIterator<Item = (usize, usize, usize)> + Clone,
    as_stored: &[Kernel],
    both_ways: &[Kernel],
) -> Result<(), String> {
    let all: Vec<Kernel> = as_stored.iter().chain(both_ways).copied().collect();
    same_twice_on::<T, T::Out>(be, &all, shapes.clone())?;
    for &kernel in both_ways {
        for (seed, mnk) in shapes.clone().into_iter().enumerate() {
            let case = forms::Case::b_transposed(mnk, seed as u64);
            forms::one::<T, T::Out>(be, Some(kernel), &case)
                .map_err(|e| format!("{kernel:?}, B stored n x k, {mnk:?}: {e}"))?;
        }
    }
    Ok(())
}

/// [`same_twice`] with each of `kernels` on random operands of each of `shapes`.
fn same_twice_on<T: Element, O: Output<T>>(
    be: &Backend,
    kernels: &[Kernel],
    shapes: impl IntoIterator<Item = (usize, usize, usize)>,
) -> Result<(), String> {
    for (_, a, b) in random_products::<T>(shapes, 1) {
        for &kernel in kernels {
            same_twice::<T, O>(be, (&a, &b), kernel)?;
        }
    }
    Ok(())
}

/// `a b` by each of `kernels` into a C of type `O` that starts as NaN: every element must be
/// replaced by the product's.
fn nan_c_is_overwritten<T: Element, O: Output<T>>(
    be: &Backend,
    (a, b): (&Matrix<T>, &Matrix<T>),
    kernels: impl IntoIterator<Item = Kernel>,
) -> Result<(), String> {
    let (m, n) = (a.rows(), b.cols());
    for kernel in kernels {
        let mut c = Matrix::from_vec(m, n, vec![O::from_f64(f64::NAN); m * n]).map_err(fail)?;
        be.matmul_into(a, b, &mut c, kernel).map_err(fail)?;
        check_product_with(a, b, &c, kernel).map_err(|e| format!("{kernel}: {e}"))?;
    }
    Ok(())
}

/// `kernel`'s plan must cut the last wave of at least one of `shapes` into two or more slices
/// of K, where the backend has two or more SMs.
fn splits_somewhere<T: Element>(
    be: &Backend,
    kernel: Kernel,
    shapes: &[(usize, usize, usize)],
) -> Result<(), String> {
    let props = be.props();
    let slices = shapes.iter().map(|&(m, n, k)| {
        let problem = rgemm::internals::Problem::row_major(m as u32, n as u32, k as u32);
        kernel
            .launches_for::<T>(&props, problem)
            .map(|l| l.problem.ctas)
    });
    let most = slices
        .map(|s| s.map_err(fail))
        .try_fold(0, |most, s| s.map(|s| most.max(s)))?;
    if props.multiprocessors >= 2 && most < 2 {
        return Err(format!("{kernel}: no shape's tiles split: {most}"));
    }
    Ok(())
}

/// Turns any `Display` error into a test failure message.
pub fn fail(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// `kernel` on `backend` must reproduce the f64 reference exactly (small integers).
pub fn exact<T: Element>(
    backend: &Backend,
    a: &Matrix<T>,
    b: &Matrix<T>,
    kernel: Kernel,
) -> Result<(), String> {
    let c = backend.matmul_with(a, b, kernel).map_err(fail)?;
    let want = rgemm::matmul_reference(a, b).map_err(fail)?;
    let got: Vec<f64> = c.as_slice().iter().map(|v| v.to_f64()).collect();
    if got != want.as_slice() {
        return Err(format!("{kernel}: got {got:?}, want {:?}", want.as_slice()));
    }
    Ok(())
}

/// The trials every backend runs, `make` running each test on it: the fixed cases, the
/// general forms (`forms`: general and batch cases, the largest side) and lists of views
/// (`lists`: general and plain cases, the largest side), with the backend's own choice too
/// where `auto`, their bad inputs, and the forms' fixed checks.
pub fn backend_trials(
    make: forms::MakeTrial,
    forms: (u32, u32, usize),
    lists: (u32, u32, usize),
    auto: bool,
) -> Vec<Trial> {
    let checks: [Case; 5] = [
        ("forms::a_halves_below_c", forms::a_halves_below_c),
        ("forms::aligned_edges", forms::aligned_edges),
        ("forms::close_planes", forms::close_planes),
        ("forms::moved_edge_tiles", forms::moved_edge_tiles),
        ("forms::whole_tiles", forms::whole_tiles),
    ];
    let fixed = (fixed_cases().into_iter())
        .chain(forms::error_cases())
        .chain(lists::error_cases())
        .chain(checks);
    let mut trials: Vec<Trial> = fixed
        .map(|(name, case)| make(name.to_string(), Box::new(case)))
        .collect();
    trials.extend(each_pairing!(property_trials(make, forms, lists, auto)));
    trials
}

/// The forms and lists trials of one pairing of input and C types.
fn property_trials<T: Element, O: Output<T>>(
    make: forms::MakeTrial,
    forms: (u32, u32, usize),
    lists: (u32, u32, usize),
    auto: bool,
) -> Vec<Trial> {
    let mut trials = forms::trials::<T, O>(make, forms, auto);
    trials.extend(lists::trials::<T, O>(make, lists, auto));
    trials
}

/// A fixed case: a name and a check on a backend.
pub type Case = (&'static str, fn(&Backend) -> Result<(), String>);

/// The chapter's worked examples and other fixed cases, with small integers so every
/// result is exact; the same on every backend.
pub fn fixed_cases() -> Vec<Case> {
    vec![
        ("textbook::4x4_with_2x2_tiles", |be| {
            let a = Matrix::from_fn(4, 4, |r, c| (r * 4 + c) as f32).unwrap();
            let b = Matrix::from_fn(4, 4, |r, c| (r as f32) - 2.0 * c as f32).unwrap();
            exact(be, &a, &b, Kernel::TiledDynamic(2))?;
            exact(be, &a, &b, Kernel::Naive)
        }),
        ("textbook::3x3_with_tile_width_2", |be| {
            // 3 is not a multiple of 2: the second phase and the edge blocks are half empty.
            let a = Matrix::from_vec(3, 3, vec![1.0f32, 2., 3., 4., 5., 6., 7., 8., 9.]).unwrap();
            let b = Matrix::from_vec(3, 3, vec![9.0f32, 8., 7., 6., 5., 4., 3., 2., 1.]).unwrap();
            let c = be
                .matmul_with(&a, &b, Kernel::TiledDynamic(2))
                .map_err(fail)?;
            let want = [30.0f32, 24., 18., 84., 69., 54., 138., 114., 90.];
            if c.as_slice() != want {
                return Err(format!("got {:?}, want {want:?}", c.as_slice()));
            }
            Ok(())
        }),
        ("textbook::every_kernel_and_type_exact_on_integers", |be| {
            fn ints<T: Element>(be: &Backend) -> Result<(), String> {
                let (a, b) = integer_operands::<T>((37, 45, 19));
                for kernel in kernels_for::<T>(5).chain([Kernel::TiledDynamic(32)]) {
                    exact(be, &a, &b, kernel)?;
                }
                Ok(())
            }
            crate::each_element!(ints(be))
        }),
        ("shapes::persistent_blocks_walk_several_tiles", |be| {
            // More block tiles than blocks: `wgmma_persistent`'s (and the narrower tiles')
            // blocks walk several tiles,
            // its pipeline running on from one to the next (the GPU's 132 SMs get 154 tiles
            // of 128 x 256; the CPU executor's few "SMs" get 9). K and N multiples of 8
            // (TMA's path), K with a last partial phase.
            let (m, n, k) = match be {
                Backend::Gpu(_) => (1700, 2600, 136),
                Backend::Cpu(_) => (300, 520, 72),
            };
            fn walk<T: Element>(
                be: &Backend,
                (m, n, k): (usize, usize, usize),
            ) -> Result<(), String> {
                let (a, b) = random_operands::<T>((m, n, k), 7);
                for &kernel in forms::TMA_WGMMA {
                    let c = be.matmul_with(&a, &b, kernel).map_err(fail)?;
                    check_product_with(&a, &b, &c, true).map_err(|e| format!("{kernel:?}: {e}"))?;
                }
                Ok(())
            }
            walk::<rgemm::bf16>(be, (m, n, k))?;
            walk::<rgemm::f16>(be, (m, n, k))
        }),
        ("shapes::clusters_walk_squares_of_tiles", |be| {
            // The cluster kernels alone: pairs of tile rows whose last pair has one tile (9
            // rows of tiles), squares whose last row or column has one (11 columns of 192),
            // more pairs than clusters on the GPU (squares walk several in
            // `persistent_blocks_walk_several_tiles`), a K that ends mid-phase; each block's
            // half of B lands in its column's blocks and of a square its half of A in its
            // row's, so every tile checks every half.
            let shapes: &[(usize, usize, usize)] = match be {
                Backend::Gpu(_) => &[(1100, 2000, 264), (2600, 1000, 136)],
                Backend::Cpu(_) => &[(300, 400, 72)],
            };
            fn clusters<T: Element>(
                be: &Backend,
                shapes: &[(usize, usize, usize)],
            ) -> Result<(), String> {
                for &mnk in shapes {
                    let (a, b) = random_operands::<T>(mnk, 11);
                    for kernel in [
                        Kernel::WgmmaPairs,
                        Kernel::WgmmaPairs128x192,
                        Kernel::WgmmaQuads,
                        Kernel::WgmmaQuads128x192,
                    ] {
                        let c = be.matmul_with(&a, &b, kernel).map_err(fail)?;
                        check_product_with(&a, &b, &c, true)
                            .map_err(|e| format!("{kernel:?} {mnk:?}: {e}"))?;
                    }
                }
                Ok(())
            }
            clusters::<rgemm::bf16>(be, shapes)?;
            clusters::<rgemm::f16>(be, shapes)
        }),
        ("shapes::decode_splits_k_over_blocks", |be| {
            // K large enough for several slices of K (each at least 256 rows), so the partial
            // sums go through the workspace and `decode`'s fix-up launch or
            // `decode_async`'s, `decode_mma`'s, `decode_tma`'s and `decode_wgmma`'s last block; M from 1 to 16 and past it
            // (two passes; `decode_tma`'s sweeps of two and four boxes of A, one past C's rows,
            // and two sweeps), N off the 4- and 8-column loads' alignment too; C in f32 and in the input type. Twice
            // each: the result must not depend on which block finishes last, and the
            // counters must be left zero for the next product.
            fn decode<T: Element, O: Output<T>>(be: &Backend) -> Result<(), String> {
                let kernels = [
                    Kernel::Decode,
                    Kernel::DecodeAsync,
                    Kernel::DecodeMma,
                    Kernel::DecodeTma,
                    Kernel::DecodeWgmma,
                ];
                // (N = 130 and 67: no tensor maps, the host runs `decode_mma` for `decode_tma`
                // and `decode_wgmma`.)
                same_twice_on::<T, O>(
                    be,
                    &kernels,
                    [
                        (1, 384, 2048),
                        (16, 130, 1000),
                        (17, 67, 777),
                        (16, 512, 1536),
                        (5, 264, 1032),
                        (24, 384, 2048),
                        (40, 264, 1032),
                        (100, 256, 1024),
                    ],
                )
            }
            // Both input types and both C widths, each once: the split's paths do not depend
            // on which 16-bit type it is (`property::decode*` runs every pairing).
            decode::<rgemm::f16, f32>(be)?;
            decode::<rgemm::bf16, rgemm::bf16>(be)
        }),
        ("shapes::few_columns_splits_k_over_blocks", |be| {
            // `few_columns` and `few_columns_64` (and in f64 `dmma_few_columns` and
            // `dmma_few_columns_8_warps`) with several slices of K (each at least 256 steps)
            // whose last block adds them, several row strips and column strips, each thread
            // tile (up to 8, 16, 32 and 64 columns in a strip; the DMMA kernels: 2 to 8
            // tiles of 8 columns, B both as stored and stored `n x k`), and A's and B's rows
            // both in 16-byte chunks and not (K, N not multiples of 4). Twice each: the result
            // must not depend on which block finishes last, and the counters must be left
            // zero for the next product.
            let shapes = [
                (100, 20, 1500),
                (200, 7, 777),
                (37, 33, 1030),
                (300, 64, 2048),
                (129, 12, 600),
            ];
            let dmma = [Kernel::DmmaFewColumns, Kernel::DmmaFewColumns8Warps];
            let f32s = [Kernel::FewColumns, Kernel::FewColumns64];
            strips_twice::<f32>(be, shapes, &f32s, &[])?;
            // Two column strips of `few_columns_64`, the second 36 columns wide.
            strips_twice::<f32>(be, [(150, 100, 1100)], &f32s[1..], &[])?;
            strips_twice::<f64>(be, shapes, &[Kernel::FewColumns], &dmma)?;
            // Two column strips of the DMMA kernels, the second 36 columns wide.
            strips_twice::<f64>(be, [(150, 100, 1100)], &[], &dmma)
        }),
        ("shapes::few_rows_splits_k_over_blocks", |be| {
            // `few_rows` and `few_rows_64` (and in f64 `dmma_few_rows` and `dmma_few_rows_64`)
            // with several slices of K (each at least 256 steps) whose last block adds them,
            // several row strips and column strips, each thread tile (up to 8, 16, 32 and 64
            // rows in a strip;
            // `dmma_few_rows`: 1 to 4 tiles of 8 rows, `dmma_few_rows_64` 2 to 8), B both as
            // stored and stored `n x k`, and rows both in 16-byte chunks and not (K, N not
            // multiples of 4). The products as stored twice: the result must not depend on
            // which block finishes last, and the counters must be left zero for the next
            // product.
            let shapes = [
                (20, 100, 1500),
                (7, 200, 777),
                (37, 33, 1030),
                (64, 300, 2048),
                (12, 129, 600),
            ];
            strips_twice::<f32>(be, shapes, &[], &[Kernel::FewRows, Kernel::FewRows64])?;
            // Two row strips of `few_rows_64`, the second 36 rows tall.
            strips_twice::<f32>(be, [(100, 150, 1100)], &[], &[Kernel::FewRows64])?;
            let f64_kernels = [Kernel::FewRows, Kernel::DmmaFewRows, Kernel::DmmaFewRows64];
            strips_twice::<f64>(be, shapes, &[], &f64_kernels)
        }),
        ("shapes::dmma_small_split_adds_slices_of_k", |be| {
            // `dmma_small_split`: each 64 x 64 tile's blocks take slices of K and the last adds
            // them. Whole tiles in 16-byte chunks (the buffered mainloop, slices a multiple of
            // the K step), tiles past C's rows and columns (not moved inside: the checked
            // mainloop), K not a multiple of the K step (the last slice short) and rows off
            // 16-byte chunks (K, N odd); B as stored and stored `n x k`. Twice each: the
            // result must not depend on which block finishes last, and the counters must be
            // left zero for the next product. The plan must split at least one of them.
            let shapes = [
                (64, 64, 2048),
                (50, 40, 1500),
                (64, 130, 3000),
                (130, 64, 2051),
                (128, 192, 4096),
            ];
            splits_somewhere::<f64>(be, Kernel::DmmaSmallSplit, &shapes)?;
            strips_twice::<f64>(be, shapes, &[], &[Kernel::DmmaSmallSplit])
        }),
        ("shapes::split_tail_adds_slices_of_k", |be| {
            // The `wgmma` kernels with the tiles of their last wave cut into slices of K
            // (`split_tail`), the packed kernel's with the split's planes before its packed
            // operands: products of one to four tiles, which fill less than a wave
            // on a GPU or on a CPU executor of two or more SMs, K of 8 to 13 stages, rows of
            // the tile below C (warps that take no part) and columns past C. The plan must
            // split each kernel's tile at least once. Twice each: the result must not depend on
            // which slice's warp finishes last, and the counters must be left zero for the
            // next product. Then beta, B stored n x k, a 16-bit C and a batch of three
            // one-tile products. One 16-bit type: the split's paths do not depend on which
            // (the property tests run both). Then TF32's split kernel.
            fn split<T: Element + Output<T>>(be: &Backend) -> Result<(), String> {
                let kernels = [
                    Kernel::WgmmaSplit128x64,
                    Kernel::WgmmaSplit128x128,
                    Kernel::WgmmaPackedSplit,
                ];
                let shapes: [(usize, usize, usize); 3] =
                    [(100, 150, 520), (128, 60, 512), (77, 250, 700)];
                for kernel in kernels {
                    splits_somewhere::<T>(be, kernel, &shapes)?;
                }
                same_twice_on::<T, T::Out>(be, &kernels, shapes)?;
                let (plain, b_t) = (forms::Storage::PLAIN, forms::Storage::TRANSPOSED);
                for kernel in kernels {
                    for (seed, (count, b)) in [(1, b_t), (3, plain)].into_iter().enumerate() {
                        let case = forms::Case {
                            mnk: (100, 60, 777),
                            a: plain,
                            b,
                            c: plain,
                            count,
                            shared: (false, false),
                            alpha: 0.5,
                            beta: 1.5,
                            seed: seed as u64,
                        };
                        forms::one::<T, T::Out>(be, Some(kernel), &case)
                            .map_err(|e| format!("{kernel}, {case:?}: {e}"))?;
                        forms::one::<T, T>(be, Some(kernel), &case)
                            .map_err(|e| format!("{kernel}, 16-bit C, {case:?}: {e}"))?;
                    }
                }
                Ok(())
            }
            split::<rgemm::bf16>(be)?;
            // TF32's split kernel on the same schedule: f32 in and out, its packed operands
            // after the planes.
            let shapes = [(100, 150, 520), (77, 250, 700)];
            splits_somewhere::<f32>(be, Kernel::WgmmaTf32Split, &shapes)?;
            same_twice_on::<f32, f32>(be, &[Kernel::WgmmaTf32Split], shapes)
        }),
        ("shapes::split_k_counters_survive_other_products", |be| {
            // One context, three products: `decode_async` with 32 strips of counters, then
            // `few_columns`, whose 4 counters are followed by its planes (over the bytes of
            // the first product's counters), then the first again: its counters must be
            // zero at launch, not the planes the second left there.
            let (a, b) = random_operands::<rgemm::bf16>((2, 8192, 4096), 1);
            let (x, y) = random_operands::<f32>((200, 8, 2048), 3);
            for (round, kernel) in [Kernel::DecodeAsync, Kernel::FewColumns, Kernel::DecodeAsync]
                .into_iter()
                .enumerate()
            {
                let checked = match kernel {
                    Kernel::FewColumns => be
                        .matmul_with(&x, &y, kernel)
                        .map_err(fail)
                        .and_then(|c| check_product_with(&x, &y, &c, kernel)),
                    _ => be
                        .matmul_with(&a, &b, kernel)
                        .map_err(fail)
                        .and_then(|c| check_product_with(&a, &b, &c, kernel)),
                };
                checked.map_err(|e| format!("product {round} ({kernel}): {e}"))?;
            }
            Ok(())
        }),
        ("shapes::thin_products_both_ways_exact_on_integers", |be| {
            // `thin`'s two ways through (few rows, few columns) and its 4-steps-per-load path
            // (one column, K a multiple of 4), with K both a multiple of 4 and not.
            fn ints<T: Element>(be: &Backend) -> Result<(), String> {
                for mnk in [
                    (37, 1, 64),
                    (37, 1, 67),
                    (1, 45, 64),
                    (3, 2, 130),
                    (40, 1, 4),
                ] {
                    let (a, b) = integer_operands::<T>(mnk);
                    exact(be, &a, &b, Kernel::Thin)?;
                }
                Ok(())
            }
            crate::each_element!(ints(be))
        }),
        ("types::c_in_input_type_rounds_once_to_nearest_even", |be| {
            // Every kernel with C in f16 / bf16: sums exact in f32 that the 16-bit type
            // cannot hold (2049 and 2051: ties, to even; 256 x 2049 past f16's range: Inf),
            // a NaN row and an Inf column. Each element must be the f64 reference rounded
            // once to C's type, bit for bit (NaN where it is NaN).
            fn each<T: Element + Output<T>>(be: &Backend) -> Result<(), String> {
                let x = |v: f64| T::from_f64(v);
                let a = Matrix::from_fn(4, 9, |r, k| match r {
                    0 => x(1.0),
                    1 => x(256.0),
                    2 => x(if k == 0 { f64::NAN } else { 1.0 }),
                    _ => x(if k == 0 { 1.0 } else { 0.0 }),
                })
                .map_err(fail)?;
                let b = Matrix::from_fn(9, 4, |k, c| match c {
                    0 => x(if k < 8 { 256.0 } else { 1.0 }),
                    1 => x(if k < 8 { 256.0 } else { 3.0 }),
                    2 => x(1.0),
                    _ => x(if k == 0 { f64::INFINITY } else { 0.0 }),
                })
                .map_err(fail)?;
                let want = rgemm::matmul_reference(&a, &b).map_err(fail)?;
                for kernel in kernels_for::<T>(3) {
                    let mut c = Matrix::<T>::zeros(4, 4).map_err(fail)?;
                    be.matmul_into(&a, &b, &mut c, kernel).map_err(fail)?;
                    for (got, want) in c.as_slice().iter().zip(want.as_slice()) {
                        let (got, want) = (got.to_f64(), T::from_f64(*want).to_f64());
                        if !(got == want || got.is_nan() && want.is_nan()) {
                            let name = T::NAME;
                            return Err(format!(
                                "{kernel} {name}: {got} should be {want} in {c:?}"
                            ));
                        }
                    }
                }
                Ok(())
            }
            each::<rgemm::f16>(be)?;
            each::<rgemm::bf16>(be)
        }),
        (
            "precision::tf32_rounds_inputs_3xtf32_keeps_them_inf_and_nan_as_ieee",
            |be| {
                // A's first column holds what TF32 cannot: 1 + 2^-12 (TF32: 1), the ties
                // +-(1 + 2^-11) (away from zero: +-(1 + 2^-10)), then Inf and NaN; B's first
                // row is 1, 0, 3 and the rest of both is 0. TF32 must give the rounded inputs'
                // products, 3xTF32 the exact ones, and both Inf x 1 = Inf, Inf x 0 = NaN, NaN
                // rows NaN (3xTF32's Inf x 0 cross terms are repaired). Exact f32: the exact
                // products, for contrast.
                // K = 9 and 12: rows of A of 36 and 48 bytes. `wgmma_tf32` packs (and
                // rounds) the former; the latter TMA reads in place and the kernel rounds on
                // its way to `wgmma`'s A registers (TMA's own TFLOAT32 maps round the tie 1 + 2^-11 to 1, not as
                // `cvt.rna`, H200: they are not used).
                for k in [9, 12] {
                    let (m, n) = (5, 3);
                    let first = [
                        1.0 + 2f32.powi(-12),
                        1.0 + 2f32.powi(-11),
                        -(1.0 + 2f32.powi(-11)),
                        f32::INFINITY,
                        f32::NAN,
                    ];
                    let a =
                        Matrix::from_fn(m, k, |r, c| if c == 0 { first[r] } else { 0.0 }).unwrap();
                    let b =
                        Matrix::from_fn(k, n, |r, c| if r == 0 { [1.0, 0.0, 3.0][c] } else { 0.0 })
                            .unwrap();
                    let tf32 = [
                        1.0,
                        1.0 + 2f32.powi(-10),
                        -(1.0 + 2f32.powi(-10)),
                        f32::INFINITY,
                        f32::NAN,
                    ];
                    for kernel in kernels_for::<f32>(3) {
                        let rows = match kernel.spec().precision {
                            Precision::Tf32 => tf32,
                            Precision::Exact | Precision::Tf32x3 => first,
                            other => return Err(format!("no expectation for {other:?}")),
                        };
                        let c = be.matmul_with(&a, &b, kernel).map_err(fail)?;
                        for (r, row) in rows.into_iter().enumerate() {
                            let want = [row, row * 0.0, row * 3.0];
                            for (col, want) in want.into_iter().enumerate() {
                                let got = c.get(r, col).unwrap();
                                // (Zeros compare equal whatever their sign: a sum of -0 and +0 is +0.)
                                if !(got == want || got.is_nan() && want.is_nan()) {
                                    return Err(format!(
                                        "{kernel} (K = {k}): C[{r}][{col}] = {got:e}, want {want:e}"
                                    ));
                                }
                            }
                        }
                    }
                }
                // f32's largest magnitudes, which TF32 rounds to Inf: `wgmma_3xtf32` keeps
                // them (its pack splits them toward zero), within 4 ulp, as exact f32 does.
                // (`mma_3xtf32` splits in its mainloop, where that cost half its speed: Inf.)
                let a = Matrix::from_vec(3, 1, vec![f32::MAX, -f32::MAX, f32::MAX * 0.75]).unwrap();
                let one = Matrix::from_vec(1, 1, vec![1.0f32]).unwrap();
                let wide = kernels_for::<f32>(3).filter(|kernel| {
                    kernel.spec().precision != Precision::Tf32 && *kernel != Kernel::Mma3xTf32
                });
                for kernel in wide {
                    let c = be.matmul_with(&a, &one, kernel).map_err(fail)?;
                    for r in 0..3 {
                        let (got, x) = (c.get(r, 0).unwrap(), a.get(r, 0).unwrap());
                        if ((got - x) / x).abs() > 4.0 * f32::EPSILON {
                            return Err(format!("{kernel}: {x:e} x 1 = {got:e}"));
                        }
                    }
                }
                Ok(())
            },
        ),
        ("shapes::zero_sized_dimensions_follow_the_maths", |be| {
            // C starts as NaN: K = 0 must write zeros, not leave C as it was.
            fn each<T: Element>(be: &Backend) -> Result<(), String> {
                for (m, n, k) in [(0, 5, 3), (5, 0, 3), (0, 0, 0), (4, 6, 0), (1, 1, 0)] {
                    let a = Matrix::<T>::zeros(m, k).unwrap();
                    let b = Matrix::<T>::zeros(k, n).unwrap();
                    for kernel in kernels_for::<T>(3) {
                        let nan = T::Out::from_f64(f64::NAN);
                        let mut c = Matrix::from_vec(m, n, vec![nan; m * n]).unwrap();
                        be.matmul_into(&a, &b, &mut c, kernel).map_err(fail)?;
                        if c.shape() != (m, n) || c.as_slice().iter().any(|v| v.to_f64() != 0.0) {
                            return Err(format!("{kernel} {m}x{n}x{k}: {c:?}"));
                        }
                    }
                }
                Ok(())
            }
            each::<f32>(be)?;
            each::<rgemm::bf16>(be)
        }),
        ("shapes::whole_tiles_store_a_16_bit_c_by_sectors", |be| {
            // A 16-bit C in whole block tiles 256 columns wide (the `wgmma` and `mma` epilogues'
            // quad stores: lanes swap pairs, each stores 4 columns), rows past m in the last
            // tile row (136 = 128 + 8), and a last column tile past n that takes the pair or
            // element stores. C starts as NaN; every element must be the product's.
            fn each<T: Element + Output<T>>(be: &Backend) -> Result<(), String> {
                let (a, b) = random_operands::<T>((136, 520, 40), 3);
                let tensor_cores = kernels_for::<T>(7).filter(|k| k.spec().tensor_cores);
                nan_c_is_overwritten::<T, T>(be, (&a, &b), tensor_cores)
            }
            each::<rgemm::f16>(be)?;
            each::<rgemm::bf16>(be)
        }),
        ("shapes::every_output_element_is_written", |be| {
            // C starts as NaN; every element of the product must replace it (interior and
            // edge tiles: 67 x 129 is no multiple of any block tile).
            fn each<T: Element>(be: &Backend) -> Result<(), String> {
                let (a, b) = random_operands::<T>((67, 129, 33), 1);
                nan_c_is_overwritten::<T, T::Out>(be, (&a, &b), kernels_for::<T>(7))
            }
            each::<f32>(be)?;
            each::<f64>(be)?;
            each::<rgemm::bf16>(be)
        }),
    ]
}
