//! One way through for every product: its layout for the kernels ([`Indexed`]) and what
//! the caller asks of its kernel ([`Request`]) -> the kernel, checked against both -> its
//! launches and ready functions ([`Prepared`]) -> queued on the context's stream; and what
//! it runs as ([`LaunchPlan`]).
use crate::context::Context;
use crate::device::Resolved;
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::kernels::{Kernel, Launches, Precision};
use crate::normalize::Indexed;
use crate::occupancy::{BlockResources, Occupancy};
use cudarc::driver::LaunchConfig;
use std::sync::Arc;

/// What one product ran as: the kernel, its launch configuration and its occupancy.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LaunchPlan {
    pub kernel: Kernel,
    /// The PTX entry point, e.g. `tiled32_f32`.
    pub entry: String,
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
    pub occupancy: Occupancy,
    /// The arithmetic it multiplied in (the kernel's [`Precision`]).
    pub precision: Precision,
}

impl LaunchPlan {
    /// What a product of `kernel` launches as, for the caller.
    pub(crate) fn of(kernel: Kernel, ready: &Resolved, cfg: &LaunchConfig) -> Self {
        LaunchPlan {
            kernel,
            entry: ready.entry.clone(),
            grid: ready.clustered(cfg).grid_dim,
            block: cfg.block_dim,
            shared_bytes: cfg.shared_mem_bytes,
            occupancy: ready.occupancy,
            precision: kernel.spec().precision,
        }
    }
}

/// What the caller asks of a product's kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    /// Named by the caller; `None`: chosen among the kernels of `precision`.
    pub(crate) kernel: Option<Kernel>,
    /// The arithmetic the product must be multiplied in.
    pub(crate) precision: Precision,
}

impl Request {
    /// `kernel`, in the arithmetic it multiplies in.
    pub(crate) fn named(kernel: Kernel) -> Self {
        Self {
            kernel: Some(kernel),
            precision: kernel.spec().precision,
        }
    }

    /// The choice among the kernels of `precision`.
    pub(crate) fn fastest(precision: Precision) -> Self {
        Self {
            kernel: None,
            precision,
        }
    }
}

/// How a kernel nobody named is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chooser {
    /// The rule's (or the tuner's) for the product's form: [`Context::choose_for`].
    Rule,
    /// `matmul`'s for whole matrices, remembered per shape: [`Context::choose`].
    Remembered,
}

/// A product ready to queue: laid out, its kernel chosen and checked against it, its
/// launches computed and the kernel made ready; all but the operands' addresses.
pub(crate) struct Prepared {
    pub(crate) indexed: Indexed,
    kernel: Kernel,
    launches: Launches,
    ready: Arc<Resolved>,
}

impl Prepared {
    /// What it runs as.
    pub(crate) fn plan(&self) -> LaunchPlan {
        LaunchPlan::of(self.kernel, &self.ready, &self.launches.main)
    }
}

impl Context {
    /// Chooses the kernel (unless `request` names it), checks that it computes the product
    /// as laid out and in the precision asked, computes its launches and makes it ready.
    /// Errors before any work on the operands.
    pub(crate) fn prepare<T: Element, O: Output<T>>(
        &self,
        indexed: Indexed,
        request: Request,
        chooser: Chooser,
    ) -> Result<Prepared> {
        let norm = &indexed.norm;
        let precision = request.precision;
        let kernel = match (request.kernel, chooser) {
            (Some(kernel), _) => kernel,
            (None, Chooser::Rule) => self.choose_for::<T, O>(norm, precision)?,
            (None, Chooser::Remembered) => {
                let p = &norm.problem;
                let dims = (p.m as usize, p.n as usize, p.k as usize);
                self.choose::<T, O>(dims, precision)?
            }
        };
        norm.check_kernel(kernel, (size_of::<T>(), size_of::<O>()))?;
        let operands = norm.device_ab(size_of::<T>());
        let (kernel, launches) = kernel.running::<T>(self.props(), norm.problem, operands)?;
        if kernel.spec().precision != precision {
            return Err(Error::UnsupportedPrecision {
                precision: precision.name(),
                element: T::NAME,
                device: self.props().name.clone(),
                reason: format!(
                    "kernel {kernel} multiplies in {}",
                    kernel.spec().precision.name()
                ),
            });
        }
        let ready = self.device.resolve::<T, O>(kernel)?;
        Ok(Prepared {
            indexed,
            kernel,
            launches,
            ready,
        })
    }

