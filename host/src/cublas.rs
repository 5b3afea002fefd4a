//! cuBLAS as the yardstick: the same product through `cublasGemmEx`, on the same stream
//! and the same device matrices, for checking and timing our kernels in one run.
use crate::context::Context;
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::kernels::Precision;
use crate::matrix::DeviceMatrix;
use crate::normalize::Normalized;
use crate::reference::{check_output_shape, product_dims};
use crate::view::{Batch, DeviceView, DeviceViewMut};
use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t};
use cudarc::cublas::{CudaBlas, result};
use cudarc::driver::{DevicePtr, DevicePtrMut};

/// A cuBLAS handle bound to a [`Context`]'s stream.
pub struct Cublas<'c> {
    ctx: &'c Context,
    blas: CudaBlas,
    /// The device arrays of pointers of [`Cublas::gemm_batched_views`], grown as needed.
    pointers: std::cell::RefCell<Option<cudarc::driver::CudaSlice<u64>>>,
}

impl<'c> Cublas<'c> {
    /// Loads cuBLAS (at run time) and binds it to `ctx`'s stream.
    pub fn new(ctx: &'c Context) -> Result<Self> {
        if !crate::library::present(&["cublas"]) {
            return Err(Error::NoDriver("libcublas could not be loaded".into()));
        }
        Ok(Self {
            ctx,
            blas: CudaBlas::new(ctx.stream().clone())?,
            pointers: Default::default(),
        })
    }

    /// `C = A * B`, row-major, with cuBLAS's default algorithm for the types (no TF32 for
    /// f32: `CUBLAS_COMPUTE_32F`; tensor cores for f16/bf16 and, on Hopper, f64). C's type
    /// as in [`Context::matmul_device`](crate::Context::matmul_device): for 16-bit inputs
    /// f32 or the input type (alpha and beta stay f32, the compute type's).
    pub fn matmul<T: Element, O: Output<T>>(
        &self,
        a: &DeviceMatrix<T>,
        b: &DeviceMatrix<T>,
        c: &mut DeviceMatrix<O>,
    ) -> Result<()> {
        self.gemm(a, b, c, T::CUBLAS.2)
    }

    /// `C = A * B` for f32 at the cuBLAS counterpart of `precision`: SGEMM
    /// (`CUBLAS_COMPUTE_32F`) for [`Precision::Exact`], `CUBLAS_COMPUTE_32F_FAST_TF32` for
    /// [`Precision::Tf32`]. cuBLAS has no 3xTF32 compute type: [`Precision::Tf32x3`] gives
    /// SGEMM, the speed a 3xTF32 kernel has to beat.
    pub fn matmul_f32_in(
        &self,
        a: &DeviceMatrix<f32>,
        b: &DeviceMatrix<f32>,
        c: &mut DeviceMatrix<f32>,
        precision: Precision,
    ) -> Result<()> {
        self.gemm(a, b, c, self.f32_compute(precision)?)
    }

    /// cuBLAS's compute type for an f32 product at `precision` (see
    /// [`Cublas::matmul_f32_in`]), or the error for a precision it has no counterpart of.
    fn f32_compute(&self, precision: Precision) -> Result<cublasComputeType_t> {
        match precision {
            Precision::Tf32 => Ok(cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32),
            Precision::Exact | Precision::Tf32x3 => Ok(cublasComputeType_t::CUBLAS_COMPUTE_32F),
            other => Err(Error::UnsupportedPrecision {
                precision: other.name(),
                element: "f32",
                device: self.ctx.props().name.clone(),
                reason: "cuBLAS has no such compute type".into(),
            }),
        }
    }

