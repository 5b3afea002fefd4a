//! The general product `C = alpha op(A) op(B) + beta C` over views and strided batches:
//! the call that runs it ([`GemmCall`]; its layout for the kernels is [`Normalized`]), and
//! the CPU reference for it.
//!
//! A column-major C is a row-major C^T: `C^T = op(B)^T op(A)^T`, so the kernels only ever
//! write row-major C, and read A and B each row-major or transposed.
use crate::context::{Context, LaunchPlan, plan};
use crate::element::{Element, Output, Scalar};
use crate::error::{Error, Result};
use crate::kernels::{Kernel, Precision};
use crate::normalize::{DeviceLists, Indexed, Normalized};
use crate::view::{Batch, DeviceView, DeviceViewMut, MatrixView, MatrixViewMut};
use std::sync::Arc;

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
    kernel: Option<Kernel>,
    precision: Precision,
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
            kernel: None,
            precision: Precision::Exact,
        }
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
        Self {
            kernel: Some(kernel),
            ..self
        }
    }

    /// The arithmetic of an f32 product (see [`Precision`]; exact by default).
    pub fn precision(self, precision: Precision) -> Self {
        Self { precision, ..self }
    }

    /// Checks everything, chooses the kernel, queues the launch; returns what ran (`None`
    /// when there was nothing to do: an empty C or batch, or `k = 0` / `alpha = 0` with
    /// `beta = 1`). Errors leave C untouched.
    pub fn run(self) -> Result<Option<LaunchPlan>> {
        let ctx = self.ctx;
        let buffers = self.a.iter().map(|v| v.buf.context());
        let buffers = buffers.chain(self.b.iter().map(|v| v.buf.context()));
        for owner in buffers.chain(self.c.iter().map(|v| v.buf.context())) {
            if !Arc::ptr_eq(owner, ctx.cuda_context()) {
                return Err(Error::ForeignMatrix);
            }
        }
        let scalars = (self.alpha, self.beta);
        let indexed = match self.list {
            true => {
                let a: Vec<_> = self.a.iter().map(|v| (v.layout, v.len)).collect();
                let b: Vec<_> = self.b.iter().map(|v| (v.layout, v.len)).collect();
                let c: Vec<_> = self.c.iter().map(|v| (v.layout, v.len)).collect();
                if self.batch != Batch::ONE {
                    return Err(Error::BatchMismatch {
                        reason: "a list of views is its own batch; a stride cannot be added".into(),
                    });
                }
                match Indexed::new((&a, &b, &c), scalars)? {
                    Some(indexed) => indexed,
                    None => return Ok(None),
                }
            }
            false => {
                let (a, b, c) = (&self.a[0], &self.b[0], &self.c[0]);
                let layouts = (a.layout, b.layout, c.layout);
                let lens = (a.len, b.len, c.len);
                Indexed::one(Normalized::new(layouts, lens, self.batch, scalars)?)
            }
        };
        let norm = indexed.norm;
        let bytes = (std::mem::size_of::<T>(), std::mem::size_of::<O>());
        let kernel = match self.kernel {
            Some(kernel) => kernel,
            None => ctx.choose_for::<T, O>(&norm, self.precision)?,
        };
        norm.check_kernel(kernel, bytes)?;
        let mut launches = kernel.launches_for::<T>(ctx.props(), norm.problem)?;
        if kernel.spec().precision != self.precision {
            return Err(Error::UnsupportedPrecision {
                precision: self.precision.name(),
                element: T::NAME,
                device: ctx.props().name.clone(),
                reason: format!(
                    "kernel {kernel} multiplies in {}",
                    kernel.spec().precision.name()
                ),
            });
        }
        let ready = ctx.resolve::<T, O>(kernel)?;
        if norm.nothing {
            return Ok(None);
        }
        let stream = ctx.stream();
        let a: Vec<_> = self.a.iter().map(|v| v.buf.device_ptr(stream)).collect();
        let b: Vec<_> = self.b.iter().map(|v| v.buf.device_ptr(stream)).collect();
        let mut c = self.c;
        let c: Vec<_> = c.iter_mut().map(|v| v.buf.device_ptr_mut(stream)).collect();
        let starts: Vec<_> = (0..c.len()).map(|z| (a[z].0, b[z].0, c[z].0)).collect();
        let (first, table) = indexed.table::<T, O>(&starts)?;
        let _table = match table {
            Some(entries) => {
                let (at, lock) = ctx.upload_table(&entries)?;
                launches.problem.batch_table = at;
                Some(lock)
            }
            None => None,
        };
        // SAFETY: `Normalized::new` (per list entry: `Indexed::new`) checked every product's
        // views against their buffers, and that C's products do not overlap; C is borrowed
        // mutably, so no operand is in its buffer, and a list's Cs are distinct mutable
        // borrows. `check_kernel` refused kernels that cannot read this form, and the table,
        // where there is one, gives each product's operands (`Indexed::table`).
        unsafe { ctx.launch_at::<T>(kernel, first, &ready, &launches)? };
        Ok(Some(plan(kernel, &ready, &launches.main)))
    }
}

impl Context {
    /// The kernel for a product nobody named: `matmul`'s timed choice for a plain product
    /// of a shape it has timed, else the first of [`crate::heuristic::preference`] that can
    /// launch it.
    pub(crate) fn choose_for<T: Element, O: Output<T>>(
        &self,
        norm: &Normalized,
        precision: Precision,
    ) -> Result<Kernel> {
        let p = &norm.problem;
        let (m, n, k) = (p.m as usize, p.n as usize, p.k as usize);
        let bytes = (std::mem::size_of::<T>(), std::mem::size_of::<O>());
        if norm.is_plain(bytes)
            && p.batch == 1
            && let Some(kernel) = self.chosen_kernel_in::<T, O>(m, n, k, precision)
        {
            return Ok(kernel);
        }
        let fits = |kernel: &Kernel| {
            let spec = kernel.spec();
            spec.precision == precision
                && (kernel.is_candidate(m, n) || *kernel == Kernel::Naive)
                && norm.check_kernel(*kernel, bytes).is_ok()
        };
        if let Some(kernel) = self.tuned::<T, O>(norm, precision, &fits)? {
            return Ok(kernel);
        }
        let narrow_c = std::mem::size_of::<O>() < std::mem::size_of::<T::Out>();
        let order = crate::heuristic::preference_for::<T>(self.props(), p, precision, narrow_c);
        order
            .into_iter()
            .filter(fits)
            .find(|kernel| kernel.launches_for::<T>(self.props(), *p).is_ok())
            .ok_or_else(|| match precision {
                Precision::Exact => Error::UnsupportedForm {
                    kernel: "any".into(),
                    reason: format!("no kernel of this device computes this product ({m}x{n}x{k})"),
                },
                _ => Error::UnsupportedPrecision {
                    precision: precision.name(),
                    element: T::NAME,
                    device: self.props().name.clone(),
                    reason: "no kernel of this precision computes this form of product".into(),
                },
            })
    }
}
