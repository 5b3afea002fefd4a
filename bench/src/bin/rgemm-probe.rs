//! One product, one kernel, against cuBLAS, timed two ways: the tables' way (CUDA events
//! around each call, medians after warm-ups: the host's work for the call is inside the
//! events, as it is for a caller who waits for each product) and back to back (200 calls
//! queued, then one wait: the GPU's rate once the host runs ahead). For short kernels the
//! two differ: cuBLAS's host work per strided-batched call was 10-16 us on the H200's host,
//! ours 4-6 us, so event timings of a 20-30 us kernel flatter the slower host.
//!
//! `rgemm-probe bf16 128 128 128 --batch 512 --kernel wgmma_persistent --beta 1`
// The probe writes no CSV file: it uses only `common::gpu`.
#[allow(dead_code)]
mod common;

use clap::Parser;
use rgemm::{Batch, Context, Cublas, Element, Kernel, Matrix, MatrixLayout};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "One product (row-major or B transposed, a strided batch) with one kernel against cuBLAS",
    long_about = "One product (row-major, a strided batch) with one kernel against cuBLAS, \
        timed two ways: CUDA events around each call (medians after warm-ups, as the tables \
        time, the host's work for the call inside) and back to back (200 calls queued, then \
        one wait: the GPU's rate once the host runs ahead). Prints one line.\n\n\
        Exit status: 0 done, 1 a step failed, 2 usage error or no GPU.",
    after_help = "Example: rgemm-probe bf16 128 128 128 --batch 512 --kernel wgmma_persistent --beta 1"
)]
struct Args {
    /// Element type (16-bit inputs write an f32 C).
    #[arg(value_parser = ["f32", "f64", "bf16", "f16"])]
    ty: String,
    /// Rows of C.
    m: usize,
    /// Columns of C.
    n: usize,
    /// The inner dimension.
    k: usize,
    /// Products in the strided batch.
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// The kernel (names as in the README); the rule's choice if absent.
    #[arg(long)]
    kernel: Option<Kernel>,
    /// Timed calls (the median is reported).
    #[arg(long, default_value_t = 20)]
    reps: usize,
    /// C = A B + beta C.
    #[arg(long, default_value_t = 0.0)]
    beta: f64,
    /// B stored `n x k` and read transposed (a layer's weights as stored).
    #[arg(long)]
    b_transposed: bool,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
}

fn probe<T: Element>(ctx: &Context, args: &Args) -> rgemm::Result<()> {
    let (m, n, k, count) = (args.m, args.n, args.k, args.batch);
    let (one, beta) = common::scalars::<T>((1.0, args.beta));
    let blas = Cublas::new(ctx)?;
    let (la, lb, lc) = (
        MatrixLayout::row_major(m, k),
        match args.b_transposed {
            true => MatrixLayout::row_major(n, k).t(),
            false => MatrixLayout::row_major(k, n),
        },
        MatrixLayout::row_major(m, n),
    );
    let a = ctx.upload(&Matrix::<T>::random(1, (m * k * count).max(1), 1)?)?;
    let b = ctx.upload(&Matrix::<T>::random(1, (k * n * count).max(1), 2)?)?;
    let mut c = ctx.zeros::<T::Out>(1, (m * n * count).max(1))?;
    let mut c2 = ctx.zeros::<T::Out>(1, (m * n * count).max(1))?;
    let batch = Batch::strided(count, (m * k, k * n, m * n));
    let mut ran = String::from("?");
    let mut ours = || -> rgemm::Result<()> {
        let mut g = ctx
            .gemm(a.view_as(la)?, b.view_as(lb)?, c.view_mut_as(lc)?)
            .batch(batch)
            .beta(beta);
        if let Some(kernel) = args.kernel {
            g = g.kernel(kernel);
        }
        if let Some(plan) = g.run()? {
            ran = format!("{} (grid {})", plan.kernel, plan.grid.0);
        }
        Ok(())
    };
    // Both ways: the median ms with events, and the us a call back to back.
    let two_ways = |f: &mut dyn FnMut() -> rgemm::Result<()>| -> rgemm::Result<(f64, f64)> {
        let events = common::median_ms(ctx, args.reps, &mut *f)?;
        for _ in 0..5 {
            f()?;
        }
        ctx.synchronize()?;
        let start = std::time::Instant::now();
        for _ in 0..200 {
            f()?;
        }
        ctx.synchronize()?;
        Ok((events, start.elapsed().as_secs_f64() * 1e6 / 200.0))
    };
    let (t_ours, q_ours) = two_ways(&mut ours)?;
    let cublas = common::cublas_into(&blas, (one, beta), (&a, la), (&b, lb), (lc, batch));
    let mut theirs = || cublas(&mut c2);
    let (t_blas, q_blas) = two_ways(&mut theirs)?;
    let flops = 2.0 * (m * n * k * count) as f64;
    println!(
        "{} {count} x {m}x{n}x{k}{} beta {} {ran}: {t_ours:.4} ms {:.1} TFLOP/s, cuBLAS {t_blas:.4} ms {:.1}, {:.1}% | back to back {q_ours:.1} against {q_blas:.1} us a call, {:.1}%",
        T::NAME,
        if args.b_transposed { " B^T" } else { "" },
        args.beta,
        flops / t_ours / 1e9,
        flops / t_blas / 1e9,
        100.0 * t_blas / t_ours,
        100.0 * q_blas / q_ours,
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let ctx = match common::gpu("rgemm-probe", args.device) {
        Ok(ctx) => ctx,
        Err(code) => return code,
    };
    let result = match args.ty.as_str() {
        "f32" => probe::<f32>(&ctx, &args),
        "f64" => probe::<f64>(&ctx, &args),
        "bf16" => probe::<rgemm::bf16>(&ctx, &args),
        // (f16: clap took only the four names.)
        _ => probe::<rgemm::f16>(&ctx, &args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rgemm-probe: {e}");
            ExitCode::FAILURE
        }
    }
}