    fn gemm<T: Element, O: Output<T>>(
        &self,
        a: &DeviceMatrix<T>,
        b: &DeviceMatrix<T>,
        c: &mut DeviceMatrix<O>,
        compute: cublasComputeType_t,
    ) -> Result<()> {
        let (m, n, k) = product_dims(a.shape(), b.shape())?;
        check_output_shape(c.shape(), m, n)?;
        let as_int = |v: usize| {
            i32::try_from(v).map_err(|_| Error::ShapeTooLarge {
                m,
                n,
                k,
                reason: "cuBLAS takes 32-bit dimensions".into(),
            })
        };
        let (mi, ni, ki) = (as_int(m)?, as_int(n)?, as_int(k)?);
        if m == 0 || n == 0 {
            return Ok(());
        }
        let stream = self.ctx.stream();
        let (ab, _, _) = T::CUBLAS;
        let ct = O::CUBLAS_C;
        let alpha = T::ONE;
        let beta = T::Out::default();
        let (pa, _ra) = a.buf.device_ptr(stream);
        let (pb, _rb) = b.buf.device_ptr(stream);
        let (pc, _rc) = c.buf.device_ptr_mut(stream);
        // Row-major C = A B is column-major C^T = B^T A^T: swap the operands, m and n.
        // SAFETY: the shapes were checked above, so B, A and C hold k*n, m*k and m*n dense
        // elements of types `ab`, `ab` and `ct`; alpha and beta are `T::Out`, `compute`'s scale.
        unsafe {
            result::gemm_ex(
                *self.blas.handle(),
                CUBLAS_OP_N,
                CUBLAS_OP_N,
                ni,
                mi,
                ki,
                (&alpha) as *const T::Out as *const _,
                pb as *const _,
                ab,
                ni.max(1),
                pa as *const _,
                ab,
                ki.max(1),
                (&beta) as *const T::Out as *const _,
                pc as *mut _,
                ct,
                ni.max(1),
                compute,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )?;
        }
        Ok(())
    }

