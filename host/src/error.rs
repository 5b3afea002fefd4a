//! Errors as values: every fallible call returns [`Result`], and bad input is reported
//! before anything is written, so the caller's data stays as it was.
use cudarc::cublas::result::CublasError;
use cudarc::driver::DriverError;

/// Everything that can go wrong in a call to this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `A` is `m x k`, `B` must be `k x n`.
    #[error("inner dimensions differ: A is {a_rows}x{a_cols} but B is {b_rows}x{b_cols}")]
    InnerDimensionMismatch {
        a_rows: usize,
        a_cols: usize,
        b_rows: usize,
        b_cols: usize,
    },
    /// A buffer's length does not match the shape it is said to have.
    #[error("a {rows}x{cols} matrix needs {expected} elements, the buffer has {len}")]
    LengthMismatch {
        rows: usize,
        cols: usize,
        expected: usize,
        len: usize,
    },
    /// `rows * cols` does not fit in `usize`.
    #[error("a {rows}x{cols} matrix has more elements than memory can address")]
    ElementCountOverflow { rows: usize, cols: usize },
    /// The output matrix has the wrong shape for the product.
    #[error("the product is {expected_rows}x{expected_cols} but the output is {rows}x{cols}")]
    OutputShapeMismatch {
        rows: usize,
        cols: usize,
        expected_rows: usize,
        expected_cols: usize,
    },
    /// The shape is valid mathematics but beyond what the kernels (or the launch grid) address.
    #[error("{m}x{k} times {k}x{n} is too large for the kernels: {reason}")]
    ShapeTooLarge {
        m: usize,
        n: usize,
        k: usize,
        reason: String,
    },
    /// The CUDA driver library could not be loaded (no NVIDIA driver on this machine).
    #[error("no CUDA driver: {0}")]
    NoDriver(String),
    /// The driver is there but the device ordinal is not.
    #[error("no CUDA device {ordinal}: this machine has {count}")]
    NoDevice { ordinal: usize, count: usize },
    /// A tile width (block shape, shared bytes) this device cannot launch.
    #[error("tile width {tile} cannot run on {device}: {reason}")]
    UnsupportedTile {
        tile: u32,
        device: String,
        reason: String,
    },
    /// A kernel whose block (threads, shared bytes) this device cannot launch.
    #[error("kernel {kernel} cannot run on {device}: {reason}")]
    UnsupportedKernel {
        kernel: String,
        device: String,
        reason: String,
    },
    /// A precision the element type has no kernels for (TF32 and 3xTF32 are for f32
    /// inputs), or none this device can run for the shape.
    #[error("no {precision} kernel for {element} inputs on {device}: {reason}")]
    UnsupportedPrecision {
        precision: &'static str,
        element: &'static str,
        device: String,
        reason: String,
    },
    /// A view's leading dimension is shorter than its rows (row-major) or columns
    /// (column-major), or 0.
    #[error("leading dimension {ld} of a {layout:?} view is less than {least}")]
    LeadingDimension {
        ld: usize,
        least: usize,
        layout: crate::layout::Layout,
    },
    /// A view (or a product of a batch) reaches past its buffer.
    #[error("{what} reaches element {needs} of a buffer of {len}")]
    ViewOutOfBounds {
        what: String,
        needs: usize,
        len: usize,
    },
    /// Two products of a batch would write the same elements of C.
    #[error("C's batch stride {stride} makes products {apart} apart overlap")]
    BatchOverlap { stride: usize, apart: usize },
    /// The views of a batch of independent products do not make one batch: lists of
    /// different lengths, products of different shapes, leading dimensions or layouts, or
    /// a strided batch asked of a list.
    #[error("a batch of views: {reason}")]
    BatchMismatch { reason: String },
    /// A kernel that cannot compute this form of product (transposes, leading dimensions,
    /// alpha/beta, batches) was asked to.
    #[error("kernel {kernel} cannot compute this product: {reason}")]
    UnsupportedForm { kernel: String, reason: String },
    /// A stream of another CUDA context was given.
    #[error("the stream belongs to another CUDA context")]
    ForeignStream,
    /// A tuning file that cannot be read, written or parsed.
    #[error("tuning: {0}")]
    Tuning(String),
    /// A device matrix from another [`Context`](crate::Context) was passed in.
    #[error("a device matrix belongs to another context")]
    ForeignMatrix,
    /// A kernel misbehaved on the CPU executor (divergent barrier, out-of-bounds access, ...).
    #[error("kernel {kernel}, block {block:?}, thread {thread:?}: {fault}")]
    KernelFault {
        kernel: String,
        block: (u32, u32, u32),
        thread: (u32, u32, u32),
        fault: crate::cpu::Fault,
    },
    /// An error reported by the CUDA driver (launch failure, out of memory, ...).
    #[error("CUDA driver: {0}")]
    Driver(#[from] DriverError),
    /// An error reported by cuBLAS.
    #[error("cuBLAS: {0:?}")]
    Cublas(#[from] CublasError),
}

/// This crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
