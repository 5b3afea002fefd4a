//! The general product `C = alpha op(A) op(B) + beta C` over views and strided batches:
//! the call that runs it ([`GemmCall`]; its layout for the kernels is [`Normalized`]), and
//! the CPU reference for it.
//!
//! A column-major C is a row-major C^T: `C^T = op(B)^T op(A)^T`, so the kernels only ever
//! write row-major C, and read A and B each row-major or transposed.
use crate::context::Context;
use crate::dispatch::{Chooser, LaunchPlan, Request};
use crate::element::{Element, Output, Scalar};
use crate::error::{Error, Result};
use crate::kernels::{Kernel, MAX_DIM, Precision};
use crate::normalize::{DeviceLists, Indexed, Normalized};
use crate::reference::{check_output_shape, product_dims};
use crate::view::{Batch, DeviceView, DeviceViewMut, MatrixView, MatrixViewMut};

/// `C = alpha op(A) op(B) + beta C` on the CPU, each product's sums in f64 and then rounded
/// to C's type: the reference every form of the product is tested against. With `beta = 0`
/// C's old values are not read (NaN in C does not reach the result); with `alpha = 0` A and
/// B are not read.
pub fn gemm_reference<T: Scalar, O: Scalar>(
    (alpha, beta): (f64, f64),
    a: &MatrixView<T>,
    b: &MatrixView<T>,
    c: &mut MatrixViewMut<O>,
    batch: Batch,
) -> Result<()> {
    let lens = (a.data.len(), b.data.len(), c.data.len());
    let (la, lb, lc) = (a.layout, b.layout, c.layout);
    Normalized::new((la, lb, lc), lens, batch, (alpha, beta))?;
    for i in 0..batch.count {
        for r in 0..lc.rows {
            for col in 0..lc.cols {
                let mut sum = 0.0f64;
                if alpha != 0.0 {
                    for p in 0..la.cols {
                        let x = a.get(i, batch.stride_a, r, p).to_f64();
                        sum += x * b.get(i, batch.stride_b, p, col).to_f64();
                    }
                }
                let at = lc.index(r, col) + i * batch.stride_c;
                let old = if beta == 0.0 {
                    0.0
                } else {
                    beta * c.data[at].to_f64()
                };
                c.data[at] = O::from_f64(alpha * sum + old);
            }
        }
    }
    Ok(())
}

/// `len` values uniform in [-1, 1), rounded to `T`, from `seed`: one operand's buffer (for
/// tests and benchmarks).
pub fn random_buffer<T: Element>(len: usize, seed: u64) -> Vec<T> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..len)
        .map(|_| T::from_f64(rng.random_range(-1.0..1.0)))
        .collect()
}

/// One product `C = alpha op(A) op(B) + beta C` on the GPU, made by
/// [`Context::gemm`](crate::Context::gemm): set what differs from `C = A B`, then
/// [`GemmCall::run`].
#[must_use = "nothing runs until `run`"]
pub struct GemmCall<'c, 'v, T: Element, O: Output<T>> {
    ctx: &'c Context,
    /// One view per product: one for [`Context::gemm`], the list of
    /// [`Context::gemm_batched`].
    a: Vec<DeviceView<'v, T>>,
    b: Vec<DeviceView<'v, T>>,
    c: Vec<DeviceViewMut<'v, O>>,
    /// Made by [`Context::gemm_batched`] (a list, whatever its length).
    list: bool,
    alpha: f64,
    beta: f64,
    batch: Batch,
    request: Request,
}

