//! rgemm's benchmark: every kernel of the progression (naive, tiled, coarse, register tiled,
//! vectorized, double buffered, warp tiled, ...) and cuBLAS on the same inputs, on one GPU,
//! in one run. Medians of timed repetitions after warm-up (CUDA events), each result checked
//! against cuBLAS. Writes a table (stdout, and `bench.md`), `bench.csv`, and pictures:
//! TFLOP/s against size per kernel, and a roofline. `--replot` redraws the pictures of a
//! recorded run without a GPU.
mod plots;

use clap::Parser;
use rgemm::internals::{median, time_ms};
use rgemm::{
    Context, Cublas, DeviceMatrix, DeviceProps, Element, Kernel, Matrix, Output, Precision, bf16,
    f16,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Every rgemm kernel against cuBLAS on one GPU: table, CSV, pictures",
    long_about = "Every rgemm kernel against cuBLAS on one GPU, in one run: the same random \
        inputs for each, medians of timed repetitions after warm-up (CUDA events), each \
        product checked against cuBLAS's. Prints a markdown table and a summary, and writes \
        bench.md, bench.csv and SVG pictures (TFLOP/s against size, a roofline per type) \
        into --out. With --replot CSV it measures nothing and needs no GPU: it redraws the \
        pictures of a recorded bench.csv (the GPU's name and memory bandwidth are read from \
        the report of the same name ending in .md, when there is one).\n\n\
        Exit status: 0 every kernel agrees, 1 some disagree or a step failed, 2 usage error \
        or no GPU."
)]
struct Args {
    /// Square sizes S (S x S x S).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "256,512,1024,2048,4096,8192"
    )]
    sizes: Vec<usize>,
    /// Shapes from practice, MxNxK (C is M x N, the inner dimension K) or S.
    #[arg(
        long,
        value_delimiter = ',',
        value_parser = shape_arg,
        default_value = "4096x4096x1024,8192x1024x8192,1x4096x4096,4096x1x4096"
    )]
    shapes: Vec<(usize, usize, usize)>,
    /// Element types: f32, f64, f16, bf16 (16-bit inputs accumulate in f32 and write C in
    /// f32; cuBLAS runs them on the tensor cores), f16_f16, bf16_bf16 (C in the input
    /// type, for us and for cuBLAS), and the f32 precisions asked for: tf32 (against
    /// cuBLAS's FAST_TF32 compute) and 3xtf32 (against SGEMM). Every f32 row also reports
    /// its error against an f64 product of the same inputs (cuBLAS DGEMM).
    #[arg(long, value_delimiter = ',', default_value = "f32,f64")]
    types: Vec<String>,
    /// Timed repetitions per kernel (the median is reported; at least 10 for the record).
    #[arg(long, default_value_t = 10, value_parser = at_least_one)]
    reps: usize,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Where bench.md, bench.csv and the pictures go.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
    /// Only these kernels (names as in the table), besides cuBLAS; all if none are given.
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Measure nothing: redraw the pictures of this recorded bench CSV into --out.
    #[arg(long, value_name = "CSV")]
    replot: Option<PathBuf>,
}

fn shape_arg(text: &str) -> Result<(usize, usize, usize), String> {
    rgemm::parse_shape(text).ok_or_else(|| "a shape is MxNxK or S, e.g. 4096x14336x4096".into())
}

fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("a whole number of at least 1".into()),
    }
}

/// The types the bench labels its rows with (a row's `dtype`), which are also the names
/// `--types` takes.
const LABELS: [&str; 8] = [
    "f32",
    "tf32",
    "3xtf32",
    "f64",
    "f16",
    "bf16",
    "f16_f16",
    "bf16_bf16",
];

