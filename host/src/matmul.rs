//! The products of whole matrices: [`Context::matmul`] and its kin over host [`Matrix`]es,
//! [`Context::matmul_device`] over [`DeviceMatrix`]es. Each is the general call
//! ([`Context::gemm`]) on views of the whole matrices, with `matmul`'s own choice of kernel:
//! made once per shape and remembered ([`Context::chosen_kernel`]).
use crate::context::Context;
use crate::dispatch::{LaunchPlan, Request};
use crate::element::{Element, Output};
use crate::error::Result;
use crate::kernels::{Kernel, Precision};
use crate::matrix::{DeviceMatrix, Matrix};
use crate::reference::check_product_shape;

impl Context {
    /// `A * B` with the fastest kernel for this shape on this device (see
    /// [`Context::matmul_device`] for how it is chosen).
    ///
    /// Shapes: `A` is `m x k`, `B` is `k x n`, the result `m x n`. Zero-sized dimensions
    /// follow the maths: `m = 0` or `n = 0` gives an empty result, `k = 0` a matrix of
    /// zeros (no kernel runs for an empty result). `f16`/`bf16` inputs give `f32`.
    pub fn matmul<T: Element>(&self, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T::Out>> {
        self.matmul_impl(a, b, Request::fastest(Precision::Exact))
    }

    /// `A * B` in the arithmetic the caller asks for: for f32 inputs [`Precision::Tf32`]
    /// (inputs rounded to TF32, about 2^-11 relative error per product, several times
    /// FP32's speed) or [`Precision::Tf32x3`] (FP32-class accuracy from three TF32 products);
    /// [`Precision::Exact`] is [`Context::matmul`]. The fastest kernel of that precision
    /// runs, chosen as `matmul` chooses; [`LaunchPlan::precision`] reports what ran.
    /// [`Error::UnsupportedPrecision`](crate::Error::UnsupportedPrecision) for other element
    /// types, or a device without the tensor cores (compute capability below 8.0).
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
        self.matmul_impl(a, b, Request::fastest(precision))
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
        self.matmul_impl(a, b, Request::fastest(Precision::Exact))
    }

    /// `A * B` with an explicit kernel (for example `Kernel::TiledDynamic(12)`).
    pub fn matmul_with<T: Element>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        kernel: Kernel,
    ) -> Result<Matrix<T::Out>> {
        self.matmul_impl(a, b, Request::named(kernel))
    }

    fn matmul_impl<T: Element, O: Output<T>>(
        &self,
        a: &Matrix<T>,
        b: &Matrix<T>,
        request: Request,
    ) -> Result<Matrix<O>> {
        let (m, n, k) = check_product_shape(a, b)?;
        // Validate the whole launch before any device work.
        self.check_launch::<T>((m, n, k), request)?;
        let (da, db) = (self.upload(a)?, self.upload(b)?);
        let mut dc = self.zeros::<O>(m, n)?;
        self.whole(&da, &db, &mut dc, request)?;
        self.download(&dc)
    }

    /// `C = A * B` on device matrices, queued on the stream. Returns what ran. `C` is left
    /// untouched on error. C's type chooses the output type ([`Output`]): the accumulator
    /// type, or for 16-bit inputs their own type.
    ///
    /// The way of [`Context::gemm`] on views of the whole matrices: check the operands,
    /// choose the kernel, take its ready launch (functions, occupancy: made once per kernel
    /// and element type), compute the grid, launch. Unlike `gemm`, it returns the plan for
    /// an empty C too (nothing is launched for it).
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
        let request = kernel.map_or(Request::fastest(Precision::Exact), Request::named);
        self.whole(a, b, c, request)
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
        self.whole(a, b, c, Request::fastest(precision))
    }

    fn whole<T: Element, O: Output<T>>(
        &self,
        a: &DeviceMatrix<T>,
        b: &DeviceMatrix<T>,
        c: &mut DeviceMatrix<O>,
        request: Request,
    ) -> Result<LaunchPlan> {
        self.gemm(a.view(), b.view(), c.view_mut())
            .asking(request)
            .run_whole()
    }
}
