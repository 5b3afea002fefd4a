//! Property tests of the general product `C = alpha op(A) op(B) + beta C`: random shapes,
//! transposes, row- or column-major storage, padded leading dimensions, offsets, strided
//! batches (stride 0 for a shared operand), alpha and beta (beta = 0 over a NaN-filled C),
//! checked element by element against [`rgemm::gemm_reference`]; the elements of C's
//! buffer outside every view must come back untouched.
use crate::{Backend, Under, side};
use proptest::prelude::*;
use rgemm::{Batch, Element, Kernel, Layout, MatrixLayout, MatrixView, MatrixViewMut, Output};

/// One operand's storage: `op` transposed or not, row- or column-major, `pad` extra
/// elements per leading dimension, starting at `offset`.
#[derive(Clone, Copy, Debug)]
pub struct Storage {
    pub transposed: bool,
    pub layout: Layout,
    pub pad: usize,
    pub offset: usize,
}

impl Storage {
    /// Dense and row-major, as stored.
    pub const PLAIN: Storage = Storage {
        transposed: false,
        layout: Layout::RowMajor,
        pad: 0,
        offset: 0,
    };
    /// Dense, stored transposed (B as `n x k`: a layer's weights as PyTorch stores them).
    pub const TRANSPOSED: Storage = Storage {
        transposed: true,
        ..Storage::PLAIN
    };
}

fn storage() -> impl Strategy<Value = Storage> {
    (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![2 => Just(0usize), 1 => 1usize..=5],
        prop_oneof![2 => Just(0usize), 1 => 1usize..=7],
    )
        .prop_map(|(transposed, col, pad, offset)| Storage {
            transposed,
            layout: if col {
                Layout::ColMajor
            } else {
                Layout::RowMajor
            },
            pad,
            offset,
        })
}

impl Storage {
    /// The view of a logical `rows x cols` operand stored this way.
    pub fn view(&self, rows: usize, cols: usize) -> MatrixLayout {
        self.view_aligned(rows, cols, 1)
    }

    /// [`Storage::view`] with the leading dimension and the offset multiples of `align`
    /// elements (what tensor maps read).
    pub fn view_aligned(&self, rows: usize, cols: usize, align: usize) -> MatrixLayout {
        let (r, c) = if self.transposed {
            (cols, rows)
        } else {
            (rows, cols)
        };
        let base = match self.layout {
            Layout::RowMajor => MatrixLayout::row_major(r, c),
            Layout::ColMajor => MatrixLayout::col_major(r, c),
        };
        let ld = (base.ld + self.pad).next_multiple_of(align);
        let stored = base.with_ld(ld).at(self.offset * align);
        if self.transposed { stored.t() } else { stored }
    }
}

/// One random case.
#[derive(Clone, Debug)]
pub struct Case {
    pub mnk: (usize, usize, usize),
    pub a: Storage,
    pub b: Storage,
    pub c: Storage,
    pub count: usize,
    /// Batch stride 0 for A / for B (a broadcast operand).
    pub shared: (bool, bool),
    pub alpha: f64,
    pub beta: f64,
    pub seed: u64,
}

impl Case {
    /// One dense product `C = A B` with B stored `n x k`, alpha 1, beta 0.
    pub fn b_transposed(mnk: (usize, usize, usize), seed: u64) -> Case {
        Case {
            mnk,
            a: Storage::PLAIN,
            b: Storage::TRANSPOSED,
            c: Storage::PLAIN,
            count: 1,
            shared: (false, false),
            alpha: 1.0,
            beta: 0.0,
            seed,
        }
    }

    /// The views of A, B and C as the case stores them, A's and B's leading dimensions and
    /// offsets multiples of `units` elements (what tensor maps read).
    pub fn views(&self, units: usize) -> (MatrixLayout, MatrixLayout, MatrixLayout) {
        let (m, n, k) = self.mnk;
        let a = self.a.view_aligned(m, k, units);
        let b = self.b.view_aligned(k, n, units);
        (a, b, self.c.view(m, n))
    }

    /// C's contents before the product, from `values`: NaN where beta = 0, which must not
    /// reach the result.
    pub fn c_before<T: Element, O: Output<T>>(&self, values: &[T]) -> Vec<O> {
        match self.beta {
            0.0 => vec![O::from_f64(f64::NAN); values.len()],
            _ => values.iter().map(|x| O::from_f64(x.to_f64())).collect(),
        }
    }
}

/// 16 bytes in elements of the narrower of the input and C types: how far apart products
/// start, which the kernels without offsets need.
pub(crate) fn align<T: Element, O: Output<T>>() -> usize {
    16 / std::mem::size_of::<T>().min(std::mem::size_of::<O>())
}

