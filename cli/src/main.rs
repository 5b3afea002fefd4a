//! rgemm's main job: multiplies random matrices with every kernel and with cuBLAS on the
//! same inputs, checks each against cuBLAS and prints a row per kernel (shape, kernel,
//! time, TFLOP/s, % of cuBLAS) as soon as it is measured, with progress on stderr. With
//! no arguments it runs its embedded default.
//!
//! Without a GPU (or with `--cpu`) it says so and runs the same kernels on the CPU
//! executor (small sizes unless `--shapes` is given), checked against the CPU reference
//! instead of cuBLAS.
use clap::{Parser, ValueEnum};
use rgemm::internals::{median, time_ms};
use rgemm::{
    Context, CpuExecutor, Cublas, DeviceMatrix, DeviceProps, Element, Kernel, Matrix, Scalar,
};
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Instant;

type Shape = (usize, usize, usize);

/// The embedded default: square sizes up to 4096 and one rectangular shape.
const DEFAULT_SHAPES: [Shape; 4] = [
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (4096, 1024, 2048),
];
/// The CPU executor's default: small, with edges that are no tile multiple.
const CPU_SHAPES: [Shape; 3] = [(64, 64, 64), (96, 80, 112), (128, 128, 128)];
/// Beyond this many multiply-adds a kernel takes the CPU executor many seconds (every
/// kernel at 512^3 takes it about 12 s for one type, on 2 cores), so it warns.
const CPU_LARGE: usize = 512 * 512 * 512;
/// The name that stands for the dynamic-width tiled kernel at the device's own width.
const DYNAMIC: &str = "tiled_dyn";

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Times rgemm's Rust kernels against cuBLAS on one GPU",
    long_about = "Times rgemm's Rust kernels against cuBLAS on one GPU: random inputs, the \
        same for every kernel and for cuBLAS; each kernel's median time, TFLOP/s, share of \
        cuBLAS's speed and error against cuBLAS's product. Rows are printed as they \
        complete, progress goes to stderr. Without a GPU (or with --cpu) the same kernels \
        run on the CPU executor, checked against the CPU reference.\n\n\
        Exit status: 0 every kernel agrees, 1 some disagree or a run failed, 2 usage error."
)]
struct Args {
    /// Shapes: `S` for S x S x S, or `MxNxK` (C is M x N, the inner dimension K).
    ///
    /// [default: 1024,2048,4096,4096x1024x2048; on the CPU executor: 64,96x80x112,128]
    #[arg(long, value_delimiter = ',', value_parser = shape_arg)]
    shapes: Option<Vec<Shape>>,
    /// Element types (16-bit inputs write an f32 C).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "f32,f64,f16,bf16"
    )]
    types: Vec<Dtype>,
    /// Only these kernels (names as the table prints them, any case; `tiled_dyn` or
    /// `tiled_dyn(W)` for the dynamic-width one); cuBLAS always runs as the yardstick.
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    kernels: Vec<String>,
    /// Output: a markdown table, CSV, or JSON Lines (one object per row).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Timed repetitions per kernel (the median is reported).
    #[arg(long, default_value_t = 10, value_parser = at_least_one)]
    reps: usize,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Run on the CPU executor even if a GPU is present.
    #[arg(long)]
    cpu: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Dtype {
    F32,
    F64,
    F16,
    Bf16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

fn shape_arg(text: &str) -> Result<Shape, String> {
    match rgemm::parse_shape(text) {
        Some((m, n, k)) if m > 0 && n > 0 && k > 0 => Ok((m, n, k)),
        Some(_) => Err("every dimension must be at least 1".into()),
        None => Err("a shape is S or MxNxK, e.g. 4096 or 4096x14336x4096".into()),
    }
}

fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("a whole number of at least 1".into()),
    }
}

/// Which kernels `--kernels` asked for.
#[derive(Debug, Default, PartialEq)]
struct Picks {
    fixed: Vec<Kernel>,
    /// `tiled_dyn` at the device's width.
    dynamic_default: bool,
    /// `tiled_dyn(W)`: these widths instead of the device's.
    dynamic_widths: Vec<u32>,
}

