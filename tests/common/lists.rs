//! Property tests of batches of independent views (`Context::gemm_batched`, cuBLAS's
//! `gemmBatched`): each product's A, B and C in buffers of their own, or several in one
//! buffer at different offsets (a table offset may be negative), in every form
//! [`crate::forms`] draws; each product checked against [`rgemm::gemm_reference`], and the
//! elements of C's buffers outside the views untouched.
use crate::forms::{Case, MakeTrial, align, batched_kernels, case, compare};
use crate::{Backend, Operands, Under};
use rgemm::{Batch, Element, Kernel, MatrixLayout, MatrixView, MatrixViewMut, Output};

/// Product `z`'s extra offset in its operand's buffer, in units of `align` elements:
/// different per product, and in a shared buffer falling as well as rising.
fn shift(z: usize, count: usize, align: usize) -> usize {
    ((count - z) * 3 % 5) * align
}

/// One operand's buffers and views: one buffer per product, or (`shared`) one buffer
/// holding every product's view at its own offset.
fn operand<T: Element>(
    view: MatrixLayout,
    (count, shared, align): (usize, bool, usize),
    seed: u64,
) -> (Vec<Vec<T>>, Vec<(usize, MatrixLayout)>) {
    let views: Vec<_> = (0..count)
        .map(|z| {
            let at = view.at(view.offset + shift(z, count, align));
            (if shared { 0 } else { z }, at)
        })
        .collect();
    let len = |v: &MatrixLayout| v.extent().unwrap() + 3;
    let buffers = match shared {
        true => {
            let most = views.iter().map(|(_, v)| len(v)).max().unwrap_or(1);
            vec![rgemm::internals::random_buffer(most, seed)]
        }
        false => (views.iter().enumerate())
            .map(|(z, (_, v))| rgemm::internals::random_buffer(len(v), seed + z as u64))
            .collect(),
    };
    (buffers, views)
}

/// One case as a list of `case.count + 1` products (so at least two: a table), compared
/// within the tolerance of how `kernel` computes.
pub fn one<T: Element, O: Output<T>>(
    backend: &Backend,
    kernel: Option<Kernel>,
    case: &Case,
) -> Result<(), String> {
    let count = case.count + 1;
    let align = align::<T, O>();
    let (la, lb, lc) = case.views(1);
    let (a, va) = operand::<T>(la, (count, case.shared.0, align), case.seed);
    let (b, vb) = operand::<T>(lb, (count, case.shared.1, align), case.seed ^ 0x9e37);
    let (c, vc) = operand::<T>(lc, (count, false, align), case.seed ^ 0x5151);
    let c0: Vec<Vec<O>> = c.iter().map(|x| case.c_before::<T, O>(x)).collect();
    let vc: Vec<_> = vc.into_iter().map(|(_, v)| v).collect();
    let fail = |e: rgemm::Error| format!("{case:?} as a list: {e}");
    let scalars = (case.alpha, case.beta);
    let (ao, bo): (Operands<T>, Operands<T>) = ((&a, &va), (&b, &vb));
    let got = backend
        .gemm_batched::<T, O>(kernel, scalars, ao, bo, (&c0, &vc))
        .map_err(fail)?;
    for z in 0..count {
        let (xa, xb) = (&a[va[z].0], &b[vb[z].0]);
        let layouts = (va[z].1, vb[z].1, vc[z]);
        let mut want = c0[z].clone();
        rgemm::gemm_reference(
            scalars,
            &MatrixView::new(xa, layouts.0).map_err(fail)?,
            &MatrixView::new(xb, layouts.1).map_err(fail)?,
            &mut MatrixViewMut::new(&mut want, layouts.2).map_err(fail)?,
            Batch::ONE,
        )
        .map_err(fail)?;
        compare::<T, O>(
            case,
            (xa, xb),
            (&c0[z], &got[z], &want),
            layouts,
            Batch::ONE,
            Under::from(kernel).arith::<T>(),
        )
        .map_err(|e| format!("product {z} of {count}: {e}"))?;
    }
    Ok(())
}

/// Runs `cases` random lists on `backend` with `kernel` (`None`: the GPU's rule).
pub fn property<T: Element, O: Output<T>>(
    backend: &Backend,
    kernel: Option<Kernel>,
    (cases, max_side): (u32, usize),
    general: bool,
) -> Result<(), String> {
    crate::run_cases(cases, &case(max_side, true, general), |case| {
        one::<T, O>(backend, kernel, &case)
    })
}