/// One measurement.
#[derive(Clone, Debug)]
pub struct Record {
    pub dtype: &'static str,
    pub shape: (usize, usize, usize),
    /// A kernel's name, or "cuBLAS".
    pub kernel: String,
    pub ms: f64,
    pub cublas_ms: f64,
    /// Whether `matmul` chooses this kernel for this shape.
    pub chosen: bool,
    pub registers: u32,
    pub occupancy: f64,
    pub error: f64,
    /// Error against the f64 product of the same inputs (f32 inputs only; NaN otherwise).
    pub error_f64: f64,
    pub ok: bool,
    /// Global-memory bytes the kernel's tiling must move (model; see `bytes_moved`).
    pub bytes: f64,
}

impl Record {
    pub fn flops(&self) -> f64 {
        let (m, n, k) = self.shape;
        2.0 * m as f64 * n as f64 * k as f64
    }
    pub fn tflops(&self) -> f64 {
        self.flops() / (self.ms * 1e-3) / 1e12
    }
    /// Its speed as a share of cuBLAS's, %.
    pub fn pct_cublas(&self) -> f64 {
        100.0 * self.cublas_ms / self.ms
    }
    /// Its FLOP/s as a share of `peak` (FLOP/s), %.
    pub fn pct_peak(&self, peak: f64) -> f64 {
        100.0 * self.flops() / (self.ms * 1e-3) / peak
    }
}

/// The global-memory traffic a kernel's tiling implies (the textbook's model, caches
/// ignored): a block tile of BM x BN reads each element of A once per column of blocks and
/// each element of B once per row of blocks, and writes C once. The naive kernel reads two
/// elements per multiply-add. For cuBLAS, the minimum: each input once.
pub fn bytes_moved(kernel: Option<Kernel>, shape: (usize, usize, usize), size: usize) -> f64 {
    let (m, n, k, s) = (shape.0 as f64, shape.1 as f64, shape.2 as f64, size as f64);
    let reads = match kernel {
        None => m * k + k * n,
        Some(Kernel::Naive) => 2.0 * m * n * k,
        Some(kernel) => {
            let (bm, bn) = kernel.block_tile_for(shape.0, shape.1);
            m * k * (n / bn as f64).ceil() + k * n * (m / bm as f64).ceil()
        }
    };
    (reads + m * n) * s
}

