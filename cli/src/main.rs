//! rgemm's main job: multiplies random matrices with every kernel and with cuBLAS on the
//! same inputs, checks each against cuBLAS and prints a table (shape, kernel, time,
//! TFLOP/s, % of cuBLAS). With no arguments it runs its embedded default.
//!
//! Without a GPU (or with `--cpu`) it says so and runs the same kernels on the CPU
//! executor at small sizes, checked against the CPU reference instead of cuBLAS.
use clap::Parser;
use rgemm::timing::{median, time_ms};
use rgemm::{Context, CpuExecutor, Cublas, DeviceMatrix, Element, Kernel, Matrix, Scalar};
use std::process::ExitCode;
use std::time::Instant;

/// The embedded default: square sizes up to 4096 and one rectangular shape.
const DEFAULT_SHAPES: &str = "1024,2048,4096,4096x1024x2048";
/// The CPU executor's default: small, with edges that are no tile multiple.
const CPU_SHAPES: [(usize, usize, usize); 3] = [(64, 64, 64), (96, 80, 112), (128, 128, 128)];

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Times rgemm's Rust kernels against cuBLAS on one GPU"
)]
struct Args {
    /// Shapes: `S` for S x S x S, or `MxNxK` (C is M x N, the inner dimension K).
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_SHAPES)]
    shapes: Vec<String>,
    /// Element types: f32, f64, f16, bf16.
    #[arg(long, value_delimiter = ',', default_value = "f32,f64,f16,bf16")]
    types: Vec<String>,
    /// Timed repetitions per kernel (the median is reported).
    #[arg(long, default_value_t = 10)]
    reps: usize,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Run on the CPU executor even if a GPU is present (small default shapes).
    #[arg(long)]
    cpu: bool,
}