pub(crate) fn case(max_side: usize, batches: bool, general: bool) -> impl Strategy<Value = Case> {
    let plain = Storage::PLAIN;
    let st = move || {
        if general {
            storage().boxed()
        } else {
            Just(plain).boxed()
        }
    };
    let scalars = if general {
        (
            prop::sample::select(vec![1.0, -1.5, 0.5, 0.0]),
            prop::sample::select(vec![0.0, 1.0, -0.75]),
        )
            .boxed()
    } else {
        Just((1.0, 0.0)).boxed()
    };
    (
        (side(max_side), side(max_side), side(max_side)),
        (st(), st(), st()),
        if batches {
            (1usize..=3).boxed()
        } else {
            Just(1usize).boxed()
        },
        (any::<bool>(), any::<bool>()),
        scalars,
        any::<u64>(),
    )
        .prop_map(
            move |(mnk, (a, b, c), count, shared, (alpha, beta), seed)| Case {
                mnk,
                a,
                b,
                c: Storage {
                    transposed: false,
                    ..c
                },
                count,
                shared: if general { shared } else { (false, false) },
                alpha,
                beta,
                seed,
            },
        )
}

/// The batch stride and the elements of one operand's buffer: every product of the batch,
/// products 16-byte apart in the plain form, and (`whole`) at least all their lines apart,
/// as tensor maps need.
fn stride_of(
    view: &MatrixLayout,
    (shared, whole): (bool, bool),
    count: usize,
    align: usize,
) -> (usize, usize) {
    let lines = match view.layout {
        Layout::RowMajor => view.rows,
        Layout::ColMajor => view.cols,
    };
    let span = if whole {
        lines * view.ld + view.offset
    } else {
        0
    };
    let one = view.extent().unwrap().max(span).max(1);
    let stride = if shared {
        0
    } else {
        one.next_multiple_of(align)
    };
    (stride, one + stride * count.saturating_sub(1) + 3)
}

/// Runs `cases` random general products on `backend` with `kernel` (or the backend's own
/// choice, `None`: the GPU's rule), each checked against the reference. `general` draws
/// transposes, layouts, padding, offsets and scalars; `batches` draws batches of 1 to 3.
pub fn property<T: Element, O: Output<T>>(
    backend: &Backend,
    kernel: Option<Kernel>,
    (cases, max_side): (u32, usize),
    (general, batches): (bool, bool),
) -> Result<(), String> {
    crate::run_cases(cases, &case(max_side, batches, general), |case| {
        one::<T, O>(backend, kernel, &case)
    })
}

/// One case: the product on `backend`, the reference on the host, compared within the
/// tolerance of how `kernel` computes.
pub fn one<T: Element, O: Output<T>>(
    backend: &Backend,
    kernel: Option<Kernel>,
    case: &Case,
) -> Result<(), String> {
    // A kernel reading the caller's A and B through tensor maps takes them in 16-byte
    // units (one that packs them first takes any view).
    let units = match kernel.and_then(|k| k.spec().tma) {
        Some(maps) if maps.pack.is_none() => 16 / std::mem::size_of::<T>(),
        _ => 1,
    };
    let (la, lb, lc) = case.views(units);
    let align = align::<T, O>();
    let whole = units > 1;
    let (sa, len_a) = stride_of(&la, (case.shared.0, whole), case.count, align);
    let (sb, len_b) = stride_of(&lb, (case.shared.1, whole), case.count, align);
    let (sc, len_c) = stride_of(&lc, (false, false), case.count, align);
    let batch = Batch::strided(case.count, (sa, sb, sc));
    let a: Vec<T> = rgemm::internals::random_buffer(len_a, case.seed);
    let b: Vec<T> = rgemm::internals::random_buffer(len_b, case.seed ^ 0x9e37_79b9);
    let c: Vec<T> = rgemm::internals::random_buffer(len_c, case.seed ^ 0x5151);
    let c0: Vec<O> = case.c_before::<T, O>(&c);
    let mut want = c0.clone();
    let fail = |e: rgemm::Error| format!("{case:?}: {e}");
    rgemm::gemm_reference(
        (case.alpha, case.beta),
        &MatrixView::new(&a, la).map_err(fail)?,
        &MatrixView::new(&b, lb).map_err(fail)?,
        &mut MatrixViewMut::new(&mut want, lc).map_err(fail)?,
        batch,
    )
    .map_err(fail)?;
    let scalars = (case.alpha, case.beta);
    let got = backend
        .gemm::<T, O>(kernel, scalars, (&a, la), (&b, lb), (&c0, lc), batch)
        .map_err(fail)?;
    compare::<T, O>(
        case,
        (&a, &b),
        (&c0, &got, &want),
        (la, lb, lc),
        batch,
        Under::from(kernel).arith::<T>(),
    )
}