impl Picks {
    fn parse(names: &[String]) -> Result<Option<Picks>, String> {
        if names.is_empty() {
            return Ok(None);
        }
        let mut picks = Picks::default();
        for name in names {
            let lower = name.trim().to_ascii_lowercase();
            if lower == DYNAMIC {
                picks.dynamic_default = true;
            } else if let Some(kernel) = Kernel::FIXED.into_iter().find(|k| k.to_string() == lower)
            {
                picks.fixed.push(kernel);
            } else if let Ok(Kernel::TiledDynamic(w)) = lower.parse::<Kernel>() {
                picks.dynamic_widths.push(w);
            } else {
                let known: Vec<String> = Kernel::FIXED.iter().map(|k| k.to_string()).collect();
                return Err(format!(
                    "no kernel named {name:?}; the kernels are {}, {DYNAMIC}, {DYNAMIC}(W)",
                    known.join(", ")
                ));
            }
        }
        Ok(Some(picks))
    }
}

/// The kernels to run: every one of `fixed` that `picks` asks for (all if none), and the
/// dynamic-width kernel at `width` or at the widths asked for.
fn select(fixed: &[Kernel], width: u32, picks: Option<&Picks>) -> Vec<Kernel> {
    let Some(picks) = picks else {
        let mut all = fixed.to_vec();
        all.push(Kernel::TiledDynamic(width));
        return all;
    };
    let mut chosen: Vec<Kernel> = fixed
        .iter()
        .copied()
        .filter(|k| picks.fixed.contains(k))
        .collect();
    if picks.dynamic_default {
        chosen.push(Kernel::TiledDynamic(width));
    }
    for &w in &picks.dynamic_widths {
        if !chosen.contains(&Kernel::TiledDynamic(w)) {
            chosen.push(Kernel::TiledDynamic(w));
        }
    }
    chosen
}

/// One (shape, type) of the run and the kernels it times.
struct Job {
    shape: Shape,
    dtype: Dtype,
    kernels: Vec<Kernel>,
}

/// One result: a kernel's, or the yardstick's (`kernel` "cuBLAS", no error).
struct Row {
    shape: Shape,
    dtype: &'static str,
    kernel: String,
    chosen: bool,
    ms: f64,
    /// cuBLAS on the same inputs; none on the CPU executor.
    cublas_ms: Option<f64>,
    /// None for the yardstick itself.
    rel_err: Option<f64>,
    ok: bool,
}

impl Row {
    fn tflops(&self) -> f64 {
        let (m, n, k) = self.shape;
        2.0 * m as f64 * n as f64 * k as f64 / (self.ms * 1e-3) / 1e12
    }
    fn pct_cublas(&self) -> Option<f64> {
        self.cublas_ms.map(|c| 100.0 * c / self.ms)
    }
    /// The values of [`FIELDS`], in order.
    fn fields(&self) -> [Field<'_>; 12] {
        let (m, n, k) = self.shape;
        [
            Field::Count(m),
            Field::Count(n),
            Field::Count(k),
            Field::Text(self.dtype),
            Field::Text(&self.kernel),
            Field::Flag(self.chosen),
            Field::Number(Some(self.ms)),
            Field::Number(Some(self.tflops())),
            Field::Number(self.cublas_ms),
            Field::Number(self.pct_cublas()),
            Field::Number(self.rel_err),
            Field::Flag(self.ok),
        ]
    }

    fn csv_line(&self) -> String {
        let values: Vec<String> = self.fields().iter().map(Field::csv).collect();
        format!("{}\n", values.join(","))
    }

    fn json_line(&self) -> String {
        let pairs: Vec<String> = (FIELDS.iter().zip(self.fields()))
            .map(|(key, value)| format!("\"{key}\":{}", value.json()))
            .collect();
        format!("{{{}}}\n", pairs.join(","))
    }
}