/// The list trials of one pairing of input and C types on one backend: every kernel that
/// runs batches and reads operands through pointers (not the TMA kernels, which take one
/// address per operand), in every form it computes (`general_cases`; plain lists,
/// `plain_cases`, for the kernels without the general forms); with `auto`, the backend's
/// own choice too.
pub fn trials<T: Element, O: Output<T>>(
    make: MakeTrial,
    (general_cases, plain_cases, max_side): (u32, u32, usize),
    auto: bool,
) -> Vec<libtest_mimic::Trial> {
    let trial = |kernel: Option<Kernel>, general: bool| {
        let name = format!(
            "forms::lists::{}::{}",
            Under::from(kernel).name(),
            O::SUFFIX
        );
        let cases = if general { general_cases } else { plain_cases };
        let test = move |be: &Backend| property::<T, O>(be, kernel, (cases, max_side), general);
        make(name, Box::new(test))
    };
    let through_pointers = batched_kernels::<T>()
        .into_iter()
        .filter(|k| k.spec().tma.is_none());
    let mut out: Vec<_> = through_pointers
        .map(|kernel| trial(Some(kernel), kernel.spec().strided))
        .collect();
    if auto {
        out.push(trial(None, true));
    }
    out
}

/// Runs a list of f32 products (A's, B's and C's views over buffers of their own, `lens`
/// elements each) on `kernel`, expecting an error that `want` accepts, and every C as it
/// was.
fn expect_error(
    be: &Backend,
    kernel: Option<Kernel>,
    (la, lb, lc): (&[MatrixLayout], &[MatrixLayout], &[MatrixLayout]),
    lens: (usize, usize, usize),
    want: fn(&rgemm::Error) -> bool,
) -> Result<(), String> {
    let list = |views: &[MatrixLayout], len: usize, seed: u64| {
        let buffers: Vec<Vec<f32>> = (0..views.len())
            .map(|z| rgemm::internals::random_buffer(len, seed + z as u64))
            .collect();
        let views: Vec<_> = views.iter().copied().enumerate().collect();
        (buffers, views)
    };
    let (a, b) = (list(la, lens.0, 1), list(lb, lens.1, 10));
    let c = list(lc, lens.2, 20).0;
    match be.gemm_batched::<f32, f32>(kernel, (1.0, 0.0), (&a.0, &a.1), (&b.0, &b.1), (&c, lc)) {
        Err(e) if want(&e) => Ok(()),
        Err(e) => Err(format!("unexpected error: {e}")),
        Ok(out) if out == c => Err("no error".into()),
        Ok(_) => Err("no error, and C changed".into()),
    }
}

/// The bad lists, each a typed error before any work, C untouched.
pub fn error_cases() -> Vec<crate::forms::ErrorCase> {
    use rgemm::Error;
    const K: Option<Kernel> = Some(Kernel::Tiled16);
    const fn rm(rows: usize, cols: usize) -> MatrixLayout {
        MatrixLayout::row_major(rows, cols)
    }
    const A: MatrixLayout = rm(4, 8);
    const B: MatrixLayout = rm(8, 4);
    const C: MatrixLayout = rm(4, 4);
    vec![
        ("lists_error::lists_of_different_lengths", |be| {
            expect_error(be, K, (&[A, A], &[B, B], &[C, C, C]), (64, 64, 64), |e| {
                matches!(e, Error::BatchMismatch { .. })
            })
        }),
        (
            "lists_error::products_of_different_leading_dimensions",
            |be| {
                expect_error(
                    be,
                    K,
                    (&[A, A.with_ld(9)], &[B, B], &[C, C]),
                    (64, 64, 64),
                    |e| matches!(e, Error::BatchMismatch { .. }),
                )
            },
        ),
        ("lists_error::products_of_different_shapes", |be| {
            expect_error(
                be,
                K,
                (&[A, rm(4, 7)], &[B, rm(7, 4)], &[C, C]),
                (64, 64, 64),
                |e| matches!(e, Error::BatchMismatch { .. }),
            )
        }),
        ("lists_error::a_product_past_its_buffer", |be| {
            expect_error(
                be,
                K,
                (&[A, A, A.at(40)], &[B, B, B], &[C, C, C]),
                (64, 64, 64),
                |e| {
                    matches!(
                        e,
                        Error::ViewOutOfBounds {
                            needs: 72,
                            len: 64,
                            ..
                        }
                    )
                },
            )
        }),
        ("lists_error::a_tensor_map_kernel", |be| {
            expect_error(
                be,
                Some(Kernel::WgmmaTf32),
                (&[A, A], &[B, B], &[C, C]),
                (64, 64, 64),
                |e| matches!(e, Error::UnsupportedForm { .. }),
            )
        }),
        (
            "lists_error::an_unaligned_product_on_a_plain_kernel",
            |be| {
                // `coarse` reads dense products that start 16-byte aligned.
                expect_error(
                    be,
                    Some(Kernel::Coarse),
                    (&[A, A.at(1)], &[B, B], &[C, C]),
                    (64, 64, 64),
                    |e| matches!(e, Error::UnsupportedForm { .. }),
                )
            },
        ),
    ]
}
