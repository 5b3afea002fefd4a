//! The general product's benchmark: transposes, a column-major C, alpha/beta and strided
//! batches, each against cuBLAS's `gemmStridedBatchedEx` on the same views in the same run
//! (medians of 10 after 3 warm-ups, CUDA events), and the host time of the first product
//! of a new shape (the kernel chosen by rule, no timing).
//!
//! `rgemm-forms [--csv PATH] [--device N]`: a markdown table on stdout, the same rows as
//! CSV to the file.
mod common;

use clap::Parser;
use rgemm::{Batch, Context, Cublas, Element, Kernel, Matrix, MatrixLayout, Output};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "The general product's forms against cuBLAS on one GPU",
    long_about = "The general product's forms against cuBLAS on one GPU: transposed A and B, \
        a column-major C, alpha and beta, and strided batches, each timed against \
        cublasGemmStridedBatchedEx on the same views (medians of 10 after 3 warm-ups, CUDA \
        events); then the rule's kernel choice against the tuner's on the same shapes, and \
        the host time of the first call of a new shape. Prints markdown tables; --csv also \
        writes the rows as CSV.\n\n\
        Exit status: 0 done, 1 a step failed, 2 usage error or no GPU."
)]
struct Args {
    #[command(flatten)]
    target: common::Target,
}

/// A plain product's M, N and K, and the count of its batch.
type Shape = (usize, usize, usize, usize);

/// One form of a product: its views (logical `op(A)`, `op(B)`, C), scalars and batch.
struct Form {
    name: String,
    mnk: (usize, usize, usize),
    ta: bool,
    tb: bool,
    c_col: bool,
    scalars: (f64, f64),
    batch: usize,
}

/// Times `form` with `kernel` (None: the rule's choice) and with cuBLAS; returns (kernel
/// that ran, ours ms, cuBLAS ms, max relative difference).
fn run<T: Element, O: Output<T>>(
    ctx: &Context,
    blas: &Cublas,
    form: &Form,
    kernel: Option<Kernel>,
) -> rgemm::Result<(String, f64, f64, f64)> {
    let (m, n, k) = form.mnk;
    let view = |rows: usize, cols: usize, t: bool| match t {
        false => MatrixLayout::row_major(rows, cols),
        true => MatrixLayout::row_major(cols, rows).t(),
    };
    let (la, lb) = (view(m, k, form.ta), view(k, n, form.tb));
    let lc = match form.c_col {
        false => MatrixLayout::row_major(m, n),
        true => MatrixLayout::col_major(m, n),
    };
    let count = form.batch;
    let one = |l: &MatrixLayout| l.extent().unwrap_or(0);
    let (sa, sb, sc) = (one(&la), one(&lb), one(&lc));
    let up = |len: usize, seed: u64| ctx.upload(&Matrix::<T>::random(1, len.max(1), seed)?);
    let (da, db) = (up(sa * count, 1)?, up(sb * count, 2)?);
    let c0 = Matrix::<O>::from_fn(1, (sc * count).max(1), |_, j| {
        O::from_f64((j % 7) as f64 / 7.0)
    })?;
    let (mut ours, mut theirs) = (ctx.upload(&c0)?, ctx.upload(&c0)?);
    let batch = Batch::strided(count, (sa, sb, sc));
    let (alpha, beta) = common::scalars::<T>(form.scalars);
    let mut ran = String::new();
    let mut call = |c: &mut rgemm::DeviceMatrix<O>| -> rgemm::Result<()> {
        let mut g = ctx
            .gemm(da.view_as(la)?, db.view_as(lb)?, c.view_mut_as(lc)?)
            .alpha(alpha)
            .beta(beta)
            .batch(batch);
        if let Some(kernel) = kernel {
            g = g.kernel(kernel);
        }
        common::note_kernel(g.run()?, &mut ran);
        Ok(())
    };
    let cublas = common::cublas_into(blas, (alpha, beta), (&da, la), (&db, lb), (lc, batch));
    // One product each from the same C for the comparison, then the timings.
    call(&mut ours)?;
    cublas(&mut theirs)?;
    let (x, y) = (ctx.download(&ours)?, ctx.download(&theirs)?);
    let scale = y
        .as_slice()
        .iter()
        .map(|v| v.to_f64().abs())
        .fold(0.0, f64::max);
    let diff = x
        .as_slice()
        .iter()
        .zip(y.as_slice())
        .map(|(a, b)| (a.to_f64() - b.to_f64()).abs())
        .fold(0.0, f64::max)
        / scale.max(f64::MIN_POSITIVE);
    let ms = common::median_ms(ctx, 10, || call(&mut ours))?;
    let cublas_ms = common::median_ms(ctx, 10, || cublas(&mut theirs))?;
    Ok((ran, ms, cublas_ms, diff))
}