struct Row {
    shape: (usize, usize, usize),
    dtype: &'static str,
    kernel: String,
    chosen: bool,
    ms: f64,
    /// cuBLAS on the same inputs; none on the CPU executor.
    cublas_ms: Option<f64>,
    rel_err: f64,
    ok: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(shapes) = args
        .shapes
        .iter()
        .map(|s| rgemm::parse_shape(s))
        .collect::<Option<Vec<_>>>()
    else {
        eprintln!("rgemm: shapes are S or MxNxK, got {:?}", args.shapes);
        return ExitCode::from(2);
    };
    let ctx = match (args.cpu, Context::new(args.device)) {
        (false, Ok(ctx)) => Some(ctx),
        (true, _) => None,
        (false, Err(e)) => {
            println!("rgemm: NO GPU ({e}).");
            None
        }
    };
    let result = match &ctx {
        Some(ctx) => run(ctx, &args, &shapes),
        None => {
            println!(
                "rgemm: running the same Rust kernels on the CPU EXECUTOR instead, at small sizes \
                 {CPU_SHAPES:?}, checked against the CPU reference; times are CPU times, not GPU times, and there is no cuBLAS."
            );
            run_cpu(&args)
        }
    };
    match result {
        Ok(rows) => {
            match &ctx {
                Some(ctx) => print_header(ctx.props()),
                None => print_header(&CpuExecutor::new().props()),
            }
            print_table(&rows);
            if rows.iter().all(|r| r.ok) {
                ExitCode::SUCCESS
            } else {
                let against = match ctx {
                    Some(_) => "cuBLAS",
                    None => "the CPU reference",
                };
                eprintln!("rgemm: some kernels disagree with {against} (FAIL rows above)");
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("rgemm: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(ctx: &Context, args: &Args, shapes: &[(usize, usize, usize)]) -> rgemm::Result<Vec<Row>> {
    let blas = Cublas::new(ctx)?;
    let mut rows = Vec::new();
    for &shape in shapes {
        for t in &args.types {
            match t.as_str() {
                "f32" => rows.extend(run_shape::<f32>(ctx, &blas, args, shape)?),
                "f64" => rows.extend(run_shape::<f64>(ctx, &blas, args, shape)?),
                "f16" => rows.extend(run_shape::<rgemm::f16>(ctx, &blas, args, shape)?),
                "bf16" => rows.extend(run_shape::<rgemm::bf16>(ctx, &blas, args, shape)?),
                other => eprintln!("rgemm: unknown type {other}, skipped"),
            }
        }
    }
    Ok(rows)
}

fn run_cpu(args: &Args) -> rgemm::Result<Vec<Row>> {
    let cpu = CpuExecutor::new();
    let mut rows = Vec::new();
    for shape in CPU_SHAPES {
        for t in &args.types {
            match t.as_str() {
                "f32" => rows.extend(run_shape_cpu::<f32>(&cpu, args, shape)?),
                "f64" => rows.extend(run_shape_cpu::<f64>(&cpu, args, shape)?),
                "f16" => rows.extend(run_shape_cpu::<rgemm::f16>(&cpu, args, shape)?),
                "bf16" => rows.extend(run_shape_cpu::<rgemm::bf16>(&cpu, args, shape)?),
                other => eprintln!("rgemm: unknown type {other}, skipped"),
            }
        }
    }
    Ok(rows)
}

fn run_shape_cpu<T: Element>(
    cpu: &CpuExecutor,
    args: &Args,
    (m, n, k): (usize, usize, usize),
) -> rgemm::Result<Vec<Row>> {
    let seed = 0x5eed ^ (m * 31 + n * 7 + k) as u64;
    let a = Matrix::<T>::random(m, k, seed)?;
    let b = Matrix::<T>::random(k, n, seed + 1)?;
    let reference = rgemm::matmul_reference(&a, &b)?;
    let mut rows = Vec::new();
    let kernels = Kernel::FIXED.into_iter().chain([Kernel::TiledDynamic(16)]);
    for kernel in kernels.filter(|k| k.supports::<T>()) {
        let mut times = Vec::new();
        let mut c = None;
        for _ in 0..args.reps.clamp(1, 3) {
            let start = Instant::now();
            c = Some(cpu.matmul_with(&a, &b, kernel)?);
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let c = c.expect("at least one repetition");
        let err = rel_err(&c, &reference);
        rows.push(Row {
            shape: (m, n, k),
            dtype: T::NAME,
            kernel: kernel.to_string(),
            chosen: kernel == Kernel::Tiled16,
            ms: median(&times),
            cublas_ms: None,
            rel_err: err,
            ok: err <= limit_for::<T>(kernel, k),
        });
    }
    Ok(rows)
}

/// The largest error (as [`rel_err`] measures it) `kernel` may show at inner dimension `k`:
/// the accumulation's ([`rgemm::agreement_limit`]), and for the TF32 kernels, which round
/// every input to 10 bits (f32 runs on them only when asked), that rounding of each
/// product, grown over K as the accumulation's is.
fn limit_for<T: Element>(kernel: Kernel, k: usize) -> f64 {
    let rounding = kernel.spec().precision.product_error();
    rgemm::agreement_limit::<T>(k) + rounding * (k as f64).sqrt().max(1.0)
}

/// Largest |x - y| over the largest |y|: the error relative to the product's scale.
fn rel_err<T: Scalar, U: Scalar>(x: &Matrix<T>, y: &Matrix<U>) -> f64 {
    rgemm::max_relative_error(x.as_slice(), y.as_slice())
}

fn run_shape<T: Element>(
    ctx: &Context,
    blas: &Cublas,
    args: &Args,
    (m, n, k): (usize, usize, usize),
) -> rgemm::Result<Vec<Row>> {
    let seed = 0x5eed ^ (m * 31 + n * 7 + k) as u64;
    let a = ctx.upload(&Matrix::<T>::random(m, k, seed)?)?;
    let b = ctx.upload(&Matrix::<T>::random(k, n, seed + 1)?)?;
    let mut c_ref: DeviceMatrix<T::Out> = ctx.zeros(m, n)?;
    let cublas_ms = median(&time_ms(ctx, args.warmup, args.reps, || {
        blas.matmul(&a, &b, &mut c_ref)
    })?);
    let reference = ctx.download(&c_ref)?;

    // What matmul() picks for this shape (by rule, remembered).
    let chosen = ctx
        .matmul_device(&a, &b, &mut ctx.zeros::<T::Out>(m, n)?, None)?
        .kernel;
    let tile = ctx.textbook_kernel::<T>()?.spec().rows();
    let mut kernels = Kernel::FIXED.to_vec();
    kernels.push(Kernel::TiledDynamic(tile));
    // Those this device can launch for this type (the tensor-core kernels take 16-bit inputs).
    kernels.retain(|kernel| kernel.launches::<T>(ctx.props(), (m, n, k)).is_ok());
    let mut rows = Vec::new();
    for kernel in kernels {
        let mut c: DeviceMatrix<T::Out> = ctx.zeros(m, n)?;
        let ms = median(&time_ms(ctx, args.warmup, args.reps, || {
            ctx.matmul_device(&a, &b, &mut c, Some(kernel)).map(drop)
        })?);
        let err = rel_err(&ctx.download(&c)?, &reference);
        rows.push(Row {
            shape: (m, n, k),
            dtype: T::NAME,
            kernel: kernel.to_string(),
            chosen: kernel == chosen,
            ms,
            cublas_ms: Some(cublas_ms),
            rel_err: err,
            ok: err <= limit_for::<T>(kernel, k),
        });
    }
    Ok(rows)
}

fn print_header(p: &rgemm::DeviceProps) {
    if p.name.starts_with("CPU executor") {
        println!(
            "Device: {} (wall-clock medians; error against the f64 CPU reference)",
            p.name
        );
    } else {
        println!(
            "GPU: {} (compute capability {}.{}, {} SMs, {:.2} GHz, FP32 peak {:.1} TFLOP/s)",
            p.name,
            p.compute_capability.0,
            p.compute_capability.1,
            p.multiprocessors,
            p.clock_khz as f64 / 1e6,
            p.fp32_peak_flops() / 1e12
        );
        println!(
            "medians of timed repetitions (CUDA events); error = max|C - C_cuBLAS| / max|C_cuBLAS|"
        );
    }
    println!("* = the kernel matmul() chooses for this shape and type");
}

fn print_table(rows: &[Row]) {
    println!();
    println!(
        "| {:<16} | {:<4} | {:<14} | {:>9} | {:>8} | {:>10} | {:>8} | {:>5} |",
        "shape MxNxK", "type", "kernel", "time ms", "TFLOP/s", "% cuBLAS", "error", "check"
    );
    println!(
        "|{:-<18}|{:-<6}|{:-<16}|{:->11}|{:->10}|{:->12}|{:->10}|{:-<7}|",
        "", "", "", "", "", "", "", ""
    );
    let mut last: Option<((usize, usize, usize), &str)> = None;
    for r in rows {
        let (m, n, k) = r.shape;
        let flops = 2.0 * m as f64 * n as f64 * k as f64;
        let tflops = |ms: f64| flops / (ms * 1e-3) / 1e12;
        let shape = format!("{m}x{n}x{k}");
        if let (Some(cublas_ms), true) = (r.cublas_ms, last != Some((r.shape, r.dtype))) {
            println!(
                "| {:<16} | {:<4} | {:<14} | {:>9.3} | {:>8.2} | {:>10} | {:>8} | {:<5} |",
                shape,
                r.dtype,
                "cuBLAS",
                cublas_ms,
                tflops(cublas_ms),
                "100.0%",
                "-",
                "ref"
            );
        }
        last = Some((r.shape, r.dtype));
        let name = format!("{}{}", r.kernel, if r.chosen { " *" } else { "" });
        let share = r
            .cublas_ms
            .map_or("-".to_string(), |c| format!("{:.1}%", 100.0 * c / r.ms));
        let rate = if r.cublas_ms.is_some() {
            format!("{:.2}", tflops(r.ms))
        } else {
            format!("{:.5}", tflops(r.ms))
        };
        println!(
            "| {:<16} | {:<4} | {:<14} | {:>9.3} | {:>8} | {:>10} | {:>8.1e} | {:<5} |",
            shape,
            r.dtype,
            name,
            r.ms,
            rate,
            share,
            r.rel_err,
            if r.ok { "ok" } else { "FAIL" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The main job on a machine without a GPU (the README's first command there): every
    /// kernel x type agrees with the CPU reference within its limit, the TF32 kernels
    /// included (they failed the FP32 limit).
    #[test]
    fn the_cpu_run_agrees_with_the_reference() {
        let args = Args::parse_from(["rgemm", "--cpu", "--reps", "1"]);
        let cpu = CpuExecutor::new();
        let mut rows = Vec::new();
        rows.extend(run_shape_cpu::<f32>(&cpu, &args, CPU_SHAPES[1]).unwrap());
        rows.extend(run_shape_cpu::<f64>(&cpu, &args, CPU_SHAPES[1]).unwrap());
        rows.extend(run_shape_cpu::<rgemm::bf16>(&cpu, &args, CPU_SHAPES[1]).unwrap());
        assert!(rows.iter().any(|r| r.kernel == "mma_tf32"));
        let bad: Vec<_> = rows.iter().filter(|r| !r.ok).map(|r| &r.kernel).collect();
        assert!(bad.is_empty(), "rows over their limit: {bad:?}");
    }

    /// TF32's rounding widens only the TF32 kernels' limit.
    #[test]
    fn only_tf32_kernels_get_a_wider_limit() {
        let k = 1024;
        let fp32 = rgemm::agreement_limit::<f32>(k);
        assert_eq!(limit_for::<f32>(Kernel::PairedLanes, k), fp32);
        assert!(limit_for::<f32>(Kernel::MmaTf32, k) > 1e-2);
        assert!(limit_for::<f32>(Kernel::Mma3xTf32, k) < fp32 + 1e-4);
    }
}