    /// Queues `product` on the stream, its operands' buffers starting at `starts` (per
    /// product: A's, B's and C's, as [`Indexed::table`] takes them), the table of a batch of
    /// views copied ahead of it.
    ///
    /// # Safety
    /// The buffers are the ones `product` was laid out for (their views checked against
    /// them), and nothing else uses C's elements meanwhile.
    pub(crate) unsafe fn launch<T: Element, O: Output<T>>(
        &self,
        product: Prepared,
        starts: &[(u64, u64, u64)],
    ) -> Result<()> {
        let Prepared {
            indexed,
            kernel,
            mut launches,
            ready,
        } = product;
        let (first, table) = indexed.table::<T, O>(starts)?;
        let _table = match table {
            Some(entries) => {
                let (at, lock) = self.device.upload_table(&entries)?;
                launches.problem.batch_table = at;
                Some(lock)
            }
            None => None,
        };
        // SAFETY: the caller's promise; `prepare` refused kernels that cannot read this form,
        // and the table, where there is one, gives each product's operands (`Indexed::table`).
        unsafe { self.device.launch_at::<T>(kernel, first, &ready, &launches) }
    }

    /// The launch's own errors for a product of whole `m x k` and `k x n` matrices, from
    /// the shape alone: what `matmul` checks before it copies anything.
    pub(crate) fn check_launch<T: Element>(
        &self,
        (m, n, k): (usize, usize, usize),
        request: Request,
    ) -> Result<()> {
        match request.kernel {
            Some(kernel) => kernel.launches::<T>(self.props(), (m, n, k)).map(drop),
            None => self
                .candidates_in::<T>(m, n, k, request.precision)
                .map(drop),
        }
    }

    /// The launch `kernel` would make for an `m x k` times `k x n` product: its own, or that
    /// of the kernel it runs as there ([`Kernel::runs_as`]).
    pub fn plan<T: Element>(
        &self,
        kernel: Kernel,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<LaunchPlan> {
        kernel.launches::<T>(self.props(), (m, n, k))?;
        // (Device buffers start 256-byte aligned.)
        let problem = rgemm_kernels::problem::Problem::row_major(m as u32, n as u32, k as u32);
        let (kernel, launches) = kernel.running::<T>(self.props(), problem, (0, 0))?;
        let ready = self.device.resolve::<T, T::Out>(kernel)?;
        Ok(LaunchPlan::of(kernel, &ready, &launches.main))
    }

    /// What one block of `kernel` uses (registers from the compiled kernel).
    pub fn block_resources<T: Element>(&self, kernel: Kernel) -> Result<BlockResources> {
        Ok(self
            .device
            .resolve::<T, T::Out>(kernel)?
            .occupancy
            .resources)
    }

    /// The textbook occupancy of `kernel` on this device (see [`Occupancy`]).
    pub fn occupancy<T: Element>(&self, kernel: Kernel) -> Result<Occupancy> {
        self.occupancy_for::<T, T::Out>(kernel)
    }

    /// [`Context::occupancy`] of the entry point for inputs `T` and C of type `O` (its
    /// registers may differ from the f32-C entry's).
    pub fn occupancy_for<T: Element, O: Output<T>>(&self, kernel: Kernel) -> Result<Occupancy> {
        Ok(self.device.resolve::<T, O>(kernel)?.occupancy)
    }

    /// The driver's own count of resident blocks per SM for `kernel`
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`), to check [`Context::occupancy`].
    pub fn driver_blocks_per_sm<T: Element>(&self, kernel: Kernel) -> Result<u32> {
        let ready = self.device.resolve::<T, T::Out>(kernel)?;
        let resources = ready.occupancy.resources;
        Ok(ready.main.occupancy_max_active_blocks_per_multiprocessor(
            resources.threads,
            kernel.shared_bytes::<T>() as usize, // checked by resolve
            None,
        )?)
    }
}
