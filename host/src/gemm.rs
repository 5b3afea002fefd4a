//! The general product `C = alpha op(A) op(B) + beta C` over views and strided batches:
//! how it becomes one kernel's problem block ([`Normalized`]), and the CPU reference for it.
//!
//! A column-major C is a row-major C^T: `C^T = op(B)^T op(A)^T`, so the kernels only ever
//! write row-major C, and read A and B each row-major or transposed.
use crate::batched::{DeviceLists, Indexed};
use crate::context::{Context, LaunchPlan, plan};
use crate::element::{Element, Output, Scalar};
use crate::error::{Error, Result};
use crate::kernels::{Kernel, MAX_DIM, Precision};
use crate::layout::Layout;
use crate::view::{Batch, DeviceView, DeviceViewMut, MatrixLayout, MatrixView, MatrixViewMut};
use rgemm_kernels::problem::{Problem, TRANSPOSED_A, TRANSPOSED_B};
use std::sync::Arc;

/// A product as the kernels take it: the problem block, whether A and B trade places (a
/// column-major C), and the element offsets of the kernels' A, B and C in their buffers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normalized {
    pub problem: Problem,
    /// The kernel's A is the caller's B (and its B the caller's A).
    pub swapped: bool,
    pub offsets: (usize, usize, usize),
    /// Nothing to do: an empty C or batch, or `C = 1 C` (k = 0 or alpha = 0, beta = 1).
    pub nothing: bool,
    /// A batch of independent views ([`Context::gemm_batched`]), whose products the
    /// kernels find through a table of offsets: the greatest common divisor of the
    /// products' offsets per operand (kernel order; 0 if all are 0), which says how they
    /// are aligned. `None` for one product or a strided batch.
    pub table: Option<(usize, usize, usize)>,
}

impl Normalized {
    /// Checks the views against their buffers (`lens`: elements of A's, B's and C's) and the
    /// batch, and lays the product out for the kernels. Errors before any work.
    pub fn new(
        (a, b, c): (MatrixLayout, MatrixLayout, MatrixLayout),
        lens: (usize, usize, usize),
        batch: Batch,
        (alpha, beta): (f64, f64),
    ) -> Result<Self> {
        let (m, k, n) = (a.rows, a.cols, b.cols);
        if b.rows != k {
            return Err(Error::InnerDimensionMismatch {
                a_rows: a.rows,
                a_cols: a.cols,
                b_rows: b.rows,
                b_cols: b.cols,
            });
        }
        if c.shape() != (m, n) {
            return Err(Error::OutputShapeMismatch {
                rows: c.rows,
                cols: c.cols,
                expected_rows: m,
                expected_cols: n,
            });
        }
        batch.check_operand(&a, batch.stride_a, lens.0)?;
        batch.check_operand(&b, batch.stride_b, lens.1)?;
        batch.check_operand(&c, batch.stride_c, lens.2)?;
        batch.check_disjoint(&c)?;
        let too_large = |reason: String| Error::ShapeTooLarge { m, n, k, reason };
        let u32_of = |x: usize, what: &str| {
            u32::try_from(x)
                .ok()
                .filter(|&x| x as usize <= MAX_DIM)
                .ok_or_else(|| {
                    too_large(format!("{what} {x} is beyond the kernels' 32-bit indices"))
                })
        };
        // A column-major C: compute C^T = op(B)^T op(A)^T, row-major.
        let swapped = c.layout == Layout::ColMajor;
        let (ka, kb, kc, strides) = match swapped {
            false => (a, b, c, (batch.stride_a, batch.stride_b)),
            true => (b.t(), a.t(), c.t(), (batch.stride_b, batch.stride_a)),
        };
        let nothing =
            m == 0 || n == 0 || batch.count == 0 || ((k == 0 || alpha == 0.0) && beta == 1.0);
        // alpha = 0: A and B are not read (BLAS), so an Inf or NaN there does not reach C.
        let k_run = if alpha == 0.0 { 0 } else { k };
        let bit = |l: &MatrixLayout, bit: u32| if l.layout == Layout::ColMajor { bit } else { 0 };
        let layout = bit(&ka, TRANSPOSED_A) | bit(&kb, TRANSPOSED_B);
        let problem = Problem {
            m: u32_of(kc.rows, "a dimension")?,
            n: u32_of(kc.cols, "a dimension")?,
            k: u32_of(k_run, "a dimension")?,
            lda: u32_of(ka.ld, "a leading dimension")?,
            ldb: u32_of(kb.ld, "a leading dimension")?,
            ldc: u32_of(kc.ld, "a leading dimension")?,
            layout,
            tile: 0,
            ctas: 0,
            batch: u32::try_from(batch.count.max(1))
                .map_err(|_| too_large(format!("a batch of {}", batch.count)))?,
            batch_stride_a: strides.0 as u64,
            batch_stride_b: strides.1 as u64,
            batch_stride_c: batch.stride_c as u64,
            batch_table: 0,
            alpha,
            beta,
        };
        Ok(Self {
            problem,
            swapped,
            offsets: (ka.offset, kb.offset, kc.offset),
            nothing,
            table: None,
        })
    }

