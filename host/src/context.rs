//! [`Context`]: one device, its stream, the loaded kernels and the device's properties;
//! every GPU operation of this crate goes through one.
use crate::element::{Element, Output, Scalar};
use crate::error::{Error, Result};
use crate::kernels::{Arch, Kernel, Launches, Precision};
use crate::matrix::{DeviceMatrix, Matrix, element_count};
use crate::occupancy::{BlockResources, Occupancy};
use crate::props::DeviceProps;
use crate::reference::{check_output_shape, check_product_shape, product_dims};
use cudarc::driver::sys::CUfunction_attribute as FuncAttr;
use cudarc::driver::sys::cudaError_enum as CuResult;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    DeviceRepr, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use rgemm_kernels::catalogue::TensorMaps;
use rgemm_kernels::problem::Problem;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Number of CUDA devices, or why there are none usable: [`Error::NoDriver`] when the
/// driver library cannot be loaded. Never panics.
pub fn device_count() -> Result<usize> {
    if !crate::library::present(&["cuda", "nvcuda"]) {
        return Err(Error::NoDriver(
            "libcuda.so could not be loaded (is the NVIDIA driver installed?)".into(),
        ));
    }
    match CudaContext::device_count() {
        Ok(n) => Ok(n.max(0) as usize),
        Err(e) if e.0 == CuResult::CUDA_ERROR_NO_DEVICE => Ok(0),
        Err(e) => Err(Error::NoDriver(format!(
            "the driver did not initialise: {e}"
        ))),
    }
}