/// A row's CSV columns, which are also its JSON keys.
const FIELDS: [&str; 12] = [
    "m",
    "n",
    "k",
    "type",
    "kernel",
    "chosen",
    "ms",
    "tflops",
    "cublas_ms",
    "pct_cublas",
    "rel_err",
    "ok",
];

/// One value of a row, for CSV and JSON Lines alike.
enum Field<'a> {
    Count(usize),
    Text(&'a str),
    Flag(bool),
    /// None: an empty CSV field, JSON's null.
    Number(Option<f64>),
}

impl Field<'_> {
    fn csv(&self) -> String {
        match self {
            Field::Count(x) => x.to_string(),
            Field::Text(s) => s.to_string(),
            Field::Flag(b) => b.to_string(),
            Field::Number(x) => x.map_or(String::new(), num),
        }
    }

    fn json(&self) -> String {
        match self {
            Field::Text(s) => json_str(s),
            Field::Number(x) => x.map_or("null".to_string(), json_num),
            other => other.csv(),
        }
    }
}

/// What stops a run: the GPU (or the CPU executor) failing, or stdout closing.
#[derive(Debug)]
enum Failure {
    Run(rgemm::Error),
    Output(std::io::Error),
}

impl From<rgemm::Error> for Failure {
    fn from(e: rgemm::Error) -> Self {
        Failure::Run(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Output(e)
    }
}

/// Where rows go (stdout, in the chosen format) and progress (stderr).
struct Sink {
    format: Format,
    out: std::io::Stdout,
    /// On a terminal progress rewrites one line; elsewhere (a log) it is a line a step.
    live: bool,
    step: usize,
    total: usize,
    all_ok: bool,
}

impl Sink {
    fn new(format: Format) -> Self {
        Sink {
            format,
            out: std::io::stdout(),
            live: std::io::stderr().is_terminal(),
            step: 0,
            total: 0,
            all_ok: true,
        }
    }

    fn progress(&mut self, what: &str) {
        self.step += 1;
        let line = format!("[{}/{}] {what} ...", self.step, self.total);
        if self.live {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("{line}");
        }
    }

    fn clear_progress(&self) {
        if self.live {
            eprint!("\r\x1b[2K");
        }
    }

    fn header(&mut self, props: &DeviceProps) -> std::io::Result<()> {
        let device = device_line(props);
        let text = match self.format {
            Format::Table => format!(
                "{device}\n\n| {:<16} | {:<4} | {:<16} | {:>9} | {:>8} | {:>10} | {:>8} | {:<5} |\n|{:-<18}|{:-<6}|{:-<18}|{:->11}|{:->10}|{:->12}|{:->10}|{:-<7}|\n",
                "shape MxNxK",
                "type",
                "kernel",
                "time ms",
                "TFLOP/s",
                "% cuBLAS",
                "error",
                "check",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                ""
            ),
            Format::Csv => {
                eprintln!("{device}");
                format!("{}\n", FIELDS.join(","))
            }
            Format::Json => {
                eprintln!("{device}");
                String::new()
            }
        };
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }

    fn row(&mut self, r: &Row) -> std::io::Result<()> {
        self.clear_progress();
        self.all_ok &= r.ok;
        let (m, n, k) = r.shape;
        let line = match self.format {
            Format::Table => {
                let name = format!("{}{}", r.kernel, if r.chosen { " *" } else { "" });
                // CPU rates are tiny: more decimals there.
                let rate = match r.cublas_ms {
                    Some(_) => format!("{:.2}", r.tflops()),
                    None => format!("{:.5}", r.tflops()),
                };
                let share = r
                    .pct_cublas()
                    .map_or("-".to_string(), |p| format!("{p:.1}%"));
                let (err, check) = match r.rel_err {
                    Some(e) => (format!("{e:.1e}"), if r.ok { "ok" } else { "FAIL" }),
                    None => ("-".to_string(), "ref"),
                };
                format!(
                    "| {:<16} | {:<4} | {:<16} | {:>9.3} | {:>8} | {:>10} | {:>8} | {:<5} |\n",
                    format!("{m}x{n}x{k}"),
                    r.dtype,
                    name,
                    r.ms,
                    rate,
                    share,
                    err,
                    check
                )
            }
            Format::Csv => r.csv_line(),
            Format::Json => r.json_line(),
        };
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }
}

/// Six significant digits, no exponent for the usual magnitudes (CSV and JSON both read it).
fn num(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-5..=12).contains(&magnitude) {
        return format!("{x:.5e}");
    }
    format!("{x:.*}", (5 - magnitude).max(0) as usize)
}