    /// Whether it is the one form every kernel computes: one dense, row-major `C = A B` of
    /// whole buffers (elements of `in_bytes` and `out_bytes`). A batch of such products
    /// whose strides keep every product 16-byte aligned is plain too (the kernels whose
    /// grid is one block per tile run it).
    ///
    /// A batch of independent views is plain when it is dense and unscaled and every
    /// product's operands start 16-byte aligned (device buffers start 256-byte aligned).
    pub fn is_plain(&self, (in_bytes, out_bytes): (usize, usize)) -> bool {
        let p = &self.problem;
        let whole = |elements: usize, bytes: usize| (elements * bytes).is_multiple_of(16);
        let aligned = |(a, b, c): (usize, usize, usize)| {
            whole(a, in_bytes) && whole(b, in_bytes) && whole(c, out_bytes)
        };
        let strides = (
            p.batch_stride_a as usize,
            p.batch_stride_b as usize,
            p.batch_stride_c as usize,
        );
        let products = match self.table {
            Some(gcd) => aligned(gcd),
            None => self.offsets == (0, 0, 0) && (p.batch == 1 || aligned(strides)),
        };
        p.is_dense_unscaled() && products
    }

    /// The kernels' A and B: the caller's, or the other way round for a column-major C.
    pub fn ordered<X>(&self, a: X, b: X) -> (X, X) {
        match self.swapped {
            false => (a, b),
            true => (b, a),
        }
    }

    /// Device addresses of the kernels' A, B and C, given the starts of the caller's A, B
    /// and C buffers (elements of `T` and `O`).
    pub fn addresses<T, O>(&self, (pa, pb, pc): (u64, u64, u64)) -> (u64, u64, u64) {
        let (ea, ec) = (size_of::<T>() as u64, size_of::<O>() as u64);
        let (oa, ob, oc) = self.offsets;
        let (ka, kb) = self.ordered(pa, pb);
        (
            ka + oa as u64 * ea,
            kb + ob as u64 * ea,
            pc + oc as u64 * ec,
        )
    }

    /// Whether `kernel` computes this product as laid out ([`Error::UnsupportedForm`] if
    /// not): a kernel that is not [`KernelSpec::strided`](crate::KernelSpec::strided)
    /// takes plain products only.
    pub fn check_kernel(&self, kernel: Kernel, bytes: (usize, usize)) -> Result<()> {
        let plain = self.is_plain(bytes);
        if !kernel.spec().strided && !plain {
            return Err(Error::UnsupportedForm {
                kernel: kernel.to_string(),
                reason: "it reads only dense, row-major operands from the start of their buffers and computes C = A B".into(),
            });
        }
        if self.table.is_some() && kernel.spec().tma.is_some() {
            return Err(Error::UnsupportedForm {
                kernel: kernel.to_string(),
                reason: "it reads A and B through tensor maps of one address each, and the products of a batch of views lie anywhere".into(),
            });
        }
        // Device buffers start 256-byte aligned: the offsets decide the operands' alignment.
        let (oa, ob, _) = self.offsets;
        let at = |offset: usize| (offset * bytes.0) as u64;
        // (A kernel that packs A and B first reads the packed copies through its maps.)
        if kernel.spec().tma.is_some_and(|maps| maps.pack.is_none())
            && !plain
            && !rgemm_kernels::device::tma::reads(&self.problem, (at(oa), at(ob)), bytes.0 as u64)
        {
            return Err(Error::UnsupportedForm {
                kernel: kernel.to_string(),
                reason: "it reads A and B through tensor maps, which need 16-byte aligned operands and leading dimensions and batch strides of whole 16-byte units".into(),
            });
        }
        kernel.check_form(&self.problem)
    }
}

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