/// Times the plain product `m x n x k` (a batch of `count`) as `ctx` chooses its kernel,
/// and cuBLAS on the same buffers: (kernel, ms, cuBLAS ms).
fn chosen<T: Element, O: Output<T>>(
    ctx: &Context,
    (m, n, k, count): Shape,
) -> rgemm::Result<(String, f64, f64)> {
    let blas = Cublas::new(ctx)?;
    let (la, lb, lc) = (
        MatrixLayout::row_major(m, k),
        MatrixLayout::row_major(k, n),
        MatrixLayout::row_major(m, n),
    );
    let (sa, sb, sc) = (m * k, k * n, m * n);
    let a = ctx.upload(&Matrix::<T>::random(1, sa * count, 1)?)?;
    let b = ctx.upload(&Matrix::<T>::random(1, sb * count, 2)?)?;
    let mut c = ctx.zeros::<O>(1, sc * count)?;
    let batch = Batch::strided(count, (sa, sb, sc));
    let mut ran = String::new();
    let mut call = |c: &mut rgemm::DeviceMatrix<O>| -> rgemm::Result<()> {
        let g = ctx
            .gemm(a.view_as(la)?, b.view_as(lb)?, c.view_mut_as(lc)?)
            .batch(batch);
        common::note_kernel(g.run()?, &mut ran);
        Ok(())
    };
    call(&mut c)?; // the rule, or the tuner's timing on scratch buffers
    let ms = common::median_ms(ctx, 10, || call(&mut c))?;
    let one = common::scalars::<T>((1.0, 0.0));
    let cublas = common::cublas_into(&blas, one, (&a, la), (&b, lb), (lc, batch));
    let cublas = common::median_ms(ctx, 10, || cublas(&mut c))?;
    Ok((ran, ms, cublas))
}

/// Times each of `shapes` with the rule's choice (`ctx`) and the tuner's (`tuned`), and
/// hands both to `row`.
fn rule_and_tuned<T: Element, O: Output<T>>(
    (ctx, tuned): (&Context, &Context),
    shapes: impl IntoIterator<Item = Shape>,
    mut row: impl FnMut(Shape, (String, f64, f64), (String, f64, f64)),
) -> rgemm::Result<()> {
    for shape in shapes {
        row(
            shape,
            chosen::<T, O>(ctx, shape)?,
            chosen::<T, O>(tuned, shape)?,
        );
    }
    Ok(())
}

/// The shapes (M, N, K, batch) on which the rule's choice is timed against the tuner's, and
/// the types each is timed in.
const RULE_SHAPES: [(Shape, &[&str]); 27] = [
    ((1024, 1024, 1024, 1), &["f32", "f64", "bf16"]),
    ((2048, 2048, 2048, 1), &["f32"]),
    ((4096, 4096, 4096, 1), &["f32", "f64", "bf16"]),
    ((8192, 8192, 8192, 1), &["f32"]),
    ((4096, 4096, 14336, 1), &["f32", "f64", "bf16"]),
    ((3001, 2999, 1234, 1), &["f32"]),
    ((1000, 1000, 1000, 1), &["f32"]),
    ((2000, 2000, 2000, 1), &["f32"]),
    ((3000, 3000, 3000, 1), &["f32"]),
    ((1000, 1000, 4096, 1), &["f32"]),
    ((32, 4096, 4096, 1), &["f32"]),
    ((48, 4096, 4096, 1), &["f32"]),
    ((64, 4096, 4096, 1), &["f32", "f64", "bf16"]),
    ((96, 4096, 4096, 1), &["f32"]),
    ((128, 4096, 4096, 1), &["f32"]),
    ((16, 4096, 4096, 1), &["f32", "f64", "bf16"]),
    ((8, 4096, 4096, 1), &["f32"]),
    ((4, 4096, 4096, 1), &["f32"]),
    ((1, 4096, 4096, 1), &["f32", "bf16"]),
    ((4096, 300, 4096, 1), &["f32"]),
    ((4096, 512, 4096, 1), &["f32"]),
    ((4096, 16, 4096, 1), &["f32", "f64", "bf16"]),
    ((4096, 64, 4096, 1), &["f32", "f64"]),
    ((2048, 16, 2048, 1), &["f32"]),
    ((8192, 64, 8192, 1), &["f64"]),
    ((128, 128, 128, 512), &["f32", "bf16"]),
    ((512, 512, 512, 64), &["f32", "f64", "bf16"]),
];