/// Every element of C's buffer: inside a view within the bound, outside untouched.
pub(crate) fn compare<T: Element, O: Output<T>>(
    case: &Case,
    (a, b): (&[T], &[T]),
    (c0, got, want): (&[O], &[O], &[O]),
    (la, lb, lc): (MatrixLayout, MatrixLayout, MatrixLayout),
    batch: Batch,
    tolerance: crate::Arith,
) -> Result<(), String> {
    let k = la.cols;
    let u = T::ACC_UNIT_ROUNDOFF * if tolerance.tensor_cores { 2.0 } else { 1.0 };
    let gamma_k = |k: f64, u: f64| k * u / (1.0 - k * u);
    let additions = k as f64 * tolerance.precision.additions() as f64;
    let gamma = 1.01
        * (gamma_k(additions, u)
            + gamma_k(k as f64, f64::EPSILON / 2.0)
            + tolerance.precision.product_error());
    let (uo, eta) = O::ROUNDING;
    let mut inside = vec![false; got.len()];
    for i in 0..batch.count {
        for r in 0..lc.rows {
            for col in 0..lc.cols {
                let at = lc.index(r, col) + i * batch.stride_c;
                inside[at] = true;
                let s: f64 = (0..k)
                    .map(|p| {
                        let x = a[la.index(r, p) + i * batch.stride_a].to_f64();
                        (x * b[lb.index(p, col) + i * batch.stride_b].to_f64()).abs()
                    })
                    .sum();
                let old = if case.beta == 0.0 {
                    0.0
                } else {
                    case.beta * c0[at].to_f64()
                };
                let w = want[at].to_f64();
                // The sum's bound, then alpha's product, beta's fused add and C's rounding
                // (twice: the reference is rounded to C's type too, maybe the other way).
                let sum = case.alpha.abs() * gamma * s;
                let bound = sum
                    + 2.0 * u * (w.abs() + old.abs() + sum)
                    + 2.0 * (uo * (w.abs() + sum) + eta)
                    + 1e-30;
                let g = got[at].to_f64();
                let err = if g == w { 0.0 } else { (g - w).abs() };
                if err.is_nan() || err > bound {
                    return Err(format!(
                        "{case:?}: product {i} C[{r}][{col}] = {g:e}, reference {w:e}, |error| {err:e} > {bound:e}"
                    ));
                }
            }
        }
    }
    for (at, (g, o)) in got.iter().zip(c0).enumerate() {
        let (g, o) = (g.to_f64(), o.to_f64());
        if !inside[at] && !(g == o || g.is_nan() && o.is_nan()) {
            return Err(format!(
                "{case:?}: element {at} of C's buffer, outside the views, changed: {o:e} -> {g:e}"
            ));
        }
    }
    Ok(())
}

/// The kernels that compute every form (leading dimensions, transposes, alpha/beta) and
/// have entries for `T` and run on the CPU executor.
pub fn strided_kernels<T: Element>() -> Vec<Kernel> {
    Kernel::FIXED
        .into_iter()
        .filter(|k| k.spec().strided && k.supports::<T>() && k.spec().cpu)
        .collect()
}

/// The kernels that read the dense product with B transposed besides the plain one
/// ([`rgemm::KernelSpec::b_transposed`]), with entries for `T`, that the CPU executor runs.
pub fn b_transposed_kernels<T: Element>() -> Vec<Kernel> {
    Kernel::FIXED
        .into_iter()
        .filter(|k| k.spec().b_transposed && k.supports::<T>() && k.spec().cpu)
        .collect()
}

/// Random dense products with B stored `n x k` (for a kernel reading through tensor maps K a
/// multiple of 8: rows TMA reads) on a [`b_transposed_kernels`] kernel, checked as [`one`]
/// checks; first the forms next to it that the kernel does not read (B's rows padded, alpha
/// 2, and for tensor maps K off 8 elements), each [`rgemm::Error::UnsupportedForm`].
pub fn b_transposed<T: Element, O: Output<T>>(
    backend: &Backend,
    kernel: Kernel,
    (cases, max_side): (u32, usize),
) -> Result<(), String> {
    let (plain, b_t) = (Storage::PLAIN, Storage::TRANSPOSED);
    let (m, n) = (5, 24);
    let tma = kernel.spec().tma.is_some();
    let unread = [(12, 0, 1.0), (16, 8, 1.0), (16, 0, 2.0)];
    for (k, pad, alpha) in unread.into_iter().filter(|&(k, _, _)| tma || k % 8 == 0) {
        let (la, lc) = (plain.view(m, k), plain.view(m, n));
        let lb = Storage { pad, ..b_t }.view(k, n);
        let lens = (m * k, n * (k + pad), m * n);
        let a: Vec<T> = rgemm::internals::random_buffer(lens.0, 1);
        let b: Vec<T> = rgemm::internals::random_buffer(lens.1, 2);
        let c0 = vec![O::from_f64(0.5); lens.2];
        let scalars = (alpha, 0.0);
        let what = format!("{kernel}, K {k}, B's rows padded by {pad}, alpha {alpha}");
        match backend.gemm::<T, O>(
            Some(kernel),
            scalars,
            (&a, la),
            (&b, lb),
            (&c0, lc),
            Batch::ONE,
        ) {
            Err(rgemm::Error::UnsupportedForm { .. }) => {}
            Err(e) => return Err(format!("{what}: unexpected error: {e}")),
            Ok(_) => return Err(format!("{what}: no error")),
        }
    }
    let case = (
        (side(max_side), side(max_side), side(max_side)),
        any::<u64>(),
    )
        .prop_map(move |((m, n, k), seed)| {
            Case::b_transposed((m, n, if tma { k.next_multiple_of(8) } else { k }), seed)
        });
    crate::run_cases(cases, &case, |case| {
        one::<T, O>(backend, Some(kernel), &case)
    })
}

