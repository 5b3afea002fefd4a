//! Batches of independent views (`Context::gemm_batched`, cuBLAS's `gemmBatched`): each
//! product's A, B and C in buffers of their own, against cuBLAS's `cublasGemmBatchedEx`
//! on the same buffers (its pointer arrays copied with each call, as our table is), and
//! the same products as one strided batch (ours and cuBLAS's `gemmStridedBatchedEx`), so
//! the table's cost shows. One run; medians of 10 after 3 warm-ups, CUDA events; plus
//! the host time of one list call (`run()`: checks, table, queueing).
//!
//! `rgemm-lists [--csv PATH] [--device N]`: a markdown table on stdout, the same rows as
//! CSV to the file.
mod common;

use clap::Parser;
use rgemm::{Batch, Context, Cublas, DeviceMatrix, Element, Matrix, MatrixLayout, Output};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Batches of independent products (lists of views) against cuBLAS on one GPU",
    long_about = "Batches of independent products against cuBLAS on one GPU: each product's \
        A, B and C in buffers of their own (Context::gemm_batched) against \
        cublasGemmBatchedEx on the same buffers, and the same products as one strided batch \
        (ours and cublasGemmStridedBatchedEx), so the cost of the list shows; medians of 10 \
        after 3 warm-ups (CUDA events), plus the host time of one list call. Prints a \
        markdown table; --csv also writes the rows as CSV.\n\n\
        Exit status: 0 done, 1 a step failed, 2 usage error or no GPU."
)]
struct Args {
    #[command(flatten)]
    target: common::Target,
}

/// What one row measured: kernels (list, strided), ms of ours as a list, cuBLAS's list,
/// ours strided, cuBLAS strided, the max relative difference of our list from cuBLAS's,
/// and the median host time of one list call in microseconds.
struct Measured {
    kernel: String,
    strided_kernel: String,
    list: f64,
    cublas_list: f64,
    strided: f64,
    cublas_strided: f64,
    diff: f64,
    host_us: f64,
}

fn measure<T: Element, O: Output<T>>(
    ctx: &Context,
    blas: &Cublas,
    (count, s): (usize, usize),
    ta: bool,
) -> rgemm::Result<Measured> {
    let la = match ta {
        false => MatrixLayout::row_major(s, s),
        true => MatrixLayout::row_major(s, s).t(),
    };
    let l = MatrixLayout::row_major(s, s);
    let up = |seed: u64| ctx.upload(&Matrix::<T>::random(s, s, seed)?);
    let a: Vec<DeviceMatrix<T>> = (0..count).map(|z| up(z as u64)).collect::<Result<_, _>>()?;
    let b: Vec<DeviceMatrix<T>> = (0..count)
        .map(|z| up(1_000_000 + z as u64))
        .collect::<Result<_, _>>()?;
    let zeros = || {
        (0..count)
            .map(|_| ctx.zeros::<O>(s, s))
            .collect::<rgemm::Result<Vec<_>>>()
    };
    let (mut ours, mut theirs) = (zeros()?, zeros()?);
    let (one, zero) = common::scalars::<T>((1.0, 0.0));
    let mut kernel = String::new();
    let mut list = |c: &mut [DeviceMatrix<O>]| -> rgemm::Result<()> {
        let plan = ctx
            .gemm_batched(
                a.iter()
                    .map(|x| x.view_as(la))
                    .collect::<rgemm::Result<Vec<_>>>()?,
                b.iter().map(|x| x.view()),
                c.iter_mut().map(|x| x.view_mut()),
            )
            .run()?;
        common::note_kernel(plan, &mut kernel);
        Ok(())
    };
    let cublas_list = |c: &mut [DeviceMatrix<O>]| -> rgemm::Result<()> {
        let va = a
            .iter()
            .map(|x| x.view_as(la))
            .collect::<rgemm::Result<Vec<_>>>()?;
        let vb: Vec<_> = b.iter().map(|x| x.view()).collect();
        let mut vc: Vec<_> = c.iter_mut().map(|x| x.view_mut()).collect();
        blas.gemm_batched_views((one, zero), (&va, &vb), &mut vc)
    };
    list(&mut ours)?;
    cublas_list(&mut theirs)?;
    let mut scale = 0.0f64;
    let mut worst = 0.0f64;
    for (x, y) in ours.iter().zip(&theirs) {
        let (x, y) = (ctx.download(x)?, ctx.download(y)?);
        for (p, q) in x.as_slice().iter().zip(y.as_slice()) {
            scale = scale.max(q.to_f64().abs());
            worst = worst.max((p.to_f64() - q.to_f64()).abs());
        }
    }
    let ms_list = common::median_ms(ctx, 10, || list(&mut ours))?;
    let ms_cublas_list = common::median_ms(ctx, 10, || cublas_list(&mut theirs))?;
    // Host time of one list call: the checks, the table, the queueing.
    let mut host = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        list(&mut ours)?;
        host.push(start.elapsed().as_secs_f64() * 1e6);
    }
    ctx.synchronize()?;
    // The same products as one strided batch of consecutive matrices.
    let (sa, sb, sc) = (s * s, s * s, s * s);
    let big = |seed: u64| ctx.upload(&Matrix::<T>::random(1, count * s * s, seed)?);
    let (da, db) = (big(7)?, big(8)?);
    let mut dc = ctx.zeros::<O>(1, count * s * s)?;
    let batch = Batch::strided(count, (sa, sb, sc));
    let mut strided_kernel = String::new();
    let mut strided = |c: &mut DeviceMatrix<O>| -> rgemm::Result<()> {
        let g = ctx
            .gemm(da.view_as(la)?, db.view_as(l)?, c.view_mut_as(l)?)
            .batch(batch);
        common::note_kernel(g.run()?, &mut strided_kernel);
        Ok(())
    };
    let ms_strided = common::median_ms(ctx, 10, || strided(&mut dc))?;
    let cublas = common::cublas_into(blas, (one, zero), (&da, la), (&db, l), (l, batch));
    let ms_cublas_strided = common::median_ms(ctx, 10, || cublas(&mut dc))?;
    Ok(Measured {
        kernel,
        strided_kernel,
        list: ms_list,
        cublas_list: ms_cublas_list,
        strided: ms_strided,
        cublas_strided: ms_cublas_strided,
        diff: worst / scale.max(f64::MIN_POSITIVE),
        host_us: common::median(host),
    })
}