/// The rule's choice against the tuner's on the same shapes, each against cuBLAS.
fn rule_against_tuned(
    ctx: &Context,
    tuned: &Context,
    md: &mut String,
    csv: &mut String,
) -> rgemm::Result<()> {
    let _ = writeln!(
        md,
        "\nThe rule's choice (no timing) against the tuner's (timed on scratch buffers), same shapes, same run:\n"
    );
    let _ = writeln!(
        md,
        "| type | M x N x K | batch | rule | TFLOP/s | tuned | TFLOP/s | rule / tuned | cuBLAS TFLOP/s | rule % cuBLAS |"
    );
    let _ = writeln!(md, "|---|---|---:|---|---:|---|---:|---:|---:|---:|");
    let mut one = |ty: &str, shape: Shape, r: (String, f64, f64), t: (String, f64, f64)| {
        let (m, n, k, count) = shape;
        let flops = 2.0 * (m * n * k * count) as f64;
        let tf = |ms: f64| flops / ms / 1e9;
        let ratio = 100.0 * t.1 / r.1;
        let pct = 100.0 * r.2 / r.1;
        let _ = writeln!(
            md,
            "| {ty} | {m}x{n}x{k} | {count} | {} | {:.1} | {} | {:.1} | {ratio:.1}% | {:.1} | {pct:.1}% |",
            r.0,
            tf(r.1),
            t.0,
            tf(t.1),
            tf(r.2)
        );
        let _ = writeln!(
            csv,
            "{ty},rule vs tuned,{m}x{n}x{k},{count},{},{:.4},{:.2},{:.4},{:.2},{pct:.1},tuned {} {:.4} ({ratio:.1}%)",
            r.0,
            r.1,
            tf(r.1),
            r.2,
            tf(r.2),
            t.0,
            t.1
        );
    };
    let pair = (ctx, tuned);
    let shapes = |ty: &'static str| {
        (RULE_SHAPES.iter())
            .filter(move |(_, types)| types.contains(&ty))
            .map(|&(shape, _)| shape)
    };
    rule_and_tuned::<f32, f32>(pair, shapes("f32"), |s, r, t| one("f32", s, r, t))?;
    rule_and_tuned::<f64, f64>(pair, shapes("f64"), |s, r, t| one("f64", s, r, t))?;
    rule_and_tuned::<rgemm::bf16, f32>(pair, shapes("bf16"), |s, r, t| one("bf16", s, r, t))?;
    Ok(())
}

fn forms_of(s: usize) -> Vec<Form> {
    let f = |name: &str, (ta, tb, c_col): (bool, bool, bool), scalars| Form {
        name: name.into(),
        mnk: (s, s, s),
        ta,
        tb,
        c_col,
        scalars,
        batch: 1,
    };
    vec![
        f("C = A B", (false, false, false), (1.0, 0.0)),
        f("C = A^T B", (true, false, false), (1.0, 0.0)),
        f("C = A B^T", (false, true, false), (1.0, 0.0)),
        f("C = A^T B^T", (true, true, false), (1.0, 0.0)),
        f("col-major A, B, C", (true, true, true), (1.0, 0.0)),
        f("C = A B + C (beta 1)", (false, false, false), (1.0, 1.0)),
        f("C = 2 A B - 0.5 C", (false, false, false), (2.0, -0.5)),
    ]
}

fn main() -> ExitCode {
    let args = Args::parse();
    let device = args.target.device;
    common::measure("rgemm-forms", &args.target, |ctx| all_forms(ctx, device))
}

/// The forms against cuBLAS; the rule's tables add their rows to its CSV.
const FORMS: common::Table = common::Table {
    setup: "cuBLAS: cublasGemmStridedBatchedEx on the same views",
    titles: "| type | form | M x N x K | batch | kernel | ms | TFLOP/s | cuBLAS TFLOP/s | % cuBLAS | max rel. diff |",
    alignment: "|---|---|---|---:|---|---:|---:|---:|---:|---:|",
    columns: "type,form,shape,batch,kernel,ms,tflops,cublas_ms,cublas_tflops,pct_cublas,max_rel_diff",
};

