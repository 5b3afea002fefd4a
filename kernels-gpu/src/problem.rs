//! The one kernel interface: every entry point takes the same parameters, four pointers and
//! one `#[repr(C)]` problem block, `(a, b, c, workspace, problem)`, so a new feature adds a
//! field to [`Problem`] rather than a new entry point signature.
//!
//! Why the pointers are not inside the block: rustc passes a by-value struct to a
//! `ptx-kernel` as an array of integers, so a pointer read from it is an integer cast to a
//! generic pointer, and every access through it compiles to a generic `ld`/`st` (checked:
//! `ld.b32` where a pointer parameter gives `ld.global.b32`, and no 16-byte global vectors).
//! A pointer parameter tells LLVM that it points to global memory.

use crate::element::Element;

/// The problem block: shape, layouts and scalars of one product `C = alpha op(A) op(B) +
/// beta C`. Identical layout for every element type (80 bytes), so the host fills one
/// struct for any entry.
///
/// Packed to 4-byte alignment on purpose: rustc passes a by-value struct to a kernel in
/// pieces of its alignment, and with 8-byte pieces `m`, `n` and `k` came out of shifts and
/// masks of 64-bit loads; LLVM then lost that they were 32-bit, turned address multiplies
/// (`mul.wide.u32`) into 64-bit ones, and the f64 `async_copy` and `paired_lanes` kernels
/// ran 5% slower (H200). With 4-byte pieces each `u32` field is one `ld.param.b32`.
///
/// Today's kernels compute row-major `C = A B`: the host sets the fields past `k` to what
/// that means ([`Problem::row_major`]) and the kernels read only `m`, `n`, `k`, `tile` and
/// `ctas`. The other fields are the room later features grow into (leading dimensions,
/// transposes, batches, alpha/beta).
#[repr(C, packed(4))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Problem {
    /// C is `m x n`; the inner dimension is `k`.
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// Elements between consecutive rows of A, B and C (row-major: `k`, `n`, `n`).
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    /// Bit 0: A is transposed; bit 1: B is transposed (0: both as they are).
    pub layout: u32,
    /// `tiled_dyn`'s tile width (the block is `tile x tile`); 0 for other kernels.
    pub tile: u32,
    /// `stream_k`'s sharing blocks (one wave); 0 for other kernels.
    pub ctas: u32,
    /// Products in the batch (1: a single product).
    pub batch: u32,
    /// Elements between consecutive products of a batch, per operand (0: shared).
    pub batch_stride_a: u64,
    pub batch_stride_b: u64,
    pub batch_stride_c: u64,
    /// `C = alpha A B + beta C` (1 and 0: `C = A B`).
    pub alpha: f64,
    pub beta: f64,
}

impl Problem {
    /// Row-major `C = A B` for an `m x k` A and a `k x n` B, dense, one product.
    pub const fn row_major(m: u32, n: u32, k: u32) -> Self {
        Self {
            m,
            n,
            k,
            lda: k,
            ldb: n,
            ldc: n,
            layout: 0,
            tile: 0,
            ctas: 0,
            batch: 1,
            batch_stride_a: 0,
            batch_stride_b: 0,
            batch_stride_c: 0,
            alpha: 1.0,
            beta: 0.0,
        }
    }
}

/// One launch's arguments as a kernel body sees them: the entry point's parameters, together.
#[derive(Clone, Copy)]
pub struct Gemm<T: Element> {
    pub a: *const T,
    pub b: *const T,
    pub c: *mut T::Out,
    /// Scratch memory of the kernels that need it (`stream_k`'s partial sums); null otherwise.
    pub workspace: *mut T::Acc,
    pub p: Problem,
}

impl<T: Element> Gemm<T> {
    /// `(a, b, c, m, n, k)`: what a body computing row-major `C = A B` reads.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    pub fn plain(&self) -> (*const T, *const T, *mut T::Out, u32, u32, u32) {
        (self.a, self.b, self.c, self.p.m, self.p.n, self.p.k)
    }
}

/// A kernel body: what the entry points of one kernel run, for element type `T`.
pub type Body<T> = unsafe fn(Gemm<T>);

/// Declares one `extern "ptx-kernel"` entry point per element type for a kernel body taking
/// [`Gemm`]: every entry has the parameters `(a, b, c, workspace, problem)`.
macro_rules! entry_points {
    ($body:path; $($name:ident: $elem:ty),* $(,)?) => {$(
        #[cfg(target_arch = "nvptx64")]
        /// # Safety
        /// `a` is `m x k` and `b` is `k x n` elements, row-major; `c` has room for `m x n`;
        /// the launch follows the kernel's spec (`catalogue.rs`).
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            a: *const $elem,
            b: *const $elem,
            c: *mut <$elem as $crate::element::Element>::Out,
            workspace: *mut <$elem as $crate::element::Element>::Acc,
            p: $crate::problem::Problem,
        ) {
            unsafe { $body($crate::problem::Gemm { a, b, c, workspace, p }) }
        }
    )*};
}
pub(crate) use entry_points;
