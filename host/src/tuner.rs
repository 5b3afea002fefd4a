//! The opt-in tuner: where the rule ([`crate::heuristic`]) is not enough, time the kernels
//! that can compute a product on scratch buffers of the same form (never the caller's
//! data) and remember the fastest for the product's shape bucket, so every later product
//! in the bucket runs it. Results can be saved to a file and loaded, so a service starts
//! warm.
//!
//! A bucket is the element and output types, the precision, the layout bits (transposed A
//! or B after a column-major C is turned into a row-major one), whether the product is
//! plain (dense, row-major, whole buffers, no scaling: the form every kernel computes), and
//! `m`, `n`, `k` and the batch count each rounded up to a power of two.
use crate::context::Context;
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::kernels::{Kernel, Precision};
use crate::normalize::Normalized;
use crate::tuning::Bucket;
use crate::view::{Batch, MatrixLayout};

impl Context {
    /// Turns the tuner on or off. On: the first product of a bucket nobody tuned times every
    /// kernel that can compute it on scratch buffers (a dense product of the bucket's shape
    /// and layout: one warm-up, the best of three runs, CUDA events) and remembers the
    /// fastest. Off (the default): the rule decides, with no timing. Tuned choices, timed or
    /// loaded, are used in either mode.
    pub fn set_tuning(&self, on: bool) {
        self.tuning_lock().on = on;
    }

    /// The tuned choices as text, a line per bucket (see [`Context::load_tuning`]).
    pub fn tuning_text(&self) -> String {
        let tuning = self.tuning_lock();
        let mut lines: Vec<String> = tuning.table.iter().map(|(b, k)| b.line(*k)).collect();
        lines.sort();
        lines.join("\n") + "\n"
    }

    /// Writes [`Context::tuning_text`] to `path`.
    pub fn save_tuning(&self, path: &std::path::Path) -> Result<()> {
        std::fs::write(path, self.tuning_text())
            .map_err(|e| Error::Tuning(format!("{}: {e}", path.display())))
    }

    /// Adds the choices of a tuning file (as [`Context::save_tuning`] writes it); a line that
    /// does not parse, or names a kernel this device cannot run, is an error and nothing is
    /// added.
    pub fn load_tuning(&self, path: &std::path::Path) -> Result<usize> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Tuning(format!("{}: {e}", path.display())))?;
        let mut entries = Vec::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let bad =
                |why: String| Error::Tuning(format!("{}:{}: {why}: {line}", path.display(), i + 1));
            let (bucket, kernel) = Bucket::parse(line).ok_or_else(|| {
                bad("not `types precision layout plain m n k batch kernel`".into())
            })?;
            let module = kernel.spec().arch.module();
            if !module.runs_on.admits(self.props().compute_capability) {
                return Err(bad(format!(
                    "{kernel} does not run on {}",
                    self.props().name
                )));
            }
            entries.push((bucket, kernel));
        }
        let n = entries.len();
        self.tuning_lock().table.extend(entries);
        Ok(n)
    }

    /// The tuned choice for this product's bucket: remembered, or (tuner on) timed now.
    pub(crate) fn tuned<T: Element, O: Output<T>>(
        &self,
        norm: &Normalized,
        precision: Precision,
        fits: &dyn Fn(&Kernel) -> bool,
    ) -> Result<Option<Kernel>> {
        let bucket = Bucket::of::<T, O>(norm, precision);
        {
            let tuning = self.tuning_lock();
            if let Some(kernel) = tuning.table.get(&bucket) {
                return Ok(Some(*kernel));
            }
            if !tuning.on || norm.nothing {
                return Ok(None);
            }
        }
        let kernel = self.time_bucket::<T, O>(norm, fits)?;
        if let Some(kernel) = kernel {
            self.tuning_lock().table.insert(bucket, kernel);
        }
        Ok(kernel)
    }

    /// Times every kernel `fits` admits on scratch buffers laid out as `norm`'s problem
    /// (dense, the same transposes, the same batch); the fastest.
    fn time_bucket<T: Element, O: Output<T>>(
        &self,
        norm: &Normalized,
        fits: &dyn Fn(&Kernel) -> bool,
    ) -> Result<Option<Kernel>> {
        let p = norm.problem;
        let (m, n, k, count) = (p.m as usize, p.n as usize, p.k as usize, p.batch as usize);
        let view = |rows: usize, cols: usize, t: bool| match t {
            false => MatrixLayout::row_major(rows, cols),
            true => MatrixLayout::row_major(cols, rows).t(),
        };
        let (la, lb, lc) = (
            view(m, k, p.layout & 1 != 0),
            view(k, n, p.layout & 2 != 0),
            view(m, n, false),
        );
        let size = |l: &MatrixLayout| l.extent().map(|e| e.max(1));
        // Products 256 bytes apart or more, aligned as a plain batch's are.
        let (sa, sb, sc) = (
            size(&la)?.next_multiple_of(64),
            size(&lb)?.next_multiple_of(64),
            size(&lc)?.next_multiple_of(64),
        );
        let stream = self.stream();
        let a = stream.alloc_zeros::<T>(sa * count)?;
        let b = stream.alloc_zeros::<T>(sb * count)?;
        let mut c = stream.alloc_zeros::<O>(sc * count)?;
        let batch = Batch::strided(count, (sa, sb, sc));
        let scalars = (p.alpha, p.beta);
        let scratch = Normalized::new(
            (la, lb, lc),
            (sa * count, sb * count, sc * count),
            batch,
            scalars,
        )?;
        let mut best: Option<(f64, Kernel)> = None;
        for kernel in Kernel::FIXED.into_iter().filter(|k| fits(k)) {
            let Ok(launches) = kernel.launches_for::<T>(self.props(), scratch.problem) else {
                continue;
            };
            let ready = self.device.resolve::<T, O>(kernel)?;
            let runs = crate::timing::time_ms(self.stream(), 1, 3, || {
                use cudarc::driver::{DevicePtr, DevicePtrMut};
                let (pa, _ga) = a.device_ptr(stream);
                let (pb, _gb) = b.device_ptr(stream);
                let (pc, _gc) = c.device_ptr_mut(stream);
                // SAFETY: `Normalized::new` checked `scratch`'s dense layouts (offsets 0, C
                // row-major, so unswapped) against `a`, `b` and `c`; `launches` is scratch's.
                unsafe {
                    self.device
                        .launch_at::<T>(kernel, (pa, pb, pc), &ready, &launches)
                }
            })?;
            let ms = runs.into_iter().fold(f64::INFINITY, f64::min);
            if best.is_none_or(|(t, _)| ms < t) {
                best = Some((ms, kernel));
            }
        }
        Ok(best.map(|(_, kernel)| kernel))
    }
}