/// JSON has no NaN or infinity: those are null.
fn json_num(x: f64) -> String {
    if x.is_finite() { num(x) } else { "null".into() }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn device_line(p: &DeviceProps) -> String {
    if p.name.starts_with("CPU executor") {
        format!(
            "Device: {} (wall-clock medians; error against the f64 CPU reference; no cuBLAS)\n\
             * = the kernel matmul() chooses for this shape and type",
            p.name
        )
    } else {
        format!(
            "GPU: {} (compute capability {}.{}, {} SMs, {:.2} GHz, FP32 peak {:.1} TFLOP/s)\n\
             medians of timed repetitions (CUDA events); error = max|C - C_cuBLAS| / max|C_cuBLAS|\n\
             * = the kernel matmul() chooses for this shape and type",
            p.name,
            p.compute_capability.0,
            p.compute_capability.1,
            p.multiprocessors,
            p.clock_khz as f64 / 1e6,
            p.fp32_peak_flops() / 1e12
        )
    }
}

fn shape_text((m, n, k): Shape) -> String {
    if m == n && n == k {
        format!("{m}^3")
    } else {
        format!("{m}x{n}x{k}")
    }
}

/// Runs `$f::<T>(args...)` for the element type `$d` names.
macro_rules! for_type {
    ($d:expr, $f:ident ( $($a:expr),* )) => {
        match $d {
            Dtype::F32 => $f::<f32>($($a),*),
            Dtype::F64 => $f::<f64>($($a),*),
            Dtype::F16 => $f::<rgemm::f16>($($a),*),
            Dtype::Bf16 => $f::<rgemm::bf16>($($a),*),
        }
    };
}

fn main() -> ExitCode {
    let args = Args::parse();
    let picks = match Picks::parse(&args.kernels) {
        Ok(picks) => picks,
        Err(e) => {
            eprintln!("rgemm: {e}");
            return ExitCode::from(2);
        }
    };
    let ctx = match (args.cpu, Context::new(args.device)) {
        (false, Ok(ctx)) => Some(ctx),
        (true, _) => None,
        (false, Err(e)) => {
            eprintln!("rgemm: NO GPU ({e}).");
            None
        }
    };
    let mut sink = Sink::new(args.format);
    let result = match &ctx {
        Some(ctx) => run_gpu(ctx, &args, picks.as_ref(), &mut sink),
        None => run_cpu(&args, picks.as_ref(), &mut sink),
    };
    sink.clear_progress();
    match result {
        Ok(()) if sink.all_ok => ExitCode::SUCCESS,
        Ok(()) => {
            let against = match ctx {
                Some(_) => "cuBLAS",
                None => "the CPU reference",
            };
            eprintln!("rgemm: some kernels disagree with {against} (FAIL rows above)");
            ExitCode::FAILURE
        }
        // Whoever read the rows stopped reading (e.g. `| head`): nothing to say.
        Err(Failure::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::FAILURE,
        Err(Failure::Output(e)) => {
            eprintln!("rgemm: writing the results: {e}");
            ExitCode::FAILURE
        }
        Err(Failure::Run(e)) => {
            eprintln!("rgemm: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_gpu(
    ctx: &Context,
    args: &Args,
    picks: Option<&Picks>,
    sink: &mut Sink,
) -> Result<(), Failure> {
    let blas = Cublas::new(ctx)?;
    let shapes = args.shapes.as_deref().unwrap_or(&DEFAULT_SHAPES);
    let mut jobs = Vec::new();
    for &shape in shapes {
        for &dtype in &args.types {
            jobs.push(for_type!(dtype, gpu_job(ctx, shape, dtype, picks))?);
        }
    }
    sink.total = jobs.iter().map(|j| 1 + j.kernels.len()).sum();
    sink.header(ctx.props())?;
    for job in &jobs {
        for_type!(job.dtype, run_gpu_job(ctx, &blas, args, job, sink))?;
    }
    Ok(())
}

/// The kernels this device can launch for `T` at `shape` (the tensor-core kernels take
/// 16-bit inputs), of those asked for.
fn gpu_job<T: Element>(
    ctx: &Context,
    shape: Shape,
    dtype: Dtype,
    picks: Option<&Picks>,
) -> rgemm::Result<Job> {
    let width = ctx.textbook_kernel::<T>()?.spec().rows();
    let mut kernels = select(&Kernel::FIXED, width, picks);
    let mut skipped = Vec::new();
    kernels.retain(|kernel| {
        let runs = kernel.launches::<T>(ctx.props(), shape).is_ok();
        if !runs {
            skipped.push(kernel.to_string());
        }
        runs
    });
    // Only news when the user named them.
    if picks.is_some() && !skipped.is_empty() {
        eprintln!(
            "rgemm: {} {}: {} cannot run here, skipped",
            T::NAME,
            shape_text(shape),
            skipped.join(", ")
        );
    }
    Ok(Job {
        shape,
        dtype,
        kernels,
    })
}

/// A job's label for the progress line, and its random A and B (the same on the GPU and the
/// CPU executor: the seed follows the shape).
fn inputs<T: Element>(job: &Job) -> Result<(String, Matrix<T>, Matrix<T>), Failure> {
    let (m, n, k) = job.shape;
    let label = format!("{} {}", T::NAME, shape_text(job.shape));
    let seed = 0x5eed ^ (m * 31 + n * 7 + k) as u64;
    let a = Matrix::<T>::random(m, k, seed)?;
    let b = Matrix::<T>::random(k, n, seed + 1)?;
    Ok((label, a, b))
}

fn run_gpu_job<T: Element>(
    ctx: &Context,
    blas: &Cublas,
    args: &Args,
    job: &Job,
    sink: &mut Sink,
) -> Result<(), Failure> {
    let (m, n, k) = job.shape;
    let (label, a, b) = inputs::<T>(job)?;
    sink.progress(&format!("{label} cuBLAS"));
    let (a, b) = (ctx.upload(&a)?, ctx.upload(&b)?);
    let mut c_ref: DeviceMatrix<T::Out> = ctx.zeros(m, n)?;
    let cublas_ms = median(&time_ms(ctx.stream(), args.warmup, args.reps, || {
        blas.matmul(&a, &b, &mut c_ref)
    })?);
    let reference = ctx.download(&c_ref)?;
    sink.row(&Row {
        shape: job.shape,
        dtype: T::NAME,
        kernel: "cuBLAS".into(),
        chosen: false,
        ms: cublas_ms,
        cublas_ms: Some(cublas_ms),
        rel_err: None,
        ok: true,
    })?;

    // What matmul() picks for this shape (by rule, remembered).
    let chosen = ctx
        .matmul_device(&a, &b, &mut ctx.zeros::<T::Out>(m, n)?, None)?
        .kernel;
    for &kernel in &job.kernels {
        sink.progress(&format!("{label} {kernel}"));
        let mut c: DeviceMatrix<T::Out> = ctx.zeros(m, n)?;
        let ms = median(&time_ms(ctx.stream(), args.warmup, args.reps, || {
            ctx.matmul_device(&a, &b, &mut c, Some(kernel)).map(drop)
        })?);
        let err = rel_err(&ctx.download(&c)?, &reference);
        sink.row(&Row {
            shape: job.shape,
            dtype: T::NAME,
            kernel: kernel.to_string(),
            chosen: kernel == chosen,
            ms,
            cublas_ms: Some(cublas_ms),
            rel_err: Some(err),
            ok: err <= limit_for::<T>(kernel, k),
        })?;
    }
    Ok(())
}

fn run_cpu(args: &Args, picks: Option<&Picks>, sink: &mut Sink) -> Result<(), Failure> {
    let shapes = match &args.shapes {
        Some(shapes) => {
            for &(m, n, k) in shapes {
                if m.saturating_mul(n).saturating_mul(k) > CPU_LARGE {
                    eprintln!(
                        "rgemm: {m}x{n}x{k} is large for the CPU executor (it runs every GPU \
                         thread in turn): expect seconds to minutes per kernel"
                    );
                }
            }
            shapes.clone()
        }
        None => CPU_SHAPES.to_vec(),
    };
    eprintln!(
        "rgemm: running the Rust kernels on the CPU EXECUTOR at {}, checked against the CPU \
         reference; times are CPU times, not GPU times, and there is no cuBLAS.",
        shapes
            .iter()
            .map(|&s| shape_text(s))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let cpu = CpuExecutor::new();
    let mut jobs = Vec::new();
    for &shape in &shapes {
        for &dtype in &args.types {
            jobs.push(Job {
                shape,
                dtype,
                kernels: for_type!(dtype, cpu_kernels(picks)),
            });
        }
    }
    sink.total = jobs.iter().map(|j| 1 + j.kernels.len()).sum();
    sink.header(&cpu.props())?;
    for job in &jobs {
        for_type!(job.dtype, run_cpu_job(&cpu, args, job, sink))?;
    }
    Ok(())
}

/// The kernels the CPU executor runs for `T`, of those asked for.
fn cpu_kernels<T: Element>(picks: Option<&Picks>) -> Vec<Kernel> {
    let fixed: Vec<Kernel> = Kernel::FIXED
        .into_iter()
        .filter(|k| k.supports::<T>())
        .collect();
    select(&fixed, 16, picks)
}

fn run_cpu_job<T: Element>(
    cpu: &CpuExecutor,
    args: &Args,
    job: &Job,
    sink: &mut Sink,
) -> Result<(), Failure> {
    let (label, a, b) = inputs::<T>(job)?;
    sink.progress(&format!("{label} CPU reference"));
    let reference = rgemm::matmul_reference(&a, &b)?;
    for &kernel in &job.kernels {
        sink.progress(&format!("{label} {kernel}"));
        let row = cpu_row(cpu, args, (&a, &b, &reference), kernel)?;
        sink.row(&row)?;
    }
    Ok(())
}

/// One kernel on the CPU executor: at most 3 repetitions (they are slow), checked against
/// `reference`.
fn cpu_row<T: Element>(
    cpu: &CpuExecutor,
    args: &Args,
    (a, b, reference): (&Matrix<T>, &Matrix<T>, &Matrix<f64>),
    kernel: Kernel,
) -> rgemm::Result<Row> {
    let (m, k, n) = (a.rows(), a.cols(), b.cols());
    let mut times = Vec::new();
    let mut err = 0.0;
    for _ in 0..args.reps.clamp(1, 3) {
        let start = Instant::now();
        let c = cpu.matmul_with(a, b, kernel)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        err = rel_err(&c, reference);
    }
    Ok(Row {
        shape: (m, n, k),
        dtype: T::NAME,
        kernel: kernel.to_string(),
        chosen: kernel == Kernel::Tiled16,
        ms: median(&times),
        cublas_ms: None,
        rel_err: Some(err),
        ok: err <= limit_for::<T>(kernel, k),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu_rows<T: Element>(args: &Args, shape: Shape) -> Vec<Row> {
        let cpu = CpuExecutor::new();
        let (m, n, k) = shape;
        let a = Matrix::<T>::random(m, k, 1).unwrap();
        let b = Matrix::<T>::random(k, n, 2).unwrap();
        let reference = rgemm::matmul_reference(&a, &b).unwrap();
        cpu_kernels::<T>(None)
            .into_iter()
            .map(|kernel| cpu_row(&cpu, args, (&a, &b, &reference), kernel).unwrap())
            .collect()
    }

    /// The main job on a machine without a GPU (the README's first command there): every
    /// kernel x type agrees with the CPU reference within its limit, the TF32 kernels
    /// included (they failed the FP32 limit).
    #[test]
    fn the_cpu_run_agrees_with_the_reference() {
        let args = Args::parse_from(["rgemm", "--cpu", "--reps", "1"]);
        let mut rows = cpu_rows::<f32>(&args, CPU_SHAPES[1]);
        rows.extend(cpu_rows::<f64>(&args, CPU_SHAPES[1]));
        rows.extend(cpu_rows::<rgemm::bf16>(&args, CPU_SHAPES[1]));
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

    #[test]
    fn kernel_names_are_matched_in_any_case() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(Picks::parse(&[]), Ok(None));
        let picks = Picks::parse(&names(&["Naive", "TILED16", "tiled_dyn(32)"]))
            .unwrap()
            .unwrap();
        assert_eq!(picks.fixed, [Kernel::Naive, Kernel::Tiled16]);
        assert_eq!(picks.dynamic_widths, [32]);
        let err = Picks::parse(&names(&["naive", "no_such"])).unwrap_err();
        assert!(err.contains("no kernel named \"no_such\""), "{err}");
        assert!(err.contains("paired_lanes"), "{err}");
    }

    #[test]
    fn selection_keeps_the_catalogue_order() {
        let picks = Picks::parse(&["tiled16".into(), "naive".into()])
            .unwrap()
            .unwrap();
        let fixed = [Kernel::Naive, Kernel::Tiled8, Kernel::Tiled16];
        assert_eq!(
            select(&fixed, 16, Some(&picks)),
            [Kernel::Naive, Kernel::Tiled16]
        );
        assert_eq!(
            select(&fixed, 16, None).last(),
            Some(&Kernel::TiledDynamic(16))
        );
        let dynamic = Picks::parse(&["TILED_DYN".into()]).unwrap().unwrap();
        assert_eq!(
            select(&fixed, 32, Some(&dynamic)),
            [Kernel::TiledDynamic(32)]
        );
    }

    #[test]
    fn arguments_are_checked() {
        let args = Args::try_parse_from([
            "rgemm",
            "--shapes",
            "4096x14336x4096,512",
            "--types",
            "bf16",
            "--format",
            "csv",
        ])
        .unwrap();
        assert_eq!(
            args.shapes,
            Some(vec![(4096, 14336, 4096), (512, 512, 512)])
        );
        assert_eq!(args.types, [Dtype::Bf16]);
        assert_eq!(args.format, Format::Csv);
        for bad in [
            ["rgemm", "--shapes", "4096x0x4096"],
            ["rgemm", "--shapes", "12x"],
            ["rgemm", "--types", "f8"],
            ["rgemm", "--format", "xml"],
            ["rgemm", "--reps", "0"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rows_print_as_csv_and_json_lines() {
        let row = Row {
            shape: (2, 3, 4),
            dtype: "f32",
            kernel: "tiled16".into(),
            chosen: true,
            ms: 1.5,
            cublas_ms: Some(3.0),
            rel_err: None,
            ok: true,
        };
        assert_eq!(
            row.csv_line(),
            "2,3,4,f32,tiled16,true,1.50000,3.20000e-8,3.00000,200.000,,true\n"
        );
        assert_eq!(
            row.json_line(),
            "{\"m\":2,\"n\":3,\"k\":4,\"type\":\"f32\",\"kernel\":\"tiled16\",\"chosen\":true,\"ms\":1.50000,\"tflops\":3.20000e-8,\"cublas_ms\":3.00000,\"pct_cublas\":200.000,\"rel_err\":null,\"ok\":true}\n"
        );
    }

    #[test]
    fn numbers_print_plainly() {
        assert_eq!(num(2.739168), "2.73917");
        assert_eq!(num(1234.5678), "1234.57");
        assert_eq!(num(0.000012345), "0.0000123450");
        assert_eq!(json_num(f64::NAN), "null");
        assert_eq!(json_str("a\"b"), "\"a\\\"b\"");
    }
}