/// The roof of each type: FP32 SIMT, the FP64 tensor cores (cuBLAS's DGEMM and `dmma`
/// run there), the dense 16-bit and TF32 tensor-core rates (3xTF32's useful FLOPs are a
/// third of what it executes).
fn peak(props: &DeviceProps, dtype: &str) -> f64 {
    match dtype {
        "f64" => props.fp64_tensor_peak_flops(),
        "tf32" | "3xtf32" => props.tf32_peak_flops(),
        "f16" | "bf16" | "f16_f16" | "bf16_bf16" => props.tensor16_peak_flops(),
        _ => props.fp32_peak_flops(),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(csv) = &args.replot {
        return match replot(csv, &args.out) {
            Ok(written) => {
                for path in written {
                    println!("wrote {}", path.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("rgemm-bench: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Err(e) = check_kernel_names(&args.kernels) {
        eprintln!("rgemm-bench: {e}");
        return ExitCode::from(2);
    }
    if let Some(unknown) = args.types.iter().find(|t| !LABELS.contains(&t.as_str())) {
        eprintln!(
            "rgemm-bench: type {unknown:?} is not benchmarked; the types are {}",
            LABELS.join(", ")
        );
        return ExitCode::from(2);
    }
    let ctx = match Context::new(args.device) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!(
                "rgemm-bench: no GPU to measure ({e}); the benchmark needs an NVIDIA GPU. Nothing was measured."
            );
            return ExitCode::from(2);
        }
    };
    // Before the run, so a directory that cannot be written costs no measurement.
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("rgemm-bench: cannot create {}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    let shapes: Vec<_> = args
        .sizes
        .iter()
        .map(|&s| (s, s, s))
        .chain(args.shapes.iter().copied())
        .collect();
    let mut records = Vec::new();
    for dtype in &args.types {
        let result = match dtype.as_str() {
            "f32" => measure_f32(&ctx, &args, &shapes, &mut records, Precision::Exact),
            "tf32" => measure_f32(&ctx, &args, &shapes, &mut records, Precision::Tf32),
            "3xtf32" => measure_f32(&ctx, &args, &shapes, &mut records, Precision::Tf32x3),
            "f64" => measure_type::<f64, f64>(&ctx, &args, &shapes, &mut records),
            "f16" => measure_type::<f16, f32>(&ctx, &args, &shapes, &mut records),
            "bf16" => measure_type::<bf16, f32>(&ctx, &args, &shapes, &mut records),
            "f16_f16" => measure_type::<f16, f16>(&ctx, &args, &shapes, &mut records),
            "bf16_bf16" => measure_type::<bf16, bf16>(&ctx, &args, &shapes, &mut records),
            other => {
                eprintln!(
                    "rgemm-bench: type {other} is not benchmarked (f32, tf32, 3xtf32, f64, f16, bf16, f16_f16, bf16_bf16)"
                );
                Ok(())
            }
        };
        if let Err(e) = result {
            eprintln!("rgemm-bench: {e}");
            return ExitCode::FAILURE;
        }
    }
    let report = report(ctx.props(), &records);
    print!("{report}");
    if let Err(e) = write_outputs(&args.out, ctx.props(), &report, &records) {
        eprintln!("rgemm-bench: {e}");
        return ExitCode::FAILURE;
    }
    println!(
        "wrote {}/bench.md, bench.csv and the pictures there",
        args.out.display()
    );
    if records.iter().all(|r| r.ok) {
        ExitCode::SUCCESS
    } else {
        eprintln!("rgemm-bench: some kernels disagree with cuBLAS (FAIL rows)");
        ExitCode::FAILURE
    }
}

/// Every name in `--kernels` is one of the benchmarked kernels (checked before a GPU is
/// opened, so a typo costs no run).
fn check_kernel_names(names: &[String]) -> Result<(), String> {
    match names
        .iter()
        .find(|name| !Kernel::FIXED.iter().any(|k| k.to_string() == **name))
    {
        None => Ok(()),
        Some(unknown) => {
            let known: Vec<_> = Kernel::FIXED.iter().map(|k| k.to_string()).collect();
            Err(format!(
                "no kernel named {unknown:?}; the kernels are {}",
                known.join(", ")
            ))
        }
    }
}

/// Every kernel and cuBLAS for inputs `T` and C of type `O`, labelled `O::SUFFIX`.
fn measure_type<T: Element, O: Output<T>>(
    ctx: &Context,
    args: &Args,
    shapes: &[(usize, usize, usize)],
    records: &mut Vec<Record>,
) -> rgemm::Result<()> {
    let yardstick =
        |blas: &Cublas, a: &DeviceMatrix<T>, b: &_, c: &mut DeviceMatrix<O>| blas.matmul(a, b, c);
    let label = (O::SUFFIX, Precision::Exact);
    measure(ctx, args, shapes, records, label, yardstick)
}

/// f32's kernels of `precision` against cuBLAS's counterpart ([`Cublas::matmul_f32_in`]),
/// labelled `f32`, `tf32` or `3xtf32`.
fn measure_f32(
    ctx: &Context,
    args: &Args,
    shapes: &[(usize, usize, usize)],
    records: &mut Vec<Record>,
    precision: Precision,
) -> rgemm::Result<()> {
    let label = match precision {
        Precision::Exact => "f32",
        other => other.name(),
    };
    let yardstick = |blas: &Cublas, a: &DeviceMatrix<f32>, b: &_, c: &mut DeviceMatrix<f32>| {
        blas.matmul_f32_in(a, b, c, precision)
    };
    measure(ctx, args, shapes, records, (label, precision), yardstick)
}

/// The f64 product of f32 inputs (cuBLAS DGEMM on their exact widening), for the error of
/// each f32 precision; `None` for other types.
fn f64_product<T: Element>(
    ctx: &Context,
    blas: &Cublas,
    a: &Matrix<T>,
    b: &Matrix<T>,
) -> rgemm::Result<Option<Matrix<f64>>> {
    if T::ELEM != rgemm::Elem::F32 {
        return Ok(None);
    }
    let widen = |m: &Matrix<T>| -> rgemm::Result<DeviceMatrix<f64>> {
        let wide: Vec<f64> = m.as_slice().iter().map(|x| x.to_f64()).collect();
        ctx.upload(&Matrix::from_vec(m.rows(), m.cols(), wide)?)
    };
    let (a64, b64) = (widen(a)?, widen(b)?);
    let mut c64: DeviceMatrix<f64> = ctx.zeros(a.rows(), b.cols())?;
    blas.matmul(&a64, &b64, &mut c64)?;
    Ok(Some(ctx.download(&c64)?))
}

/// Every kernel of `precision` for inputs `T` and C of type `O`, and `yardstick` (cuBLAS),
/// on the same inputs, each shape; rows labelled `label`.
fn measure<T: Element, O: Output<T>>(
    ctx: &Context,
    args: &Args,
    shapes: &[(usize, usize, usize)],
    records: &mut Vec<Record>,
    (label, precision): (&'static str, Precision),
    yardstick: impl Fn(
        &Cublas,
        &DeviceMatrix<T>,
        &DeviceMatrix<T>,
        &mut DeviceMatrix<O>,
    ) -> rgemm::Result<()>,
) -> rgemm::Result<()> {
    let blas = Cublas::new(ctx)?;
    for &(m, n, k) in shapes {
        let seed = (m * 31 + n * 7 + k) as u64;
        let (host_a, host_b) = (
            Matrix::<T>::random(m, k, seed)?,
            Matrix::<T>::random(k, n, seed + 1)?,
        );
        let (a, b) = (ctx.upload(&host_a)?, ctx.upload(&host_b)?);
        let exact = f64_product(ctx, &blas, &host_a, &host_b)?;
        let error_f64 = |c: &Matrix<O>| match &exact {
            Some(exact) => rgemm::max_relative_error(c.as_slice(), exact.as_slice()),
            None => f64::NAN,
        };
        let mut c_ref: DeviceMatrix<O> = ctx.zeros(m, n)?;
        let cublas_ms = median(&time_ms(ctx.stream(), args.warmup, args.reps, || {
            yardstick(&blas, &a, &b, &mut c_ref)
        })?);
        let reference = ctx.download(&c_ref)?;
        let mut c: DeviceMatrix<O> = ctx.zeros(m, n)?;
        let chosen = match ctx.matmul_device_in(&a, &b, &mut c, precision) {
            Ok(plan) => Some(plan.kernel),
            Err(rgemm::Error::UnsupportedPrecision { .. }) => None,
            Err(e) => return Err(e),
        };
        let size = std::mem::size_of::<T>();
        records.push(Record {
            dtype: label,
            shape: (m, n, k),
            kernel: "cuBLAS".into(),
            ms: cublas_ms,
            cublas_ms,
            chosen: false,
            registers: 0,
            occupancy: f64::NAN,
            error: 0.0,
            error_f64: error_f64(&reference),
            ok: true,
            bytes: bytes_moved(None, (m, n, k), size),
        });
        // Both sides round C to O once: up to one unit of O's last place apart; a TF32
        // precision adds its input rounding (its products' error, a few times over).
        let limit =
            rgemm::agreement_limit::<T>(k) + 2.0 * O::ROUNDING.0 + 8.0 * precision.product_error();
        let wanted = |k: &Kernel| args.kernels.is_empty() || args.kernels.contains(&k.to_string());
        let of_precision = |k: &Kernel| k.spec().precision == precision;
        for kernel in Kernel::FIXED
            .into_iter()
            .filter(wanted)
            .filter(of_precision)
        {
            if kernel.launch_config::<T>(ctx.props(), m, n, k).is_err() {
                continue;
            }
            let ms = median(&time_ms(ctx.stream(), args.warmup, args.reps, || {
                ctx.matmul_device(&a, &b, &mut c, Some(kernel)).map(drop)
            })?);
            let result = ctx.download(&c)?;
            let error = rgemm::max_relative_error(result.as_slice(), reference.as_slice());
            let occupancy = ctx.occupancy_for::<T, O>(kernel)?;
            records.push(Record {
                dtype: label,
                shape: (m, n, k),
                kernel: kernel.to_string(),
                ms,
                cublas_ms,
                chosen: Some(kernel) == chosen,
                registers: occupancy.resources.registers_per_thread,
                occupancy: occupancy.fraction,
                error,
                error_f64: error_f64(&result),
                ok: error <= limit,
                bytes: bytes_moved(Some(kernel), (m, n, k), size),
            });
        }
        eprintln!("measured {label} {m}x{n}x{k}");
    }
    Ok(())
}

/// A cell of the report's table: `value()` where the record has one, else "-".
fn cell(has: bool, value: impl FnOnce() -> String) -> String {
    if has { value() } else { "-".into() }
}

fn report(props: &DeviceProps, records: &[Record]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "GPU: {} ({} SMs, {:.2} GHz; FP32 peak {:.1}, FP64 SIMT peak {:.1}, FP64 tensor peak {:.1}, TF32 peak {:.0} TFLOP/s; memory {:.2} TB/s)",
        props.name,
        props.multiprocessors,
        props.clock_khz as f64 / 1e6,
        props.fp32_peak_flops() / 1e12,
        props.fp64_peak_flops() / 1e12,
        props.fp64_tensor_peak_flops() / 1e12,
        props.tf32_peak_flops() / 1e12,
        props.memory_bandwidth() / 1e12
    );
    let _ = writeln!(
        out,
        "medians of timed repetitions after warm-up, CUDA events; * = chosen by matmul() (by matmul_in() for tf32, 3xtf32); error = max|C - C_cuBLAS| / max|C_cuBLAS|; f64 error = max|C - C_f64| / max|C_f64| against an f64 product of the same f32 inputs"
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| type | shape MxNxK | kernel | ms | TFLOP/s | % cuBLAS | % peak | regs | occupancy | error | f64 error | check |"
    );
    let _ = writeln!(
        out,
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for r in records {
        let (m, n, k) = r.shape;
        let chosen = if r.chosen { " *" } else { "" };
        let of_peak = r.pct_peak(peak(props, r.dtype));
        let registers = cell(r.registers > 0, || r.registers.to_string());
        let occupancy = cell(!r.occupancy.is_nan(), || {
            format!("{:.0}%", 100.0 * r.occupancy)
        });
        let error_f64 = cell(!r.error_f64.is_nan(), || format!("{:.1e}", r.error_f64));
        let check = if r.ok { "ok" } else { "FAIL" };
        let _ = writeln!(
            out,
            "| {} | {m}x{n}x{k} | {}{chosen} | {:.3} | {:.2} | {:.1}% | {of_peak:.1}% | {registers} | {occupancy} | {:.1e} | {error_f64} | {check} |",
            r.dtype,
            r.kernel,
            r.ms,
            r.tflops(),
            r.pct_cublas(),
            r.error
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Summary (best kernel per shape; the kernel matmul() chose):"
    );
    let mut keys: Vec<(&str, (usize, usize, usize))> = Vec::new();
    for r in records {
        if !keys.contains(&(r.dtype, r.shape)) {
            keys.push((r.dtype, r.shape));
        }
    }
    for (dtype, shape) in keys {
        let rows: Vec<&Record> = records
            .iter()
            .filter(|r| r.dtype == dtype && r.shape == shape && r.kernel != "cuBLAS")
            .collect();
        let Some(best) = rows.iter().min_by(|a, b| a.ms.total_cmp(&b.ms)) else {
            continue;
        };
        let chosen = rows.iter().find(|r| r.chosen);
        let tiled = rows
            .iter()
            .filter(|r| r.kernel.starts_with("tiled"))
            .min_by(|a, b| a.ms.total_cmp(&b.ms));
        let (m, n, k) = shape;
        let _ = writeln!(
            out,
            "  {dtype} {m}x{n}x{k}: best {} {:.2} TFLOP/s = {:.1}% of cuBLAS ({:.2}); chosen {}{}",
            best.kernel,
            best.tflops(),
            best.pct_cublas(),
            best.flops() / (best.cublas_ms * 1e-3) / 1e12,
            chosen.map_or("-".to_string(), |c| format!(
                "{} ({:.1}% of cuBLAS)",
                c.kernel,
                c.pct_cublas()
            )),
            match (chosen, tiled) {
                (Some(c), Some(t)) if c.ms > t.ms =>
                    format!("; SLOWER than {} ({:.3} ms vs {:.3})", t.kernel, c.ms, t.ms),
                _ => String::new(),
            }
        );
    }
    out
}

/// Writes `text` to `path`; the error names the file.
fn write_file(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

fn write_outputs(
    dir: &Path,
    props: &DeviceProps,
    report: &str,
    records: &[Record],
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut csv = String::from(
        "type,m,n,k,kernel,chosen,ms,tflops,cublas_ms,pct_cublas,pct_peak,registers,occupancy,error,error_f64,ok,model_bytes\n",
    );
    for r in records {
        let (m, n, k) = r.shape;
        let _ = writeln!(
            csv,
            "{},{m},{n},{k},{},{},{:.6},{:.4},{:.6},{:.2},{:.2},{},{:.3},{:.3e},{:.3e},{},{:.0}",
            r.dtype,
            r.kernel,
            r.chosen,
            r.ms,
            r.tflops(),
            r.cublas_ms,
            r.pct_cublas(),
            r.pct_peak(peak(props, r.dtype)),
            r.registers,
            r.occupancy,
            r.error,
            r.error_f64,
            r.ok,
            r.bytes
        );
    }
    write_file(&dir.join("bench.csv"), &csv)?;
    // The report beside the CSV: `--replot` reads the GPU's name and bandwidth from it.
    write_file(&dir.join("bench.md"), report)?;
    let gpu = plots::Gpu {
        name: props.name.clone(),
        bandwidth: props.memory_bandwidth(),
    };
    draw_pictures(dir, &gpu, |dtype| Some(peak(props, dtype)), records)?;
    Ok(())
}

/// Both pictures of every type in `records`, into `dir`; `peak` gives each type's roof
/// (FLOP/s; the roofline is left out where it is unknown). Returns the files written.
fn draw_pictures(
    dir: &Path,
    gpu: &plots::Gpu,
    peak: impl Fn(&str) -> Option<f64>,
    records: &[Record],
) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for dtype in LABELS {
        let rows: Vec<Record> = records
            .iter()
            .filter(|r| r.dtype == dtype)
            .cloned()
            .collect();
        if rows.is_empty() {
            continue;
        }
        let path = dir.join(format!("tflops_{dtype}.svg"));
        plots::throughput(&path, dtype, gpu, &rows)
            .map_err(|e| format!("drawing {}: {e}", path.display()))?;
        written.push(path);
        match peak(dtype) {
            Some(peak) => {
                let path = dir.join(format!("roofline_{dtype}.svg"));
                plots::roofline(&path, dtype, gpu, peak, &rows)
                    .map_err(|e| format!("drawing {}: {e}", path.display()))?;
                written.push(path);
            }
            None => eprintln!(
                "rgemm-bench: no roofline for {dtype}: its peak or the memory bandwidth is not known"
            ),
        }
    }
    Ok(written)
}

/// Redraws the pictures of a recorded run: the records from `csv`, the GPU's name and
/// memory bandwidth from the report beside it (`.md`), each type's peak from the CSV's
/// `pct_peak` column.
fn replot(csv: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let text =
        std::fs::read_to_string(csv).map_err(|e| format!("reading {}: {e}", csv.display()))?;
    let (records, peaks) =
        parse_bench_csv(&text).map_err(|e| format!("reading {}: {e}", csv.display()))?;
    if records.is_empty() {
        return Err(format!("{} has no rows to draw", csv.display()));
    }
    let report = csv.with_extension("md");
    let gpu = match std::fs::read_to_string(&report)
        .ok()
        .and_then(|text| parse_gpu_line(&text))
    {
        Some(gpu) => gpu,
        None => {
            eprintln!(
                "rgemm-bench: no GPU line in {}: the titles say \"unnamed GPU\"",
                report.display()
            );
            plots::Gpu {
                name: "unnamed GPU".into(),
                bandwidth: f64::NAN,
            }
        }
    };
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let known = gpu.bandwidth.is_finite();
    draw_pictures(
        out,
        &gpu,
        |dtype| {
            known
                .then(|| peaks.iter().find(|(d, _)| *d == dtype).map(|&(_, p)| p))
                .flatten()
        },
        &records,
    )
}

/// The GPU's name and memory bandwidth from a report's first line, `GPU: NAME (...;
/// memory X TB/s)`.
fn parse_gpu_line(report: &str) -> Option<plots::Gpu> {
    let line = report.lines().find_map(|l| l.strip_prefix("GPU: "))?;
    let (name, rest) = line.split_once(" (")?;
    let bandwidth = rest
        .split_once("memory ")
        .and_then(|(_, m)| m.split_once(" TB/s"))
        .and_then(|(tb, _)| tb.trim().parse::<f64>().ok())
        .map_or(f64::NAN, |tb| tb * 1e12);
    Some(plots::Gpu {
        name: name.trim().to_string(),
        bandwidth,
    })
}

/// Each type's peak (FLOP/s) as recorded: throughput over `pct_peak`, taken from the row
/// nearest the peak (the most digits).
type Peaks = Vec<(&'static str, f64)>;

/// The records of a bench CSV (any of its column sets: columns are found by name) and
/// each type's peak. Rows of types the bench does not know are left out.
fn parse_bench_csv(text: &str) -> Result<(Vec<Record>, Peaks), String> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().ok_or("empty file")?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &str| names.iter().position(|n| *n == name);
    let need =
        |name: &str| col(name).ok_or(format!("not a bench CSV: no column {name:?} in its header"));
    let (c_type, c_m, c_n, c_k, c_kernel, c_ms, c_bytes) = (
        need("type")?,
        need("m")?,
        need("n")?,
        need("k")?,
        need("kernel")?,
        need("ms")?,
        need("model_bytes")?,
    );
    let (c_cublas, c_chosen, c_peak, c_error, c_ok) = (
        col("cublas_ms"),
        col("chosen"),
        col("pct_peak"),
        col("error"),
        col("ok"),
    );
    let mut records = Vec::new();
    let mut best: Vec<(&'static str, f64, f64)> = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let at = |c: usize| {
            fields
                .get(c)
                .copied()
                .ok_or(format!("line {}: too few fields", i + 1))
        };
        let number = |c: usize| -> Result<f64, String> {
            let field = at(c)?;
            field
                .parse::<f64>()
                .map_err(|_| format!("line {}: {field:?} is not a number", i + 1))
        };
        let count = |c: usize| -> Result<usize, String> {
            let field = at(c)?;
            field
                .parse::<usize>()
                .map_err(|_| format!("line {}: {field:?} is not a dimension", i + 1))
        };
        let label = at(c_type)?;
        let Some(dtype) = LABELS.into_iter().find(|l| *l == label) else {
            continue;
        };
        let ms = number(c_ms)?;
        let record = Record {
            dtype,
            shape: (count(c_m)?, count(c_n)?, count(c_k)?),
            kernel: at(c_kernel)?.to_string(),
            ms,
            cublas_ms: c_cublas.map_or(Ok(f64::NAN), number)?,
            chosen: c_chosen.map_or(Ok(false), |c| at(c).map(|f| f == "true"))?,
            registers: 0,
            occupancy: f64::NAN,
            error: c_error.map_or(Ok(f64::NAN), number)?,
            error_f64: f64::NAN,
            ok: c_ok.map_or(Ok(true), |c| at(c).map(|f| f == "true"))?,
            bytes: number(c_bytes)?,
        };
        if let Some(c) = c_peak {
            let pct = number(c)?;
            let seen = best.iter_mut().find(|(d, _, _)| *d == dtype);
            let peak = record.flops() / (ms * 1e-3) / (pct / 100.0);
            match seen {
                Some(b) if b.1 >= pct => {}
                Some(b) => *b = (dtype, pct, peak),
                None if pct > 0.0 => best.push((dtype, pct, peak)),
                None => {}
            }
        }
        records.push(record);
    }
    let peaks = best.into_iter().map(|(d, _, p)| (d, p)).collect();
    Ok((records, peaks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_checked() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(check_kernel_names(&[]), Ok(()));
        assert_eq!(
            check_kernel_names(&names(&["stream_k", "naive", "thin"])),
            Ok(())
        );
        let err = check_kernel_names(&names(&["stream_k", "no_such_kernel"])).unwrap_err();
        assert!(err.contains("no kernel named \"no_such_kernel\""), "{err}");
        assert!(err.contains("paired_lanes"), "{err}");
    }

    #[test]
    fn a_recorded_run_is_read_back() {
        let csv = "type,m,n,k,kernel,chosen,ms,tflops,cublas_ms,pct_cublas,pct_peak,registers,occupancy,error,ok,model_bytes\n\
                   f32,4096,4096,4096,cuBLAS,false,2.739168,50.1754,2.739168,100.00,74.99,0,NaN,0.000e0,true,201326592\n\
                   f32,4096,4096,4096,naive,false,30.0,4.58,2.739168,9.13,6.85,40,1.000,1.0e-6,true,9e11\n\
                   xf9,1,1,1,naive,false,1.0,0.0,1.0,100.0,1.0,0,NaN,0,true,1\n";
        let (records, peaks) = parse_bench_csv(csv).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].kernel, "naive");
        assert_eq!(records[0].shape, (4096, 4096, 4096));
        let (dtype, peak) = peaks[0];
        assert_eq!(dtype, "f32");
        assert!((peak / 1e12 - 66.9).abs() < 0.1, "{peak}");
        assert!(parse_bench_csv("type,m\nf32,1\n").is_err());
        assert!(parse_bench_csv(&csv.replace("2.739168,50", "fast,50")).is_err());
        let gpu = parse_gpu_line(
            "GPU: NVIDIA H200 (132 SMs, 1.98 GHz; FP32 peak 66.9; memory 4.81 TB/s)\n",
        )
        .unwrap();
        assert_eq!(gpu.name, "NVIDIA H200");
        assert!((gpu.bandwidth - 4.81e12).abs() < 1e6);
        assert!(parse_gpu_line("no such line").is_none());
    }

    #[test]
    fn arguments_parse() {
        let args = Args::try_parse_from([
            "rgemm-bench",
            "--kernels",
            "stream_k,paired_lanes",
            "--types",
            "f64",
        ])
        .expect("valid arguments");
        assert_eq!(args.kernels, ["stream_k", "paired_lanes"]);
        assert!(Args::try_parse_from(["rgemm-bench", "--reps", "many"]).is_err());
    }
}