/// The kernels that run a batch in one launch, with entries for `T`.
pub fn batched_kernels<T: Element>() -> Vec<Kernel> {
    Kernel::FIXED
        .into_iter()
        .filter(|k| k.spec().batched() && k.supports::<T>() && k.spec().cpu)
        .collect()
}

/// A forms test, to be run on a backend.
pub type FormTest = Box<dyn FnOnce(&Backend) -> Result<(), String> + Send>;
/// Makes a trial of a named forms test on one backend.
pub type MakeTrial<'a> = &'a dyn Fn(String, FormTest) -> libtest_mimic::Trial;

/// The forms trials of one pairing of input and C types on one backend: for every kernel
/// that reads every form, general products and batches (`general_cases` each); for every
/// other kernel that runs batches, plain batches (`batch_cases` each); for every kernel that
/// reads B transposed besides the plain form, that form (`general_cases`); with `auto`, the
/// backend's own choice too. `make` wraps a test as a trial of that backend.
pub fn trials<T: Element, O: Output<T>>(
    make: MakeTrial,
    (general_cases, batch_cases, max_side): (u32, u32, usize),
    auto: bool,
) -> Vec<libtest_mimic::Trial> {
    let trial = |kernel: Option<Kernel>, cases: u32, form: (bool, bool)| {
        let what = if form.0 { "general" } else { "batched" };
        let name = format!(
            "forms::{what}::{}::{}",
            Under::from(kernel).name(),
            O::SUFFIX
        );
        let test = move |be: &Backend| property::<T, O>(be, kernel, (cases, max_side), form);
        make(name, Box::new(test))
    };
    let mut out = Vec::new();
    for kernel in batched_kernels::<T>() {
        out.push(match kernel.spec().strided {
            true => trial(Some(kernel), general_cases, (true, true)),
            false => trial(Some(kernel), batch_cases, (false, true)),
        });
    }
    for kernel in strided_kernels::<T>() {
        if !kernel.spec().batched() {
            out.push(trial(Some(kernel), general_cases, (true, false)));
        }
    }
    for kernel in b_transposed_kernels::<T>() {
        let name = format!(
            "forms::b_transposed::{}::{}",
            Under::from(Some(kernel)).name(),
            O::SUFFIX
        );
        let test = move |be: &Backend| b_transposed::<T, O>(be, kernel, (general_cases, max_side));
        out.push(make(name, Box::new(test)));
    }
    if auto {
        out.push(trial(None, general_cases, (true, true)));
        out.push(trial(None, batch_cases, (false, true)));
    }
    out
}

