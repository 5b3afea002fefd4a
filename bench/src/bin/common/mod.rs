//! What the measuring binaries share: the GPU they need, and the CSV file they fill.
use clap::Args;
use rgemm::{
    Batch, Context, Cublas, DeviceMatrix, Element, LaunchPlan, MatrixLayout, Output, Scalar,
};
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The options of a binary that measures on one GPU and may keep its rows as CSV.
#[derive(Args, Debug)]
pub struct Target {
    /// Also write the rows as CSV to this file.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
}

/// The whole run of binary `name`: the GPU, the CSV file opened before anything is measured,
/// `measure` (which prints its tables and returns its rows as CSV), the file written.
pub fn measure(
    name: &str,
    target: &Target,
    measure: impl FnOnce(&Context) -> rgemm::Result<String>,
) -> ExitCode {
    let ctx = match gpu(name, target.device) {
        Ok(ctx) => ctx,
        Err(code) => return code,
    };
    let csv = match Csv::create(name, target.csv.as_deref()) {
        Ok(csv) => csv,
        Err(code) => return code,
    };
    match measure(&ctx) {
        Ok(rows) => csv.finish(name, &rows),
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Device `device`'s context, or (no GPU) the message and exit status 2 of binary `name`.
pub fn gpu(name: &str, device: usize) -> Result<Context, ExitCode> {
    Context::new(device).map_err(|e| {
        eprintln!("{name}: no GPU ({e}); it needs an NVIDIA GPU. Nothing was measured.");
        ExitCode::from(2)
    })
}

/// The CSV file asked for, opened before the run so that a path that cannot be written
/// costs no measurement.
pub struct Csv(Option<(PathBuf, File)>);

impl Csv {
    pub fn create(name: &str, path: Option<&Path>) -> Result<Csv, ExitCode> {
        match path {
            None => Ok(Csv(None)),
            Some(path) => match File::create(path) {
                Ok(file) => Ok(Csv(Some((path.to_path_buf(), file)))),
                Err(e) => {
                    eprintln!("{name}: cannot write {}: {e}", path.display());
                    Err(ExitCode::from(2))
                }
            },
        }
    }

    /// Writes `text` to the file, if one was asked for; says which file failed and why.
    pub fn finish(self, name: &str, text: &str) -> ExitCode {
        if let Some((path, mut file)) = self.0
            && let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush())
        {
            eprintln!("{name}: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        ExitCode::SUCCESS
    }
}

/// The upper median (of 10 timings, the 6th fastest).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median ms of `reps` timed calls of `work` on `ctx`'s stream, after 3 untimed ones.
pub fn median_ms(
    ctx: &Context,
    reps: usize,
    work: impl FnMut() -> rgemm::Result<()>,
) -> rgemm::Result<f64> {
    Ok(median(rgemm::internals::time_ms(
        ctx.stream(),
        3,
        reps,
        work,
    )?))
}

/// `(alpha, beta)` in `T`'s scalar type.
pub fn scalars<T: Element>((alpha, beta): (f64, f64)) -> (T::Out, T::Out) {
    (
        <T::Out as Scalar>::from_f64(alpha),
        <T::Out as Scalar>::from_f64(beta),
    )
}

/// Keeps the name of the kernel that ran, if one did.
pub fn note_kernel(plan: Option<LaunchPlan>, ran: &mut String) {
    if let Some(plan) = plan {
        *ran = plan.kernel.to_string();
    }
}

/// The table a binary fills: how it was measured (after the timing common to the tables),
/// its markdown header (the titles, then the alignment row) and its CSV columns.
pub struct Table {
    pub setup: &'static str,
    pub titles: &'static str,
    pub alignment: &'static str,
    pub columns: &'static str,
}

impl Table {
    /// The markdown report, opened by the GPU's name, the setup and the table's header, and
    /// the CSV, opened by its columns: both ready for rows.
    pub fn start(&self, ctx: &Context) -> (String, String) {
        self.start_timed(ctx, 10)
    }

    /// [`Table::start`] for medians of `reps` timed calls (the count a binary was asked for).
    pub fn start_timed(&self, ctx: &Context, reps: usize) -> (String, String) {
        let props = ctx.props();
        let md = format!(
            "GPU: {} ({} SMs); medians of {reps} after 3 warm-ups, CUDA events; {}\n\n{}\n{}\n",
            props.name, props.multiprocessors, self.setup, self.titles, self.alignment
        );
        (md, format!("{}\n", self.columns))
    }
}

/// cuBLAS's strided-batched product (`gemm_views`) of `a` and `b` as `la` and `lb`, into
/// whichever C it is given, as `lc`.
pub fn cublas_into<'a, T: Element, O: Output<T>>(
    blas: &'a Cublas,
    scalars: (T::Out, T::Out),
    (a, la): (&'a DeviceMatrix<T>, MatrixLayout),
    (b, lb): (&'a DeviceMatrix<T>, MatrixLayout),
    (lc, batch): (MatrixLayout, Batch),
) -> impl Fn(&mut DeviceMatrix<O>) -> rgemm::Result<()> + 'a {
    move |c| {
        let (va, vb) = (a.view_as(la)?, b.view_as(lb)?);
        blas.gemm_views(scalars, (&va, &vb), &mut c.view_mut_as(lc)?, batch)
    }
}