fn main() -> ExitCode {
    let args = Args::parse();
    common::measure("rgemm-lists", &args.target, run)
}

/// Lists against cuBLAS's and against one strided batch.
const LISTS: common::Table = common::Table {
    setup: "every product's A, B and C in buffers of their own; cuBLAS: cublasGemmBatchedEx on the same buffers (pointer arrays copied each call), and cublasGemmStridedBatchedEx on the same products as one strided batch",
    titles: "| type | form | batch | kernel (list) | TFLOP/s | cuBLAS gemmBatched TFLOP/s | % cuBLAS | strided (ours) TFLOP/s | cuBLAS strided TFLOP/s | list / strided | max rel. diff | host us / call |",
    alignment: "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    columns: "type,form,count,shape,kernel,list_ms,list_tflops,cublas_list_tflops,pct_cublas_list,strided_kernel,strided_tflops,cublas_strided_tflops,list_pct_of_strided,max_rel_diff,host_us",
};

/// The table, printed when finished; returns its rows as CSV.
fn run(ctx: &Context) -> rgemm::Result<String> {
    let blas = Cublas::new(ctx)?;
    let (mut md, mut csv) = LISTS.start(ctx);
    let mut row = |ty: &str, ta: bool, (count, s): (usize, usize), r: Measured| {
        let flops = 2.0 * (count * s * s * s) as f64;
        let t = |ms: f64| flops / ms / 1e9;
        let form = if ta { "C = A^T B" } else { "C = A B" };
        let pct = 100.0 * r.cublas_list / r.list;
        let of_strided = 100.0 * r.strided / r.list;
        let _ = writeln!(
            md,
            "| {ty} | {form} | {count} x {s}^3 | {} | {:.1} | {:.1} | {pct:.1}% | {:.1} ({}) | {:.1} | {of_strided:.1}% | {:.1e} | {:.0} |",
            r.kernel,
            t(r.list),
            t(r.cublas_list),
            t(r.strided),
            r.strided_kernel,
            t(r.cublas_strided),
            r.diff,
            r.host_us
        );
        let _ = writeln!(
            csv,
            "{ty},{form},{count},{s},{},{:.4},{:.2},{:.2},{pct:.1},{},{:.2},{:.2},{of_strided:.1},{:.2e},{:.1}",
            r.kernel,
            r.list,
            t(r.list),
            t(r.cublas_list),
            r.strided_kernel,
            t(r.strided),
            t(r.cublas_strided),
            r.diff,
            r.host_us
        );
    };
    for shape in [(512, 128), (64, 512), (16, 1024)] {
        for ta in [false, true] {
            row(
                "f32",
                ta,
                shape,
                measure::<f32, f32>(ctx, &blas, shape, ta)?,
            );
        }
        let r = measure::<rgemm::bf16, f32>(ctx, &blas, shape, false)?;
        row("bf16", false, shape, r);
        let r = measure::<rgemm::bf16, rgemm::bf16>(ctx, &blas, shape, false)?;
        row("bf16 (bf16 C)", false, shape, r);
        row(
            "f64",
            false,
            shape,
            measure::<f64, f64>(ctx, &blas, shape, false)?,
        );
    }
    print!("{md}");
    Ok(csv)
}