    /// A batch of independent products over lists of views, as
    /// [`Context::gemm_batched`](crate::Context::gemm_batched) takes them:
    /// `cublasGemmBatchedEx`, its arrays of pointers copied to the device on the stream
    /// with each call (as a caller whose products move must).
    pub fn gemm_batched_views<T: Element, O: Output<T>>(
        &self,
        (alpha, beta): (T::Out, T::Out),
        (a, b): (&[DeviceView<T>], &[DeviceView<T>]),
        c: &mut [DeviceViewMut<O>],
    ) -> Result<()> {
        use crate::element::Scalar;
        use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_T;
        let la: Vec<_> = a.iter().map(|v| (v.layout, v.len)).collect();
        let lb: Vec<_> = b.iter().map(|v| (v.layout, v.len)).collect();
        let lc: Vec<_> = c.iter().map(|v| (v.layout, v.len)).collect();
        let scalars = (alpha.to_f64(), beta.to_f64());
        let Some(indexed) = crate::normalize::Indexed::new((&la, &lb, &lc), scalars)? else {
            return Ok(());
        };
        let norm = indexed.norm;
        if norm.nothing {
            return Ok(());
        }
        let p = norm.problem;
        let stream = self.ctx.stream();
        let count = a.len();
        let mut starts = Vec::with_capacity(count);
        for z in 0..count {
            let (pa, _) = a[z].buf.device_ptr(stream);
            let (pb, _) = b[z].buf.device_ptr(stream);
            let (pc, _) = c[z].buf.device_ptr_mut(stream);
            starts.push((pa, pb, pc));
        }
        let mut arrays = vec![0u64; 3 * count];
        for z in 0..count {
            let (ka, kb, kc) = indexed.addresses::<T, O>(&starts, z);
            (arrays[z], arrays[count + z], arrays[2 * count + z]) = (ka, kb, kc);
        }
        let mut pointers = self.pointers.borrow_mut();
        if pointers.as_ref().is_none_or(|d| d.len() < arrays.len()) {
            *pointers = None;
            *pointers = Some(stream.alloc_zeros::<u64>(arrays.len())?);
        }
        let dev = pointers.as_mut().expect("just set");
        stream.memcpy_htod(&arrays, &mut dev.slice_mut(..arrays.len()))?;
        let base = dev.device_ptr(stream).0;
        let at = |i: usize| (base + (i * count * 8) as u64) as *const *const std::ffi::c_void;
        let op = |t: bool| if t { CUBLAS_OP_T } else { CUBLAS_OP_N };
        let (a_t, b_t) = (p.layout & 1 != 0, p.layout & 2 != 0);
        let (ab, _, compute) = T::CUBLAS;
        // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B first.
        // SAFETY: `Indexed::new` checked every product's views against their buffers (each C
        // a distinct mutable borrow); the arrays hold their addresses, copied before this
        // call on the handle's stream; alpha and beta are `T::Out`, `compute`'s scale type.
        unsafe {
            cudarc::cublas::sys::cublasGemmBatchedEx(
                *self.blas.handle(),
                op(b_t),
                op(a_t),
                p.n as i32,
                p.m as i32,
                p.k as i32,
                (&alpha) as *const T::Out as *const _,
                at(1),
                ab,
                p.ldb.max(1) as i32,
                at(0),
                ab,
                p.lda.max(1) as i32,
                (&beta) as *const T::Out as *const _,
                at(2) as *const *mut std::ffi::c_void,
                O::CUBLAS_C,
                p.ldc.max(1) as i32,
                count as i32,
                compute,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
            .result()?;
        }
        Ok(())
    }

    /// `C = alpha op(A) op(B) + beta C` over views and a strided batch, as
    /// [`Context::gemm`](crate::Context::gemm) takes them: `cublasGemmStridedBatchedEx`
    /// with the transposes and leading dimensions the views imply, f32 compute (f64 for
    /// f64).
    pub fn gemm_views<T: Element, O: Output<T>>(
        &self,
        scalars: (T::Out, T::Out),
        operands: (&DeviceView<T>, &DeviceView<T>),
        c: &mut DeviceViewMut<O>,
        batch: Batch,
    ) -> Result<()> {
        self.strided_views(scalars, operands, c, batch, T::CUBLAS.2)
    }

    /// [`Cublas::gemm_views`] for f32 at the cuBLAS counterpart of `precision`, as
    /// [`Cublas::matmul_f32_in`] maps it (`CUBLAS_COMPUTE_32F_FAST_TF32` for
    /// [`Precision::Tf32`]): the yardstick of a product run with
    /// [`GemmCall::precision`](crate::GemmCall::precision).
    pub fn gemm_views_in(
        &self,
        scalars: (f32, f32),
        operands: (&DeviceView<f32>, &DeviceView<f32>),
        c: &mut DeviceViewMut<f32>,
        batch: Batch,
        precision: Precision,
    ) -> Result<()> {
        let compute = self.f32_compute(precision)?;
        self.strided_views(scalars, operands, c, batch, compute)
    }

    /// `cublasGemmStridedBatchedEx` over views with compute type `compute` (its scale type
    /// `T::Out`): the body of [`Cublas::gemm_views`] and [`Cublas::gemm_views_in`].
    fn strided_views<T: Element, O: Output<T>>(
        &self,
        (alpha, beta): (T::Out, T::Out),
        (a, b): (&DeviceView<T>, &DeviceView<T>),
        c: &mut DeviceViewMut<O>,
        batch: Batch,
        compute: cublasComputeType_t,
    ) -> Result<()> {
        use crate::element::Scalar;
        use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_T;
        let layouts = (a.layout, b.layout, c.layout);
        let lens = (a.len, b.len, c.len);
        let scalars = (alpha.to_f64(), beta.to_f64());
        let norm = Normalized::new(layouts, lens, batch, scalars)?;
        if norm.nothing {
            return Ok(());
        }
        let p = norm.problem;
        let stream = self.ctx.stream();
        let (pa, _ra) = a.buf.device_ptr(stream);
        let (pb, _rb) = b.buf.device_ptr(stream);
        let (pc, _rc) = c.buf.device_ptr_mut(stream);
        let (ka, kb, kc) = norm.addresses::<T, O>((pa, pb, pc));
        let op = |t: bool| if t { CUBLAS_OP_T } else { CUBLAS_OP_N };
        let (a_t, b_t) = (p.layout & 1 != 0, p.layout & 2 != 0);
        let (ab, _, _) = T::CUBLAS;
        // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B first.
        // SAFETY: `Normalized::new` checked every product's views against their buffers and
        // that C's products do not overlap; alpha and beta are `T::Out`, `compute`'s scale.
        unsafe {
            result::gemm_strided_batched_ex(
                *self.blas.handle(),
                op(b_t),
                op(a_t),
                p.n as i32,
                p.m as i32,
                p.k as i32,
                (&alpha) as *const T::Out as *const _,
                kb as *const _,
                ab,
                p.ldb.max(1) as i32,
                p.batch_stride_b as i64,
                ka as *const _,
                ab,
                p.lda.max(1) as i32,
                p.batch_stride_a as i64,
                (&beta) as *const T::Out as *const _,
                kc as *mut _,
                O::CUBLAS_C,
                p.ldc.max(1) as i32,
                p.batch_stride_c as i64,
                p.batch as i32,
                compute,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )?;
        }
        Ok(())
    }
}