/// Every table, printed as it is finished; returns the rows as CSV.
fn all_forms(ctx: &Context, device: usize) -> rgemm::Result<String> {
    let blas = Cublas::new(ctx)?;
    let (mut md, mut csv) = FORMS.start(ctx);
    let mut row = |ty: &str, form: &Form, r: (String, f64, f64, f64)| {
        let (m, n, k) = form.mnk;
        let flops = 2.0 * (m * n * k * form.batch) as f64;
        let (t, tc) = (flops / r.1 / 1e9, flops / r.2 / 1e9);
        let pct = 100.0 * r.2 / r.1;
        let _ = writeln!(
            md,
            "| {ty} | {} | {m}x{n}x{k} | {} | {} | {:.3} | {t:.1} | {tc:.1} | {pct:.1}% | {:.1e} |",
            form.name, form.batch, r.0, r.1, r.3
        );
        let _ = writeln!(
            csv,
            "{ty},{},{m}x{n}x{k},{},{},{:.4},{t:.2},{:.4},{tc:.2},{pct:.1},{:.2e}",
            form.name, form.batch, r.0, r.1, r.2, r.3
        );
    };
    for form in forms_of(4096) {
        for kernel in [
            None,
            Some(Kernel::PairedLanes),
            Some(Kernel::FragmentBufferedK16),
        ] {
            row("f32", &form, run::<f32, f32>(ctx, &blas, &form, kernel)?);
        }
    }
    for form in forms_of(4096) {
        for kernel in [None, Some(Kernel::WgmmaTma)] {
            let r = run::<rgemm::bf16, f32>(ctx, &blas, &form, kernel)?;
            row("bf16", &form, r);
        }
    }
    for form in forms_of(4096).into_iter().take(5) {
        row("f64", &form, run::<f64, f64>(ctx, &blas, &form, None)?);
    }
    let batched = |(count, s): (usize, usize), ta: bool| Form {
        name: if ta {
            "batched, A^T".into()
        } else {
            "batched".into()
        },
        mnk: (s, s, s),
        ta,
        tb: false,
        c_col: false,
        scalars: (1.0, 0.0),
        batch: count,
    };
    for shape in [(512, 128), (64, 512), (16, 1024)] {
        for ta in [false, true] {
            let form = batched(shape, ta);
            row("f32", &form, run::<f32, f32>(ctx, &blas, &form, None)?);
        }
        let form = batched(shape, false);
        row("f64", &form, run::<f64, f64>(ctx, &blas, &form, None)?);
        for kernel in [
            None,
            Some(Kernel::WgmmaPersistent),
            Some(Kernel::WgmmaTma),
            Some(Kernel::WgmmaAsync),
        ] {
            let r = run::<rgemm::bf16, f32>(ctx, &blas, &form, kernel)?;
            row("bf16", &form, r);
        }
        let form = batched(shape, true);
        let r = run::<rgemm::bf16, f32>(ctx, &blas, &form, None)?;
        row("bf16", &form, r);
    }
    let tuned = Context::new(device)?;
    tuned.set_tuning(true);
    rule_against_tuned(ctx, &tuned, &mut md, &mut csv)?;
    print!("{md}");
    println!(
        "\nTuned choices (`Context::tuning_text`):\n{}",
        tuned.tuning_text()
    );
    // The first product of new shapes: host time of the call (queueing included; the
    // kernel's module was loaded by the rows above).
    println!("\nFirst call of a new shape (the rule's choice, no timing), host time of `run()`:");
    let a = ctx.upload(&Matrix::<f32>::random(4096, 4096, 5)?)?;
    let mut c = ctx.zeros::<f32>(4096, 4096)?;
    for (m, n, k) in [
        (3001, 2999, 1234),
        (77, 4096, 4096),
        (4096, 300, 4096),
        (4096, 16, 4096),
        (1000, 1000, 1000),
    ] {
        let av = a.view().sub(0, 0, m, k)?;
        let bv = a.view().sub(0, 0, k, n)?;
        let cv = c.view_mut().sub(0, 0, m, n)?;
        let start = Instant::now();
        let plan = ctx.gemm(av, bv, cv).run()?;
        let us = start.elapsed().as_secs_f64() * 1e6;
        let kernel = plan.map(|p| p.kernel.to_string()).unwrap_or_default();
        println!("  {m}x{n}x{k}: {us:.0} us ({kernel})");
    }
    ctx.synchronize()?;
    Ok(csv)
}
