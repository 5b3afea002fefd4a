//! [`Context`]: one device, its stream, the loaded kernels and the device's properties;
//! every GPU operation of this crate goes through one. What it holds on the device is a
//! [`Device`]; what it remembers of products (choices, tuning) is shared by its forks.
use crate::device::Device;
use crate::element::Scalar;
use crate::error::Result;
use crate::kernels::{Kernel, Precision};
use crate::matrix::{DeviceMatrix, Matrix, element_count};
use crate::props::DeviceProps;
use crate::tuning::Tuning;
use cudarc::driver::{CudaContext, CudaStream};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// (entry suffix, precision, m, n, k): what `matmul`'s choice is remembered under.
pub(crate) type ChoiceKey = (&'static str, Precision, usize, usize, usize);

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
    pub(crate) device: Device,
    /// The kernel `matmul` chose per (entry suffix, precision, m, n, k): timed on first
    /// use where the tuner is on.
    pub(crate) choices: Arc<Mutex<HashMap<ChoiceKey, Kernel>>>,
    /// The tuner: on or off, and its choices per shape bucket.
    tuning: Arc<Mutex<Tuning>>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("props", &self.device.props)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// Opens device `ordinal` with a non-blocking stream of its own. Kernel modules load on
    /// first use.
    pub fn new(ordinal: usize) -> Result<Self> {
        Ok(Self::on(Device::open(ordinal)?))
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
        Ok(Self::on(Device::from_cudarc(ctx, stream)?))
    }

    fn on(device: Device) -> Self {
        Self {
            device,
            choices: Default::default(),
            tuning: Default::default(),
        }
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
        self.on_stream(self.device.ctx.new_stream()?)
    }

    /// [`Context::fork`] onto a stream of the caller's (of this context's device).
    pub fn on_stream(&self, stream: Arc<CudaStream>) -> Result<Self> {
        Ok(Self {
            device: self.device.on_stream(stream)?,
            choices: self.choices.clone(),
            tuning: self.tuning.clone(),
        })
    }

    /// Makes this context's stream wait for the work queued so far on `other`'s (an
    /// event: the host does not wait).
    pub fn wait_for(&self, other: &Context) -> Result<()> {
        Ok(self.device.stream.join(&other.device.stream)?)
    }

    /// The device's properties, as read when the context opened.
    pub fn props(&self) -> &DeviceProps {
        &self.device.props
    }

    /// The stream every operation of this context is queued on (non-blocking).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.device.stream
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.device.stream.synchronize()?)
    }

    /// Copies a host matrix to the device.
    pub fn upload<T: Scalar>(&self, m: &Matrix<T>) -> Result<DeviceMatrix<T>> {
        let buf = if m.as_slice().is_empty() {
            self.device.stream.alloc_zeros::<T>(1)?
        } else {
            self.device.stream.clone_htod(m.as_slice())?
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
            buf: self.device.stream.alloc_zeros::<T>(len.max(1))?,
        })
    }

    /// Copies a device matrix back to the host (waits for queued work on it).
    pub fn download<T: Scalar>(&self, m: &DeviceMatrix<T>) -> Result<Matrix<T>> {
        self.device.check_owner(m.context())?;
        let mut data = self.device.stream.clone_dtoh(&m.buf)?;
        data.truncate(m.len());
        Matrix::from_vec(m.rows, m.cols, data)
    }

    pub(crate) fn tuning_lock(&self) -> MutexGuard<'_, Tuning> {
        self.tuning.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The underlying cudarc context, for interoperation.
    pub fn cuda_context(&self) -> &Arc<CudaContext> {
        &self.device.ctx
    }
}