/// (entry suffix, precision, m, n, k): what `matmul`'s choice is remembered under.
type ChoiceKey = (&'static str, Precision, usize, usize, usize);

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

/// A kernel made ready for one element type on this device, once: its functions loaded
/// (module included), its shared-memory limit raised where it needs more than the default,
/// its occupancy computed. Later launches of it make no driver queries.
#[derive(Debug)]
pub(crate) struct Resolved {
    entry: String,
    main: CudaFunction,
    /// The second launch's function (`stream_k`'s fix-up).
    fixup: Option<CudaFunction>,
    occupancy: Occupancy,
}

/// Kernels made ready, per (kernel, entry suffix), shared by the contexts of one device.
type ResolvedCache = Arc<Mutex<HashMap<(Kernel, &'static str), Arc<Resolved>>>>;

/// What runs a product: a kernel the caller named, or the fastest of a precision.
#[derive(Clone, Copy, Debug)]
enum Choice {
    Kernel(Kernel),
    Fastest(Precision),
}

/// The problem block as a kernel parameter (passed by value: the driver copies its bytes).
#[repr(transparent)]
struct ProblemArg(Problem);

// SAFETY: `Problem` is `#[repr(C)]` plain data, laid out as the kernels declare it (the PTX
// test checks its size and alignment against every entry point).
unsafe impl DeviceRepr for ProblemArg {}

/// A CUDA device with its stream and the loaded kernels.
///
/// Work is queued on a stream of the context's own, created non-blocking: it does not wait
/// for (or hold up) work on the legacy default stream or other streams of the process.
/// Everything a context does with a device buffer (allocation, copies, products, cuBLAS,
/// the free when it drops) is queued on that one stream, in program order, so the buffers
/// need no per-use events and cudarc's event tracking is off for the context. Using a
/// buffer on another stream ([`DeviceMatrix::as_cuda_slice`]) is the caller's to order:
/// [`Context::synchronize`] (or an event on [`Context::stream`]) before, and again before
/// the context touches it next.
///
/// **Threads.** `Context` is `Send + Sync`: threads may share one (an `Arc<Context>`), and
/// their products queue on its one stream in the order the calls take its locks; a product's
/// launches are queued together.
///
/// **Determinism.** A product is bitwise the same run to run for the same kernel, inputs,
/// shape and GPU model: no kernel adds floating-point values with atomics, and the kernels
/// that split K (split-K, stream-K) add their partial sums in a fixed order. Which kernel
/// [`Context::matmul`] chooses depends on the device (and, with the tuner, on timings), so
/// another GPU model may give other bits; name the kernel ([`Context::matmul_with`]) for
/// bits that do not depend on the choice.
///
/// **Memory.** Besides the operands, a product may use the context's workspace: the split-K
/// and stream-K kernels' partial sums (`splits x m x n` accumulators at most), the TF32
/// kernels' packed operands (A and B once more, as 32-bit words) and Hopper's tensor maps
/// (a few hundred bytes). The workspace grows to the largest product's need, is reused by
/// the next, and is freed when the context drops.
///
/// ```
/// use rgemm::{Context, Matrix};
///
/// # fn main() -> Result<(), rgemm::Error> {
/// let a = Matrix::from_vec(2, 3, vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let b = Matrix::from_vec(3, 2, vec![7.0f32, 8.0, 9.0, 10.0, 11.0, 12.0])?;
/// let ctx = match Context::new(0) {
///     Ok(ctx) => ctx,
///     Err(e) => {
///         eprintln!("no GPU here ({e}); the CPU reference instead:");
///         let c = rgemm::matmul_reference(&a, &b)?;
///         assert_eq!(c.as_slice(), &[58.0, 64.0, 139.0, 154.0]);
///         return Ok(());
///     }
/// };
/// let c = ctx.matmul(&a, &b)?; // kernel and tile width chosen from the device's properties
/// assert_eq!(c.as_slice(), &[58.0, 64.0, 139.0, 154.0]);
/// # Ok(())
/// # }
/// ```
pub struct Context {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The PTX modules, each loaded on first use of one of its kernels.
    modules: Arc<Mutex<HashMap<Arch, Arc<CudaModule>>>>,
    props: DeviceProps,
    /// Kernels made ready per (kernel, entry suffix: input and output types).
    resolved: ResolvedCache,
    /// The kernel `matmul` chose per (entry suffix, m, n, k): timed on first use.
    choices: Arc<Mutex<HashMap<ChoiceKey, Kernel>>>,
    /// Scratch memory for kernels that need it (partial sums, tensor maps).
    workspace: Mutex<Workspace>,
    /// The table of a batch of views ([`Problem::batch_table`]), grown as needed.
    table: Mutex<Option<CudaSlice<u64>>>,
    /// The tuner: on or off, and its choices per shape bucket.
    tuning: Arc<Mutex<crate::tuning::Tuning>>,
}

/// The context's device scratch memory: `stream_k`'s partial sums, or the tensor maps of
/// a TMA kernel (which stay there while the next products use the same ones).
#[derive(Default)]
struct Workspace {
    buf: Option<CudaSlice<u8>>,
    maps: Option<[u8; TensorMaps::BYTES]>,
    /// Bytes known to be zero: the last split-K product's counters, which it leaves zero
    /// (`decode_async`, `decode_mma`, `few_columns`; `decode_tma`'s after its maps).
    zero: Range<usize>,
}

impl Workspace {
    /// The buffer, grown to at least `bytes` (never shrunk: an allocation per product cost
    /// 60-80 us on an H200, the stream-ordered pool handing its memory back at each
    /// synchronisation), with `maps` at its start where given: copied only when they are
    /// not what it already holds, and its bytes `zeroed` zero: set only when another use
    /// may have left something else there.
    fn ready(
        &mut self,
        stream: &Arc<CudaStream>,
        bytes: usize,
        maps: impl FnOnce(u64) -> Result<Option<[u8; TensorMaps::BYTES]>>,
        zeroed: Range<usize>,
    ) -> Result<&mut CudaSlice<u8>> {
        if self.buf.as_ref().is_none_or(|w| w.len() < bytes) {
            // Drop the old buffer first (its free is stream-ordered after its last use).
            self.buf = None;
            self.maps = None;
            self.zero = 0..0;
            // SAFETY: uninitialised bytes are never read: the kernels read only what they
            // wrote in the same product, plus the counters and tensor maps set below.
            self.buf = Some(unsafe { stream.alloc::<u8>(bytes.max(TensorMaps::BYTES)) }?);
        }
        let buf = self.buf.as_mut().expect("just set");
        let maps = maps(buf.device_ptr(stream).0)?;
        if zeroed.is_empty() {
            self.zero = 0..0;
        } else {
            let known = self.zero.start <= zeroed.start && zeroed.end <= self.zero.end;
            if !known {
                stream.memset_zeros(&mut buf.slice_mut(zeroed.clone()))?;
                if zeroed.start < TensorMaps::BYTES {
                    self.maps = None; // zeroed over
                }
            }
            // The kernel leaves its own counters zero, but writes its planes right after
            // them: bytes a larger set of counters took before are zero no longer.
            self.zero = zeroed;
        }
        match maps {
            Some(maps) if self.maps != Some(maps) => {
                stream.memcpy_htod(&maps[..], &mut buf.slice_mut(..TensorMaps::BYTES))?;
                self.maps = Some(maps);
            }
            Some(_) => {}
            // Anything else may overwrite them.
            None => self.maps = None,
        }
        Ok(buf)
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("props", &self.props)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// Opens device `ordinal` with a non-blocking stream of its own. Kernel modules load on
    /// first use.
    pub fn new(ordinal: usize) -> Result<Self> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal)?;
        // SAFETY: every buffer of this context is allocated, used and freed on its one
        // stream, in order, so cudarc's per-buffer events (a record and a wait per buffer per
        // launch, host time inside a timed product) order nothing; a caller who hands a
        // buffer to another stream synchronizes first (see the type's documentation).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        Self::from_cudarc(ctx, stream)
    }

    /// A context on an existing cudarc context and stream (what candle and cudarc users
    /// hold): products queue on `stream`. Unlike [`Context::new`], it leaves the context's
    /// event tracking as it is (cudarc's default: on), so buffers it shares with the
    /// caller's code stay ordered by cudarc's events.
    ///
    /// ```no_run
    /// # fn main() -> rgemm::Result<()> {
    /// let cuda = rgemm::cudarc::driver::CudaContext::new(0)?;
    /// let stream = cuda.new_stream()?;
    /// let ctx = rgemm::Context::from_cudarc(cuda, stream)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_cudarc(ctx: Arc<CudaContext>, stream: Arc<CudaStream>) -> Result<Self> {
        if !Arc::ptr_eq(stream.context(), &ctx) {
            return Err(Error::ForeignStream);
        }
        let props = DeviceProps::query(&ctx)?;
        Ok(Self {
            ctx,
            stream,
            modules: Default::default(),
            props,
            resolved: Default::default(),
            choices: Default::default(),
            workspace: Default::default(),
            table: Default::default(),
            tuning: Default::default(),
        })
    }

    /// A context on another stream of the same device: it shares this one's loaded
    /// kernels, remembered choices and tuning, and has a workspace of its own, so products
    /// on the two run concurrently. Device matrices of either can be used by both; ordering
    /// work on one buffer across the two streams is the caller's ([`Context::wait_for`]),
    /// as CUDA's rule for streams is.
    ///
    /// ```no_run
    /// # fn main() -> rgemm::Result<()> {
    /// let ctx = rgemm::Context::new(0)?;
    /// let other = ctx.fork()?; // a new non-blocking stream
    /// let a = ctx.upload(&rgemm::Matrix::<f32>::random(64, 64, 1)?)?;
    /// other.wait_for(&ctx)?; // the upload first
    /// let mut c = other.zeros::<f32>(64, 64)?;
    /// other.matmul_device(&a, &a, &mut c, None)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn fork(&self) -> Result<Self> {
        self.on_stream(self.ctx.new_stream()?)
    }

    /// [`Context::fork`] onto a stream of the caller's (of this context's device).
    pub fn on_stream(&self, stream: Arc<CudaStream>) -> Result<Self> {
        if !Arc::ptr_eq(stream.context(), &self.ctx) {
            return Err(Error::ForeignStream);
        }
        Ok(Self {
            ctx: self.ctx.clone(),
            stream,
            modules: self.modules.clone(),
            props: self.props.clone(),
            resolved: self.resolved.clone(),
            choices: self.choices.clone(),
            workspace: Default::default(),
            table: Default::default(),
            tuning: self.tuning.clone(),
        })
    }

    /// Makes this context's stream wait for the work queued so far on `other`'s (an
    /// event: the host does not wait).
    pub fn wait_for(&self, other: &Context) -> Result<()> {
        Ok(self.stream.join(&other.stream)?)
    }

    /// The device's properties, as read when the context opened.
    pub fn props(&self) -> &DeviceProps {
        &self.props
    }

    /// The stream every operation of this context is queued on (non-blocking).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// Copies a host matrix to the device.
    pub fn upload<T: Scalar>(&self, m: &Matrix<T>) -> Result<DeviceMatrix<T>> {
        let buf = if m.as_slice().is_empty() {
            self.stream.alloc_zeros::<T>(1)?
        } else {
            self.stream.clone_htod(m.as_slice())?
        };
        Ok(DeviceMatrix {
            rows: m.rows(),
            cols: m.cols(),
            buf,
        })
    }

    /// A `rows x cols` device matrix of zeros.
    pub fn zeros<T: Scalar>(&self, rows: usize, cols: usize) -> Result<DeviceMatrix<T>> {
        let len = element_count(rows, cols)?;
        Ok(DeviceMatrix {
            rows,
            cols,
            buf: self.stream.alloc_zeros::<T>(len.max(1))?,
        })
    }

    /// Copies a device matrix back to the host (waits for queued work on it).
    pub fn download<T: Scalar>(&self, m: &DeviceMatrix<T>) -> Result<Matrix<T>> {
        self.check_owner(m)?;
        let mut data = self.stream.clone_dtoh(&m.buf)?;
        data.truncate(m.len());
        Matrix::from_vec(m.rows, m.cols, data)
    }

    /// `A * B` with the fastest kernel for this shape on this device (see
    /// [`Context::matmul_device`] for how it is chosen).
    ///
    /// Shapes: `A` is `m x k`, `B` is `k x n`, the result `m x n`. Zero-sized dimensions
    /// follow the maths: `m = 0` or `n = 0` gives an empty result, `k = 0` a matrix of
    /// zeros (no kernel runs for an empty result). `f16`/`bf16` inputs give `f32`.
    pub fn matmul<T: Element>(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T::Out>> {
        self.matmul_impl(a, b, Choice::Fastest(Precision::Exact))
    }

    /// `A * B` in the arithmetic the caller asks for: for f32 inputs [`Precision::Tf32`]
    /// (inputs rounded to TF32, about 2^-11 relative error per product, several times
    /// FP32's speed) or [`Precision::Tf32x3`] (FP32-class accuracy from three TF32 products);
    /// [`Precision::Exact`] is [`Context::matmul`]. The fastest kernel of that precision
    /// runs, chosen as `matmul` chooses; [`LaunchPlan::precision`] reports what ran.
    /// [`Error::UnsupportedPrecision`] for other element types, or a device without the
    /// tensor cores (compute capability below 8.0).
    ///
    /// ```no_run
    /// # fn main() -> rgemm::Result<()> {
    /// use rgemm::{Context, Matrix, Precision};
    /// let ctx = Context::new(0)?;
    /// let a = Matrix::<f32>::random(1024, 1024, 1)?;
    /// let b = Matrix::<f32>::random(1024, 1024, 2)?;
    /// let fast = ctx.matmul_in(&a, &b, Precision::Tf32)?; // never what `matmul` gives
    /// let close = ctx.matmul_in(&a, &b, Precision::Tf32x3)?;
    /// assert_eq!((fast.shape(), close.shape()), ((1024, 1024), (1024, 1024)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn matmul_in<T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        precision: Precision,
    ) -> Result<Matrix<T::Out>> {
        self.matmul_impl(a, b, Choice::Fastest(precision))
    }

    /// `A * B` with C of type `O`: for `f16` and `bf16` inputs either `f32` (what
    /// [`Context::matmul`] gives) or the input type, accumulated in f32 and rounded once as
    /// it is stored ([`Output`]).
    ///
    /// ```no_run
    /// # fn main() -> rgemm::Result<()> {
    /// use rgemm::{Context, Matrix, bf16};
    /// let ctx = Context::new(0)?;
    /// let a = Matrix::<bf16>::random(64, 4096, 1)?;
    /// let b = Matrix::<bf16>::random(4096, 4096, 2)?;
    /// let c = ctx.matmul_as::<bf16, _>(&a, &b)?; // 64 x 4096 bf16
    /// assert_eq!(c.shape(), (64, 4096));
    /// # Ok(())
    /// # }
    /// ```
    pub fn matmul_as<O: Output<T>, T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
    ) -> Result<Matrix<O>> {
        self.matmul_impl(a, b, Choice::Fastest(Precision::Exact))
    }

    /// `A * B` with an explicit kernel (for example `Kernel::TiledDynamic(12)`).
    pub fn matmul_with<T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        kernel: Kernel,
    ) -> Result<Matrix<T::Out>> {
        self.matmul_impl(a, b, Choice::Kernel(kernel))
    }

    fn matmul_impl<T: Element, O: Output<T>>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        choice: Choice,
    ) -> Result<Matrix<O>> {
        let (m, n, k) = check_product_shape(a, b)?;
        // Validate the whole launch before any device work.
        match choice {
            Choice::Kernel(kernel) => drop(kernel.launches::<T>(&self.props, (m, n, k))?),
            Choice::Fastest(precision) => drop(self.candidates_in::<T>(m, n, k, precision)?),
        }
        let (da, db) = (self.upload(a)?, self.upload(b)?);
        let mut dc = self.zeros::<O>(m, n)?;
        self.run(&da, &db, &mut dc, choice)?;
        self.download(&dc)
    }

    /// `C = A * B` on device matrices, queued on the stream. Returns what ran. `C` is left
    /// untouched on error. C's type chooses the output type ([`Output`]): the accumulator
    /// type, or for 16-bit inputs their own type.
    ///
    /// One way through: check the operands, choose the kernel, take its ready launch
    /// (functions, occupancy: made once per kernel and element type), compute the grid,
    /// launch.
    ///
    /// `kernel: None` picks one of [`Context::candidates`] for this element type and shape
    /// by rule (the element type, the shape and the device; no
    /// timing, so the first call of a new shape costs no more than the next), or, with the
    /// tuner on ([`Context::set_tuning`]), the fastest of them timed on scratch buffers for
    /// the shape's bucket; the choice is remembered for the life of the context
    /// ([`Context::chosen_kernel`] reports it). Measured on an H200, the rule's choice is
    /// within 10% of the tuner's on every benchmarked shape
    /// (`docs/bench/2026-11-22-h200-forms.md`).
    ///
    /// [`Kernel::StreamK`] needs device scratch memory for the partial sums of the tiles it
    /// shares out: two 128 x 128 accumulator tiles per block of one wave (34.6 MB on a
    /// 132-SM H200), allocated on its first use and kept by the context for later calls.
    /// [`Kernel::Decode`] keeps its K slices' sums there, and the TMA kernels
    /// ([`Kernel::WgmmaTma`], [`Kernel::WgmmaPersistent`]) their tensor maps of A and B,
    /// copied only when they differ from the last ones written.
    pub fn matmul_device<T: Element, O: Output<T>>(
        &self,
        a: &DeviceMatrix<T>,
        b: &DeviceMatrix<T>,
        c: &mut DeviceMatrix<O>,
        kernel: Option<Kernel>,
    ) -> Result<LaunchPlan> {
        let choice = match kernel {
            Some(kernel) => Choice::Kernel(kernel),
            None => Choice::Fastest(Precision::Exact),
        };
        self.run(a, b, c, choice)
    }

    /// [`Context::matmul_device`] with the fastest kernel of `precision` (see
    /// [`Context::matmul_in`]).
    pub fn matmul_device_in<T: Element, O: Output<T>>(
        &self,
        a: &DeviceMatrix<T>,
        b: &DeviceMatrix<T>,
        c: &mut DeviceMatrix<O>,
        precision: Precision,
    ) -> Result<LaunchPlan> {
        self.run(a, b, c, Choice::Fastest(precision))
    }

    fn run<T: Element, O: Output<T>>(
        &self,
        a: &DeviceMatrix<T>,
        b: &DeviceMatrix<T>,
        c: &mut DeviceMatrix<O>,
        choice: Choice,
    ) -> Result<LaunchPlan> {
        for owner in [a.context(), b.context(), c.context()] {
            if !Arc::ptr_eq(owner, &self.ctx) {
                return Err(Error::ForeignMatrix);
            }
        }
        let (m, n, k) = product_dims(a.shape(), b.shape())?;
        check_output_shape(c.shape(), m, n)?;
        let kernel = match choice {
            Choice::Kernel(kernel) => kernel,
            Choice::Fastest(precision) => self.choose::<T, O>((m, n, k), precision)?,
        };
        let launches = kernel.launches::<T>(&self.props, (m, n, k))?;
        let ready = self.resolve::<T, O>(kernel)?;
        if m > 0 && n > 0 {
            self.launch(kernel, a, b, c, &ready, &launches)?;
        }
        Ok(plan(kernel, &ready, &launches.main))
    }

    /// Queues the launches of one product.
    fn launch<T: Element, O: Output<T>>(
        &self,
        kernel: Kernel,
        a: &DeviceMatrix<T>,
        b: &DeviceMatrix<T>,
        c: &mut DeviceMatrix<O>,
        ready: &Resolved,
        launches: &Launches,
    ) -> Result<()> {
        let (pa, _ra) = a.buf.device_ptr(&self.stream);
        let (pb, _rb) = b.buf.device_ptr(&self.stream);
        let (pc, _rc) = c.buf.device_ptr_mut(&self.stream);
        // SAFETY: `run` checked A is m x k, B k x n and C m x n, and a `DeviceMatrix` holds
        // rows x cols dense elements; `ready` is the entry for `<T, O>`; C is borrowed mutably.
        unsafe { self.launch_at::<T>(kernel, (pa, pb, pc), ready, launches) }
    }

    /// Copies a batch's table ([`Problem::batch_table`]) to the device, on the stream, and
    /// returns its address and the lock on it: held until the product's launch is queued,
    /// so that another thread's table cannot be copied over it before (later copies queue
    /// after the launch on the same stream).
    pub(crate) fn upload_table(
        &self,
        entries: &[u64],
    ) -> Result<(u64, std::sync::MutexGuard<'_, Option<CudaSlice<u64>>>)> {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if table.as_ref().is_none_or(|t| t.len() < entries.len()) {
            // The old one's free is stream-ordered after its last use.
            *table = None;
            *table = Some(self.stream.alloc_zeros::<u64>(entries.len())?);
        }
        let buf = table.as_mut().expect("just set");
        self.stream
            .memcpy_htod(entries, &mut buf.slice_mut(..entries.len()))?;
        let at = buf.device_ptr(&self.stream).0;
        Ok((at, table))
    }

    /// Queues the launches of one product whose A, B and C start at device addresses
    /// `(pa, pb, pc)`.
    ///
    /// # Safety
    /// The addresses hold what `launches.problem` reads and writes there (every product of
    /// its batch), of types `T`, `T` and `O`, and nothing else uses C's elements meanwhile.
    pub(crate) unsafe fn launch_at<T: Element>(
        &self,
        kernel: Kernel,
        (pa, pb, pc): (u64, u64, u64),
        ready: &Resolved,
        launches: &Launches,
    ) -> Result<()> {
        // A packing kernel's main launch reads the packed operands, as its own problem says.
        let elem = std::mem::size_of::<T>();
        let maps = |base: u64| match kernel.spec().tma {
            Some(maps) => {
                let (operands, problem) = launches.main_operands((pa, pb), base);
                crate::tma::device_maps(maps, operands, &problem, elem)
            }
            None => Ok(None),
        };
        // Held until every launch is queued; later users of it queue after them on the same
        // stream, so they cannot overwrite it early.
        let mut workspace = (launches.workspace > 0)
            .then(|| self.workspace.lock().unwrap_or_else(|e| e.into_inner()));
        let bytes = launches.workspace * std::mem::size_of::<T::Out>();
        let unit = std::mem::size_of::<T::Out>();
        let zeroed = launches.zeroed_from * unit..(launches.zeroed_from + launches.zeroed) * unit;
        let mut scratch = match &mut workspace {
            Some(workspace) => Some(workspace.ready(&self.stream, bytes, maps, zeroed)?),
            None => None,
        };
        let base = match scratch.as_deref() {
            Some(scratch) => scratch.device_ptr(&self.stream).0,
            None => 0,
        };
        let ((ka, kb), main_problem) = launches.main_operands((pa, pb), base);
        let null = 0u64;
        let mut queue = |func: &CudaFunction,
                         cfg: LaunchConfig,
                         (pa, pb): (u64, u64),
                         problem: Problem|
         -> Result<()> {
            let problem = ProblemArg(problem);
            let mut builder = self.stream.launch_builder(func);
            builder.arg(&pa).arg(&pb).arg(&pc);
            match scratch.as_deref_mut() {
                Some(scratch) => builder.arg(scratch),
                None => builder.arg(&null),
            };
            builder.arg(&problem);
            // SAFETY: every entry takes `(a, b, c, workspace, problem)` (checked against
            // the PTX by the test suite); the addresses hold what the problem reads and
            // writes (the caller's promise), the workspace what `launches` asks for; `cfg`
            // comes from the kernel's spec.
            unsafe { builder.launch(cfg) }?;
            Ok(())
        };
        if let (Some(config), Some(func)) = (launches.pack_config(pa), &ready.fixup) {
            queue(func, config, (pa, pb), launches.problem)?;
        }
        queue(&ready.main, launches.main, (ka, kb), main_problem)?;
        if let (Some(cfg), Some(func)) = (launches.fixup, &ready.fixup) {
            queue(func, cfg, (pa, pb), launches.problem)?;
        }
        Ok(())
    }

    /// The kernels `matmul` chooses among for this shape: every kernel whose spec makes it a
    /// candidate for this shape (the textbook tiled kernels and every kernel past them;
    /// `thin` only for thin shapes) and that this device can launch for it. An error (the
    /// textbook kernel's) if none can.
    pub fn candidates<T: Element>(&self, m: usize, n: usize, k: usize) -> Result<Vec<Kernel>> {
        self.candidates_in::<T>(m, n, k, Precision::Exact)
    }

    /// [`Context::candidates`] among the kernels of `precision` (FP32 ones never compete
    /// with TF32 ones, either way).
    pub fn candidates_in<T: Element>(
        &self,
        m: usize,
        n: usize,
        k: usize,
        precision: Precision,
    ) -> Result<Vec<Kernel>> {
        let all: Vec<Kernel> = Kernel::FIXED
            .iter()
            .copied()
            .filter(|kernel| kernel.spec().precision == precision)
            .filter(|kernel| kernel.is_candidate(m, n))
            .filter(|kernel| kernel.launches::<T>(&self.props, (m, n, k)).is_ok())
            .collect();
        if all.is_empty() {
            if precision != Precision::Exact {
                // Why not: no kernel of this precision takes T, or what its launch says.
                let own = Kernel::FIXED
                    .into_iter()
                    .find(|kernel| kernel.spec().precision == precision && kernel.supports::<T>());
                let reason = match own.map(|kernel| kernel.launches::<T>(&self.props, (m, n, k))) {
                    None => "its kernels take f32 inputs".into(),
                    Some(Err(e)) => e.to_string(),
                    Some(Ok(_)) => "no kernel of it is a candidate for this shape".into(),
                };
                return Err(Error::UnsupportedPrecision {
                    precision: precision.name(),
                    element: T::NAME,
                    device: self.props.name.clone(),
                    reason,
                });
            }
            self.textbook_kernel::<T>()?
                .launches::<T>(&self.props, (m, n, k))?;
        }
        Ok(all)
    }

    /// The kernel `matmul` chose for this element type and shape, if it has run it.
    pub fn chosen_kernel<T: Element>(&self, m: usize, n: usize, k: usize) -> Option<Kernel> {
        self.chosen_kernel_for::<T, T::Out>(m, n, k)
    }

    /// The kernel `matmul` chose for inputs `T`, C of type `O` and this shape, if it has run
    /// it.
    pub fn chosen_kernel_for<T: Element, O: Output<T>>(
        &self,
        m: usize,
        n: usize,
        k: usize,
    ) -> Option<Kernel> {
        self.chosen_kernel_in::<T, O>(m, n, k, Precision::Exact)
    }

    /// The kernel [`Context::matmul_in`] chose for inputs `T`, C of type `O`, this shape and
    /// `precision`, if it has run it.
    pub fn chosen_kernel_in<T: Element, O: Output<T>>(
        &self,
        m: usize,
        n: usize,
        k: usize,
        precision: Precision,
    ) -> Option<Kernel> {
        let choices = self.choices.lock().unwrap_or_else(|e| e.into_inner());
        choices.get(&(O::SUFFIX, precision, m, n, k)).copied()
    }

    /// `matmul`'s choice for a plain product: remembered, tuned (see
    /// [`Context::set_tuning`]), or by rule (the element type, the shape and the device),
    /// then remembered for the shape. No timing unless the tuner is on, and then on scratch
    /// buffers.
    fn choose<T: Element, O: Output<T>>(
        &self,
        (m, n, k): (usize, usize, usize),
        precision: Precision,
    ) -> Result<Kernel> {
        if let Some(kernel) = self.chosen_kernel_in::<T, O>(m, n, k, precision) {
            return Ok(kernel);
        }
        // The launch's own errors first (a shape too large, no kernel of this precision).
        let candidates = self.candidates_in::<T>(m, n, k, precision)?;
        let layouts = (
            crate::view::MatrixLayout::row_major(m, k),
            crate::view::MatrixLayout::row_major(k, n),
            crate::view::MatrixLayout::row_major(m, n),
        );
        let norm = crate::normalize::Normalized::new(
            layouts,
            (m * k, k * n, m * n),
            crate::view::Batch::ONE,
            (1.0, 0.0),
        )?;
        let kernel = match self.choose_for::<T, O>(&norm, precision) {
            Ok(kernel) if candidates.contains(&kernel) || candidates.is_empty() => kernel,
            _ => candidates
                .first()
                .copied()
                .unwrap_or(self.textbook_kernel::<T>()?),
        };
        let mut choices = self.choices.lock().unwrap_or_else(|e| e.into_inner());
        choices.insert((O::SUFFIX, precision, m, n, k), kernel);
        Ok(kernel)
    }

    /// The launch `kernel` would make for an `m x k` times `k x n` product.
    pub fn plan<T: Element>(
        &self,
        kernel: Kernel,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<LaunchPlan> {
        let launches = kernel.launches::<T>(&self.props, (m, n, k))?;
        Ok(plan(
            kernel,
            &*self.resolve::<T, T::Out>(kernel)?,
            &launches.main,
        ))
    }

    /// The textbook's choice: the tiled kernel with the fixed tile width (8, 16 or 32) that
    /// this device can launch at the highest occupancy (threads resident per SM, from its
    /// thread, block, shared-memory and register limits and the kernel's register count);
    /// among equals the widest, since each element of A and B is then read from global
    /// memory fewer times (`n / tile` and `m / tile`).
    pub fn textbook_kernel<T: Element>(&self) -> Result<Kernel> {
        let mut best: Option<(Kernel, u32)> = None;
        for kernel in [Kernel::Tiled8, Kernel::Tiled16, Kernel::Tiled32] {
            if kernel.check_device::<T>(&self.props).is_err() {
                continue;
            }
            let threads = self.occupancy::<T>(kernel)?.threads_per_sm;
            if best.is_none_or(|(_, t)| threads >= t) {
                best = Some((kernel, threads));
            }
        }
        best.map(|(kernel, _)| kernel)
            .ok_or_else(|| Error::UnsupportedTile {
                tile: 8,
                device: self.props.name.clone(),
                reason: "no tile width fits this device".into(),
            })
    }

    /// What one block of `kernel` uses (registers from the compiled kernel).
    pub fn block_resources<T: Element>(&self, kernel: Kernel) -> Result<BlockResources> {
        Ok(self.resolve::<T, T::Out>(kernel)?.occupancy.resources)
    }

    /// The textbook occupancy of `kernel` on this device (see [`Occupancy`]).
    pub fn occupancy<T: Element>(&self, kernel: Kernel) -> Result<Occupancy> {
        self.occupancy_for::<T, T::Out>(kernel)
    }

    /// [`Context::occupancy`] of the entry point for inputs `T` and C of type `O` (its
    /// registers may differ from the f32-C entry's).
    pub fn occupancy_for<T: Element, O: Output<T>>(&self, kernel: Kernel) -> Result<Occupancy> {
        Ok(self.resolve::<T, O>(kernel)?.occupancy)
    }

    /// The driver's own count of resident blocks per SM for `kernel`
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`), to check [`Context::occupancy`].
    pub fn driver_blocks_per_sm<T: Element>(&self, kernel: Kernel) -> Result<u32> {
        let ready = self.resolve::<T, T::Out>(kernel)?;
        let resources = ready.occupancy.resources;
        Ok(ready.main.occupancy_max_active_blocks_per_multiprocessor(
            resources.threads,
            kernel.shared_bytes::<T>() as usize, // checked by resolve
            None,
        )?)
    }

    /// `kernel` for `T`, made ready on first use (see [`Resolved`]); checks that this device
    /// can run it.
    pub(crate) fn resolve<T: Element, O: Output<T>>(
        &self,
        kernel: Kernel,
    ) -> Result<Arc<Resolved>> {
        let key = (kernel, O::SUFFIX);
        if let Some(ready) = self
            .resolved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(ready.clone());
        }
        kernel.check_device::<T>(&self.props)?;
        let module = self.module(kernel.spec().arch)?;
        let entry = kernel.entry_for::<T, O>();
        let main = module.load_function(&entry)?;
        let fixup = match kernel.fixup_entry_for::<T, O>() {
            Some(name) => Some(module.load_function(&name)?),
            None => None,
        };
        // Checked against the device's limit by `check_device`.
        let shared = kernel.shared_bytes::<T>() as u32;
        // Beyond the default 48 KiB a kernel must opt in to its dynamic shared memory.
        if shared > self.props.shared_bytes_per_block {
            main.set_attribute(
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )?;
        }
        let static_shared = main.get_attribute(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let registers = main.get_attribute(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?;
        let resources = BlockResources {
            threads: kernel.threads() as u32, // at most the device's limit: checked above
            shared_bytes: shared + static_shared.max(0) as u32,
            registers_per_thread: registers.max(0) as u32,
        };
        let ready = Arc::new(Resolved {
            entry,
            main,
            fixup,
            occupancy: Occupancy::compute(&self.props, resources),
        });
        let mut cache = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        Ok(cache.entry(key).or_insert(ready).clone())
    }

    /// `arch`'s module, loaded on first use.
    fn module(&self, arch: Arch) -> Result<Arc<CudaModule>> {
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(module) = modules.get(&arch) {
            return Ok(module.clone());
        }
        let text = crate::ptx::module(arch).ok_or_else(|| Error::UnsupportedKernel {
            kernel: format!("{arch:?} module"),
            device: self.props.name.clone(),
            reason: "no kernel of this build is in it".into(),
        })?;
        let module = self.ctx.load_module(Ptx::from_src(text))?;
        Ok(modules.entry(arch).or_insert(module).clone())
    }

    fn check_owner<T>(&self, m: &DeviceMatrix<T>) -> Result<()> {
        if Arc::ptr_eq(m.context(), &self.ctx) {
            Ok(())
        } else {
            Err(Error::ForeignMatrix)
        }
    }

    pub(crate) fn tuning_lock(&self) -> std::sync::MutexGuard<'_, crate::tuning::Tuning> {
        self.tuning.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The underlying cudarc context, for interoperation.
    pub fn cuda_context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
}

/// What a product of `kernel` launches as, for the caller.
pub(crate) fn plan(kernel: Kernel, ready: &Resolved, cfg: &LaunchConfig) -> LaunchPlan {
    LaunchPlan {
        kernel,
        entry: ready.entry.clone(),
        grid: cfg.grid_dim,
        block: cfg.block_dim,
        shared_bytes: cfg.shared_mem_bytes,
        occupancy: ready.occupancy,
        precision: kernel.spec().precision,
    }
}