/// A check of one bad input: it must give the error `matches` accepts, before any work,
/// leaving C as it was.
pub type ErrorCase = (&'static str, fn(&Backend) -> Result<(), String>);

/// `rows x cols`, row-major.
const fn rm(rows: usize, cols: usize) -> MatrixLayout {
    MatrixLayout::row_major(rows, cols)
}

/// An f32 product's input: `kernel` over views of A, B and C in buffers of `lens` elements,
/// and the batch.
#[derive(Clone, Copy)]
struct Input {
    kernel: Kernel,
    a: MatrixLayout,
    b: MatrixLayout,
    c: MatrixLayout,
    lens: (usize, usize, usize),
    batch: Batch,
}

/// A valid product (4 x 8 times 8 x 4 on `tiled16`, buffers of 64 elements), which each bad
/// input spoils one way.
const VALID: Input = Input {
    kernel: Kernel::Tiled16,
    a: rm(4, 8),
    b: rm(8, 4),
    c: rm(4, 4),
    lens: (64, 64, 64),
    batch: Batch::ONE,
};

impl Input {
    // The input with one part replaced: what a bad input changes of [`VALID`].
    fn kernel(self, kernel: Kernel) -> Self {
        Input { kernel, ..self }
    }

    fn a(self, a: MatrixLayout) -> Self {
        Input { a, ..self }
    }

    fn b(self, b: MatrixLayout) -> Self {
        Input { b, ..self }
    }

    fn c(self, c: MatrixLayout) -> Self {
        Input { c, ..self }
    }

    fn lens(self, lens: (usize, usize, usize)) -> Self {
        Input { lens, ..self }
    }

    fn batch(self, batch: Batch) -> Self {
        Input { batch, ..self }
    }

    /// Runs it, expecting an error that `want` accepts and C unchanged.
    fn fails(self, be: &Backend, want: fn(&rgemm::Error) -> bool) -> Result<(), String> {
        let a: Vec<f32> = rgemm::internals::random_buffer(self.lens.0, 1);
        let b: Vec<f32> = rgemm::internals::random_buffer(self.lens.1, 2);
        let c: Vec<f32> = rgemm::internals::random_buffer(self.lens.2, 3);
        let (va, vb, vc) = ((&a[..], self.a), (&b[..], self.b), (&c[..], self.c));
        match be.gemm::<f32, f32>(Some(self.kernel), (1.0, 0.0), va, vb, vc, self.batch) {
            Err(e) if want(&e) => Ok(()),
            Err(e) => Err(format!("unexpected error: {e}")),
            Ok(out) if out == c => Err("no error".into()),
            Ok(_) => Err("no error, and C changed".into()),
        }
    }
}

/// The bad inputs of the general product, each a typed error before any work (the views
/// are made unchecked here, as a caller holding raw layouts might).
pub fn error_cases() -> Vec<ErrorCase> {
    use rgemm::Error;
    vec![
        ("forms_error::leading_dimension_shorter_than_a_row", |be| {
            let want = |e: &Error| {
                matches!(
                    e,
                    Error::LeadingDimension {
                        ld: 7,
                        least: 8,
                        ..
                    }
                )
            };
            VALID.a(rm(4, 8).with_ld(7)).fails(be, want)
        }),
        ("forms_error::view_past_its_buffer", |be| {
            let want = |e: &Error| {
                matches!(
                    e,
                    Error::ViewOutOfBounds {
                        needs: 21,
                        len: 20,
                        ..
                    }
                )
            };
            VALID.c(rm(4, 4).at(5)).lens((64, 64, 20)).fails(be, want)
        }),
        ("forms_error::batch_past_a_buffer", |be| {
            let want = |e: &Error| matches!(e, Error::ViewOutOfBounds { .. });
            let batch = Batch::strided(3, (32, 32, 16));
            VALID.batch(batch).lens((95, 96, 48)).fails(be, want)
        }),
        ("forms_error::batch_overlapping_c", |be| {
            let want = |e: &Error| {
                matches!(
                    e,
                    Error::BatchOverlap {
                        stride: 8,
                        apart: 1
                    }
                )
            };
            VALID.batch(Batch::strided(2, (32, 32, 8))).fails(be, want)
        }),
        ("forms_error::batch_sharing_c", |be| {
            let want = |e: &Error| matches!(e, Error::BatchOverlap { stride: 0, .. });
            VALID.batch(Batch::strided(2, (32, 32, 0))).fails(be, want)
        }),
        ("forms_error::inner_dimensions", |be| {
            let want = |e: &Error| matches!(e, Error::InnerDimensionMismatch { .. });
            VALID.b(rm(7, 4)).fails(be, want)
        }),
        ("forms_error::output_shape", |be| {
            let want = |e: &Error| matches!(e, Error::OutputShapeMismatch { .. });
            VALID.c(rm(4, 5)).fails(be, want)
        }),
        ("forms_error::transpose_on_a_row_major_only_kernel", |be| {
            let want = |e: &Error| matches!(e, Error::UnsupportedForm { .. });
            VALID.kernel(Kernel::Coarse).a(rm(8, 4).t()).fails(be, want)
        }),
        ("forms_error::batch_on_a_kernel_without_batches", |be| {
            let want = |e: &Error| matches!(e, Error::UnsupportedForm { .. });
            let batch = Batch::strided(2, (32, 32, 16));
            VALID.kernel(Kernel::StreamK).batch(batch).fails(be, want)
        }),
        ("forms_error::interleaved_batches_are_fine", |be| {
            // Products 4 columns apart in rows of 8: disjoint, so no error, and C right.
            let c = rm(4, 4).with_ld(8);
            let a: Vec<f32> = rgemm::internals::random_buffer(64, 1);
            let b: Vec<f32> = rgemm::internals::random_buffer(64, 2);
            let c0 = vec![0.0f32; 32];
            let batch = Batch::strided(2, (32, 32, 4));
            let got = be
                .gemm::<f32, f32>(
                    Some(Kernel::Tiled16),
                    (1.0, 0.0),
                    (&a, rm(4, 8)),
                    (&b, rm(8, 4)),
                    (&c0, c),
                    batch,
                )
                .map_err(|e| e.to_string())?;
            let mut want = c0.clone();
            rgemm::gemm_reference(
                (1.0, 0.0),
                &MatrixView::new(&a, rm(4, 8)).unwrap(),
                &MatrixView::new(&b, rm(8, 4)).unwrap(),
                &mut MatrixViewMut::new(&mut want, c).unwrap(),
                batch,
            )
            .map_err(|e| e.to_string())?;
            let close = got
                .iter()
                .zip(&want)
                .all(|(g, w)| (g - w).abs() <= 1e-5 * (1.0 + w.abs()));
            close
                .then_some(())
                .ok_or_else(|| format!("{got:?} != {want:?}"))
        }),
    ]
}

/// One product of `mnk` with unpadded operands at their buffers' starts, A and B stored
/// transposed as `(a_t, b_t)` say and C column-major where `c_col`.
fn dense_case(
    mnk: (usize, usize, usize),
    (a_t, b_t, c_col): (bool, bool, bool),
    (alpha, beta): (f64, f64),
    seed: u64,
) -> Case {
    let st = |transposed: bool| Storage {
        transposed,
        layout: Layout::RowMajor,
        pad: 0,
        offset: 0,
    };
    Case {
        mnk,
        a: st(a_t),
        b: st(b_t),
        c: Storage {
            layout: if c_col {
                Layout::ColMajor
            } else {
                Layout::RowMajor
            },
            ..st(false)
        },
        count: 1,
        shared: (false, false),
        alpha,
        beta,
        seed,
    }
}

/// Whole 128 x 128 tiles and K a multiple of 16 in every layout of A and B (and a
/// column-major C): the unchecked mainloops, compiled per layout, which the random shapes
/// of [`property`] rarely reach on the executor (they need sides of 128 or more).
pub fn whole_tiles(be: &Backend) -> Result<(), String> {
    fn each<T: Element>(be: &Backend, kernel: Kernel) -> Result<(), String> {
        each_of::<T>(be, kernel, (128, 256, 32))
    }
    fn each_of<T: Element>(
        be: &Backend,
        kernel: Kernel,
        mnk: (usize, usize, usize),
    ) -> Result<(), String> {
        for (ta, tb, c_col) in [
            (false, false, false),
            (true, false, false),
            (false, true, false),
            (true, true, false),
            (false, false, true),
            (true, false, true),
        ] {
            let case = dense_case(mnk, (ta, tb, c_col), (1.0, 0.0), 7);
            one::<T, T::Out>(be, Some(kernel), &case)?;
        }
        Ok(())
    }
    for kernel in [
        Kernel::PairedLanes,
        Kernel::AsyncCopy,
        Kernel::FragmentBufferedK16,
        Kernel::StreamK,
        Kernel::WarpTiledK16,
    ] {
        each::<f32>(be, kernel)?;
        each::<f64>(be, kernel)?;
    }
    // The FP64 tensor cores' unchecked copies, each operand in either orientation.
    each::<f64>(be, Kernel::DmmaWarps)?;
    // `dmma_buffered`'s own mainloop for whole tiles: K a multiple of its 16, K with a
    // partial stage (taken first), edge tiles (moved inside C) beside whole ones, and
    // enough stages for the loop to refill each slot.
    for mnk in [
        (128, 256, 32),
        (256, 128, 40),
        (200, 130, 52),
        (128, 64, 168),
    ] {
        each_of::<f64>(be, Kernel::DmmaBuffered, mnk)?;
        // `dmma_k4`'s: its interior blocks in their own function, K steps of 4.
        each_of::<f64>(be, Kernel::DmmaK4, mnk)?;
    }
    Ok(())
}

/// The four layouts of A and B, then a column-major C with both as stored: `(a_t, b_t,
/// c_col)`.
const EVERY_LAYOUT: [(bool, bool, bool); 5] = [
    (false, false, false),
    (true, false, false),
    (false, true, false),
    (true, true, false),
    (false, false, true),
];

/// Edge tiles of the `mma.sync` tile ([`Kernel::DmmaK4`] and its family, TF32 on
/// `mma_tf32`): a block whose tile crosses C's last row or column multiplies the whole tile
/// ending at C's edge, overlapping its neighbour's, and stores only its own elements. With
/// beta non-zero (f64) an element stored twice would show (beta applied twice); every layout
/// of A and B, a column-major C, sides one past a tile and several tiles, an odd N
/// (transposed B: the moved tile's columns start odd, stored element by element), M under a
/// tile (only the columns move), K with a partial stage.
pub fn moved_edge_tiles(be: &Backend) -> Result<(), String> {
    fn each<T: Element>(
        be: &Backend,
        kernel: Kernel,
        mnk: (usize, usize, usize),
        forms: &[(bool, bool, bool)],
        (alpha, beta): (f64, f64),
    ) -> Result<(), String> {
        for (i, &form) in forms.iter().enumerate() {
            let case = dense_case(mnk, form, (alpha, beta), 23 + i as u64);
            let (ta, tb, c_col) = form;
            one::<T, T::Out>(be, Some(kernel), &case)
                .map_err(|e| format!("{kernel} {mnk:?} A^T {ta} B^T {tb} C col {c_col}: {e}"))?;
        }
        Ok(())
    }
    let every = EVERY_LAYOUT;
    let shapes = [(200, 130, 52), (129, 65, 48), (17, 200, 32), (136, 193, 40)];
    for kernel in [
        Kernel::Dmma,
        Kernel::DmmaWarps,
        Kernel::DmmaSmall,
        Kernel::DmmaBuffered,
        Kernel::DmmaK4,
        Kernel::DmmaSmallBuffered,
    ] {
        for mnk in shapes {
            each::<f64>(be, kernel, mnk, &every, (1.5, -0.75))?;
        }
    }
    // The TF32 kernels take `C = A B` on row-major, dense operands only (C stored twice
    // would not show, a part not stored would).
    for kernel in [Kernel::MmaTf32, Kernel::Mma3xTf32] {
        for mnk in [(200, 136, 40), (136, 260, 32)] {
            each::<f32>(be, kernel, mnk, &[(false, false, false)], (1.0, 0.0))?;
        }
    }
    Ok(())
}

/// The warp-specialised 16-bit kernels that read the caller's operands through tensor maps
/// (no pack launch): single blocks, pairs and squares, on every tile width.
pub(crate) const TMA_WGMMA: &[Kernel] = &[
    Kernel::WgmmaTma,
    Kernel::WgmmaPersistent,
    Kernel::Wgmma128x192,
    Kernel::WgmmaPairs,
    Kernel::WgmmaPairs128x192,
    Kernel::WgmmaQuads,
    Kernel::WgmmaQuads128x192,
    Kernel::Wgmma128x128,
    Kernel::Wgmma128x64,
];

/// Tiles of the warp-specialised 16-bit kernels whose second 64-row half lies below C: the
/// producer copies only the first half of A, and the second consumer warpgroup multiplies
/// what its half of the stage last held (a previous tile's rows, or nothing yet), which the
/// epilogue must not store. With beta non-zero a row below C written, or a row of C left
/// out, would show; every layout of A and B, a column-major C, one half partial (40 rows)
/// or whole (64), two halves with the second partial (104), and a second row of tiles
/// whose second half is skipped after a first row of whole tiles (184: the persistent
/// kernels' stages then hold that first row's A), with both C types; and the TF32 kernels.
pub fn a_halves_below_c(be: &Backend) -> Result<(), String> {
    use rgemm::{bf16, f16};
    fn each<T: Element, O: Output<T>>(
        be: &Backend,
        kernel: Kernel,
        mnk: (usize, usize, usize),
    ) -> Result<(), String> {
        for (i, &form) in EVERY_LAYOUT.iter().enumerate() {
            let case = dense_case(mnk, form, (1.25, -0.5), 41 + i as u64);
            let (ta, tb, c_col) = form;
            one::<T, O>(be, Some(kernel), &case)
                .map_err(|e| format!("{kernel} {mnk:?} A^T {ta} B^T {tb} C col {c_col}: {e}"))?;
        }
        Ok(())
    }
    for &kernel in TMA_WGMMA.iter().chain(&[Kernel::WgmmaPacked]) {
        for mnk in [(40, 72, 80), (64, 136, 64), (104, 72, 136), (184, 200, 72)] {
            each::<bf16, f32>(be, kernel, mnk)?;
        }
        each::<f16, f16>(be, kernel, (184, 200, 72))?;
    }
    // The TF32 kernels on the same pipeline (A's box of 64 rows where C has at most 64; the
    // 3xTF32 one copies both parts of A so), checked at their precision's tolerance.
    for kernel in [Kernel::WgmmaTf32, Kernel::Wgmma3xTf32] {
        for (i, mnk) in [(40, 72, 80), (64, 136, 64), (104, 72, 136)]
            .into_iter()
            .enumerate()
        {
            let (a, b) = crate::random_operands::<f32>(mnk, 71 + i as u64);
            let c = be
                .matmul_with(&a, &b, kernel)
                .map_err(|e| format!("{kernel} {mnk:?}: {e}"))?;
            crate::check_product_with(&a, &b, &c, kernel)
                .map_err(|e| format!("{kernel} {mnk:?}: {e}"))?;
        }
    }
    Ok(())
}

/// Edge tiles whose rows come in aligned groups of 4 (N, K and the leading dimensions
/// multiples of 4, any M): the unchecked `EDGE` path of `paired_lanes` and the stream-K
/// kernels (whole and split tiles), K a multiple of 16 or only of 4, with alpha/beta
/// and a padded leading dimension; and, with K not a multiple of 4 or an odd padding, the
/// checked path of the same blocks.
pub fn aligned_edges(be: &Backend) -> Result<(), String> {
    fn each<T: Element>(be: &Backend) -> Result<(), String> {
        let shapes = [
            ((68, 132, 32), 0),
            ((4, 260, 48), 0),
            ((196, 300, 64), 4),
            ((64, 44, 16), 0),
            ((132, 136, 16), 8),
            ((68, 132, 40), 0),
            ((68, 132, 32), 1),
            ((68, 132, 37), 0),
            ((67, 132, 32), 0),
            ((131, 260, 48), 0),
        ];
        for (i, (mnk, pad)) in shapes.into_iter().enumerate() {
            let st = |pad: usize| Storage {
                transposed: false,
                layout: Layout::RowMajor,
                pad,
                offset: 0,
            };
            let case = Case {
                mnk,
                a: st(pad),
                b: st(pad),
                c: st(pad),
                count: 1,
                shared: (false, false),
                alpha: if i % 2 == 0 { 1.0 } else { 1.5 },
                beta: if i % 3 == 0 { 0.0 } else { -0.5 },
                seed: 11 + i as u64,
            };
            for kernel in [Kernel::PairedLanes]
                .into_iter()
                .chain(crate::stream_k_kernels())
            {
                one::<T, T::Out>(be, Some(kernel), &case)
                    .map_err(|e| format!("{kernel} {} {mnk:?} pad {pad}: {e}", T::NAME))?;
            }
        }
        Ok(())
    }
    each::<f32>(be)?;
    each::<f64>(be)?;
    each::<rgemm::bf16>(be)
}

/// The products of a batch closer together than a whole operand (each A^T one stored row of
/// 8, rows 16 elements apart, products 8 apart): tensor maps read such planes wrong on an
/// H200 though the driver encodes them, so the TMA kernels refuse the form with a typed
/// error, and `wgmma_packed` (which packs each plane apart) and the rule's choice compute it
/// exactly (small integers).
pub fn close_planes(be: &Backend) -> Result<(), String> {
    use rgemm::bf16;
    let la = MatrixLayout::row_major(1, 8).with_ld(16).t();
    let lb = MatrixLayout::row_major(1, 8).with_ld(8);
    let lc = MatrixLayout::row_major(8, 8);
    let batch = Batch::strided(2, (8, 8, 64));
    let int = |i: usize| bf16::from_f64((i % 7) as f64 - 3.0);
    let a: Vec<bf16> = (0..24).map(int).collect();
    let b: Vec<bf16> = (0..16).map(|i| int(i + 3)).collect();
    let c0 = vec![f32::NAN; 128];
    let mut want = c0.clone();
    let fail = |e: rgemm::Error| e.to_string();
    rgemm::gemm_reference(
        (1.0, 0.0),
        &MatrixView::new(&a, la).map_err(fail)?,
        &MatrixView::new(&b, lb).map_err(fail)?,
        &mut MatrixViewMut::new(&mut want, lc).map_err(fail)?,
        batch,
    )
    .map_err(fail)?;
    for &kernel in TMA_WGMMA {
        let got = be.gemm::<bf16, f32>(
            Some(kernel),
            (1.0, 0.0),
            (&a, la),
            (&b, lb),
            (&c0, lc),
            batch,
        );
        match got {
            Err(rgemm::Error::UnsupportedForm { .. }) => {}
            other => return Err(format!("{kernel}: {other:?}, expected UnsupportedForm")),
        }
    }
    // A kernel that packs the operands first writes each product's planes apart.
    let packed = be
        .gemm::<bf16, f32>(
            Some(Kernel::WgmmaPacked),
            (1.0, 0.0),
            (&a, la),
            (&b, lb),
            (&c0, lc),
            batch,
        )
        .map_err(fail)?;
    if packed != want {
        return Err(format!("wgmma_packed: {packed:?}, reference {want:?}"));
    }
    if let Backend::Gpu(_) = be {
        let got = be
            .gemm::<bf16, f32>(None, (1.0, 0.0), (&a, la), (&b, lb), (&c0, lc), batch)
            .map_err(fail)?;
        if got != want {
            return Err(format!("rule's choice: {got:?}, reference {want:?}"));
        }
    }
    Ok(())
}