impl Context {
    /// `C = A B` over views, in place, queued on the context's stream; add `alpha`, `beta`,
    /// a batch, a kernel or a precision before [`GemmCall::run`]. A view may be a block of a
    /// larger matrix, have any leading dimension, be column-major, or be transposed
    /// ([`DeviceView::t`]); C's type is the output type ([`Output`]).
    ///
    /// The kernel, unless named, comes from a rule on the shape, the forms and the device
    /// (the selection rule, `docs/architecture.md`), with no timing: the first product of a
    /// shape costs the host no more than the next. (`matmul`'s timed choice, where it has made
    /// one for a plain product of this shape, is kept.)
    ///
    /// ```no_run
    /// # fn main() -> rgemm::Result<()> {
    /// use rgemm::{Batch, Context, Matrix, MatrixLayout};
    /// let ctx = Context::new(0)?;
    /// let a = ctx.upload(&Matrix::<f32>::random(512, 256, 1)?)?; // used as A^T: 256 x 512
    /// let b = ctx.upload(&Matrix::<f32>::random(512, 128, 2)?)?;
    /// let mut c = ctx.upload(&Matrix::<f32>::random(256, 128, 3)?)?;
    /// // C = 2 A^T B - C (cuBLAS: gemm with transa = T, alpha = 2, beta = -1):
    /// ctx.gemm(a.view().t(), b.view(), c.view_mut()).alpha(2.0).beta(-1.0).run()?;
    /// // Eight 64 x 64 products of consecutive 64 x 64 blocks (gemmStridedBatched):
    /// let x = ctx.upload(&Matrix::<f32>::random(8 * 64, 64, 4)?)?;
    /// let mut y = ctx.zeros::<f32>(8 * 64, 64)?;
    /// let one = MatrixLayout::row_major(64, 64);
    /// ctx.gemm(x.view_as(one)?, x.view_as(one)?, y.view_mut_as(one)?)
    ///     .batch(Batch::strided(8, (64 * 64, 64 * 64, 64 * 64)))
    ///     .run()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn gemm<'c, 'v, T: Element, O: Output<T>>(
        &'c self,
        a: DeviceView<'v, T>,
        b: DeviceView<'v, T>,
        c: DeviceViewMut<'v, O>,
    ) -> GemmCall<'c, 'v, T, O> {
        GemmCall::of(self, (vec![a], vec![b], vec![c]), false)
    }
}

impl<'c, 'v, T: Element, O: Output<T>> GemmCall<'c, 'v, T, O> {
    pub(crate) fn of(ctx: &'c Context, (a, b, c): DeviceLists<'v, T, O>, list: bool) -> Self {
        GemmCall {
            ctx,
            a,
            b,
            c,
            list,
            alpha: 1.0,
            beta: 0.0,
            batch: Batch::ONE,
            request: Request::fastest(Precision::Exact),
        }
    }

    /// The kernel, or the precision, that `matmul` asks for.
    pub(crate) fn asking(self, request: Request) -> Self {
        Self { request, ..self }
    }
}

impl<'c, 'v, T: Element, O: Output<T>> GemmCall<'c, 'v, T, O> {
    /// `alpha`, in the accumulator type (`f64` for f64 inputs, else `f32`).
    pub fn alpha(self, alpha: T::Out) -> Self {
        Self {
            alpha: alpha.to_f64(),
            ..self
        }
    }

    /// `beta`, in the accumulator type. With `beta = 0` (the default) C's old values are
    /// never read: a NaN there does not reach the result.
    pub fn beta(self, beta: T::Out) -> Self {
        Self {
            beta: beta.to_f64(),
            ..self
        }
    }

    /// A strided batch: the views are product 0's operands (not for a list of views: an
    /// [`Error::BatchMismatch`] at [`GemmCall::run`]).
    pub fn batch(self, batch: Batch) -> Self {
        Self { batch, ..self }
    }

    /// This kernel ([`Error::UnsupportedForm`] if it cannot compute the product's form).
    pub fn kernel(self, kernel: Kernel) -> Self {
        let request = Request {
            kernel: Some(kernel),
            ..self.request
        };
        Self { request, ..self }
    }

    /// The arithmetic of an f32 product (see [`Precision`]; exact by default).
    pub fn precision(self, precision: Precision) -> Self {
        let request = Request {
            precision,
            ..self.request
        };
        Self { request, ..self }
    }

    /// Checks everything, chooses the kernel, queues the launch; returns what ran (`None`
    /// when there was nothing to do: an empty C or batch, or `k = 0` / `alpha = 0` with
    /// `beta = 1`). Errors leave C untouched.
    pub fn run(self) -> Result<Option<LaunchPlan>> {
        self.check_owners()?;
        let Some(indexed) = self.indexed()? else {
            return Ok(None);
        };
        let (plan, queued) = self.queue(indexed, Chooser::Rule)?;
        Ok(queued.then_some(plan))
    }

    /// The product `matmul` makes, of whole matrices (views of three [`DeviceMatrix`]es):
    /// its kernel, unless named, the one `matmul` chose for the shape before, or chooses and
    /// remembers now. Returns what runs, or, for an empty C, what would have run.
    ///
    /// [`DeviceMatrix`]: crate::DeviceMatrix
    pub(crate) fn run_whole(self) -> Result<LaunchPlan> {
        self.check_owners()?;
        let norm = self.whole()?;
        Ok(self.queue(Indexed::one(norm), Chooser::Remembered)?.0)
    }

    fn check_owners(&self) -> Result<()> {
        let device = &self.ctx.device;
        let buffers = self.a.iter().map(|v| v.buf.context());
        let buffers = buffers.chain(self.b.iter().map(|v| v.buf.context()));
        for owner in buffers.chain(self.c.iter().map(|v| v.buf.context())) {
            device.check_owner(owner)?;
        }
        Ok(())
    }

    /// The views laid out for the kernels; `None` for an empty list.
    fn indexed(&self) -> Result<Option<Indexed>> {
        let scalars = (self.alpha, self.beta);
        if !self.list {
            let (a, b, c) = (&self.a[0], &self.b[0], &self.c[0]);
            let layouts = (a.layout, b.layout, c.layout);
            let lens = (a.len, b.len, c.len);
            let norm = Normalized::new(layouts, lens, self.batch, scalars)?;
            return Ok(Some(Indexed::one(norm)));
        }
        let a: Vec<_> = self.a.iter().map(|v| (v.layout, v.len)).collect();
        let b: Vec<_> = self.b.iter().map(|v| (v.layout, v.len)).collect();
        let c: Vec<_> = self.c.iter().map(|v| (v.layout, v.len)).collect();
        if self.batch != Batch::ONE {
            return Err(Error::BatchMismatch {
                reason: "a list of views is its own batch; a stride cannot be added".into(),
            });
        }
        Indexed::new((&a, &b, &c), scalars)
    }

    /// Whole dense row-major matrices laid out for the kernels ([`Normalized::whole`]), their
    /// shapes checked.
    fn whole(&self) -> Result<Normalized> {
        let (a, b, c) = (self.a[0].layout, self.b[0].layout, self.c[0].layout);
        let (m, n, k) = product_dims(a.shape(), b.shape())?;
        check_output_shape(c.shape(), m, n)?;
        let dim = |x: usize| (x <= MAX_DIM).then_some(x as u32);
        let (Some(m32), Some(n32), Some(k32)) = (dim(m), dim(n), dim(k)) else {
            // The error the launch gives for such a shape, as `matmul` reports it.
            self.ctx.check_launch::<T>((m, n, k), self.request)?;
            return Err(Error::ShapeTooLarge {
                m,
                n,
                k,
                reason: format!("each dimension must be at most {MAX_DIM}"),
            });
        };
        Ok(Normalized::whole((m32, n32, k32)))
    }

    /// Prepares the product and queues it unless there is nothing to do: what it runs as,
    /// and whether it was queued.
    fn queue(self, indexed: Indexed, chooser: Chooser) -> Result<(LaunchPlan, bool)> {
        let ctx = self.ctx;
        let product = ctx.prepare::<T, O>(indexed, self.request, chooser)?;
        let plan = product.plan();
        if product.indexed.norm.nothing {
            return Ok((plan, false));
        }
        let stream = ctx.stream();
        let a: Vec<_> = self.a.iter().map(|v| v.buf.device_ptr(stream)).collect();
        let b: Vec<_> = self.b.iter().map(|v| v.buf.device_ptr(stream)).collect();
        let mut c = self.c;
        let c: Vec<_> = c.iter_mut().map(|v| v.buf.device_ptr_mut(stream)).collect();
        let starts: Vec<_> = (0..c.len()).map(|z| (a[z].0, b[z].0, c[z].0)).collect();
        // SAFETY: the product was laid out for these views: `Normalized::new` (per list
        // entry: `Indexed::new`; whole matrices: their shapes, checked by `whole`, are their
        // buffers') checked every product's views against their buffers, and that C's
        // products do not overlap; C is borrowed mutably, so no operand is in its buffer, and
        // a list's Cs are distinct mutable borrows.
        unsafe { ctx.launch::<T, O>(product, &starts) }?;
        Ok((plan, true))
    }
}
