//! A product laid out for the kernels: the caller's views checked against their buffers and
//! the batch, and turned into one problem block ([`Normalized`]); a list of views (a batch
//! of independent products) into product 0's problem and a table of offsets ([`Indexed`]).
//!
//! A column-major C is a row-major C^T: `C^T = op(B)^T op(A)^T`, so the kernels only ever
//! write row-major C, and read A and B each row-major or transposed.
use crate::error::{Error, Result};
use crate::kernels::{Kernel, MAX_DIM};
use crate::layout::Layout;
use crate::view::{Batch, DeviceView, DeviceViewMut, MatrixLayout};
use rgemm_kernels::problem::{Problem, TRANSPOSED_A, TRANSPOSED_B};

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
    /// A batch of independent views (`Context::gemm_batched`), whose products the
    /// kernels find through a table of offsets: the greatest common divisor of the
    /// products' offsets per operand (kernel order; 0 if all are 0), which says how they
    /// are aligned. `None` for one product or a strided batch.
    pub table: Option<(usize, usize, usize)>,
}

impl Normalized {
    /// Whole dense row-major matrices, `C = A B` of `m x k` by `k x n`: the plain problem,
    /// even where a dimension is 0 (where views' leading dimension of 1 would make it a
    /// strided product, which fewer kernels compute).
    pub fn whole((m, n, k): (u32, u32, u32)) -> Self {
        Self {
            problem: Problem::row_major(m, n, k),
            swapped: false,
            offsets: (0, 0, 0),
            nothing: m == 0 || n == 0,
            table: None,
        }
    }

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

    /// Whether it is one dense product with B transposed from the start of whole buffers
    /// ([`Problem::is_dense_unscaled_b_transposed`]), which the
    /// [`KernelSpec::b_transposed`](crate::KernelSpec::b_transposed) kernels read.
    pub fn is_dense_b_transposed(&self) -> bool {
        let p = &self.problem;
        self.table.is_none()
            && self.offsets == (0, 0, 0)
            && p.batch == 1
            && p.is_dense_unscaled_b_transposed()
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
        let b_transposed = kernel.spec().b_transposed && self.is_dense_b_transposed();
        if !kernel.spec().strided && !plain && !b_transposed {
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
        // (A kernel that packs A and B first reads the packed copies through its maps.)
        if kernel.spec().tma.is_some_and(|maps| maps.pack.is_none())
            && !plain
            && !rgemm_kernels::device::tma::reads(
                &self.problem,
                self.device_ab(bytes.0),
                bytes.0 as u64,
            )
        {
            return Err(Error::UnsupportedForm {
                kernel: kernel.to_string(),
                reason: "it reads A and B through tensor maps, which need 16-byte aligned operands and leading dimensions and batch strides of whole 16-byte units".into(),
            });
        }
        kernel.check_form(&self.problem)
    }

    /// The kernel that computes this product on the device for `kernel`
    /// ([`Kernel::runs_as`]), once [`Normalized::check_kernel`] accepts it.
    pub fn runs_as(&self, kernel: Kernel, bytes: (usize, usize)) -> Result<Kernel> {
        kernel.runs_as(&self.problem, self.device_ab(bytes.0), bytes.0)
    }

    /// The kernels' A and B as device addresses modulo 256 (elements of `in_bytes`): device
    /// buffers start 256-byte aligned, so the offsets decide the operands' alignment.
    pub(crate) fn device_ab(&self, in_bytes: usize) -> (u64, u64) {
        let (oa, ob, _) = self.offsets;
        let at = |offset: usize| (offset * in_bytes) as u64;
        (at(oa), at(ob))
    }
}
/// The views of a list of products: A's, B's and C's.
pub(crate) type DeviceLists<'v, T, O> = (
    Vec<DeviceView<'v, T>>,
    Vec<DeviceView<'v, T>>,
    Vec<DeviceViewMut<'v, O>>,
);

/// One product's view of an operand as [`Indexed::new`] checks it: its layout, and the
/// length of its buffer.
pub type ViewOf = (MatrixLayout, usize);

/// What [`Indexed::table`] gives: the kernels' A, B and C of product 0, and the table.
pub type Table = ((u64, u64, u64), Option<Vec<u64>>);

/// A product or a batch laid out for the kernels: the problem of product 0 (with the
/// batch's count), and every product's offsets in its buffers.
#[derive(Clone, Debug)]
pub struct Indexed {
    pub norm: Normalized,
    /// Per product, the element offsets of the kernels' A, B and C in their buffers.
    offsets: Vec<(usize, usize, usize)>,
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Indexed {
    /// One product, or a strided batch.
    pub fn one(norm: Normalized) -> Self {
        Self {
            offsets: vec![norm.offsets],
            norm,
        }
    }

    /// A list of products: `(layout, buffer length)` of each product's A, B and C. Every
    /// view is checked against its buffer, and the products must agree in shape, leading
    /// dimensions and layouts (as cuBLAS's `gemmBatched` takes one `m, n, k, lda, ldb,
    /// ldc` and one `op` per operand for all). `None` for an empty list. The Cs need no
    /// overlap check: each is a view of its own mutably borrowed buffer.
    pub fn new(
        (a, b, c): (&[ViewOf], &[ViewOf], &[ViewOf]),
        scalars: (f64, f64),
    ) -> Result<Option<Self>> {
        let count = a.len();
        if b.len() != count || c.len() != count {
            return Err(Error::BatchMismatch {
                reason: format!(
                    "{} views of A, {} of B and {} of C: one of each per product",
                    a.len(),
                    b.len(),
                    c.len()
                ),
            });
        }
        if count == 0 {
            return Ok(None);
        }
        let mut norm = Normalized::new(
            (a[0].0, b[0].0, c[0].0),
            (a[0].1, b[0].1, c[0].1),
            Batch::ONE,
            scalars,
        )?;
        // The others differ from product 0 in their offsets only: checked against their
        // buffers, not laid out again (a list of 512 is 512 checks on the host).
        let same = |x: &MatrixLayout, first: &MatrixLayout| x.at(0) == first.at(0);
        let mut offsets = Vec::with_capacity(count);
        let mut common = (0, 0, 0);
        for z in 0..count {
            let (xa, xb, xc) = (&a[z].0, &b[z].0, &c[z].0);
            if !(same(xa, &a[0].0) && same(xb, &b[0].0) && same(xc, &c[0].0)) {
                return Err(Error::BatchMismatch {
                    reason: format!(
                        "product {z} ({xa:?} x {xb:?} -> {xc:?}) differs from product 0 ({:?} x {:?} -> {:?}) in shape, leading dimension or layout",
                        a[0].0, b[0].0, c[0].0
                    ),
                });
            }
            xa.check(a[z].1)?;
            xb.check(b[z].1)?;
            xc.check(c[z].1)?;
            let (oa, ob) = norm.ordered(xa.offset, xb.offset);
            common = (
                gcd(common.0, oa),
                gcd(common.1, ob),
                gcd(common.2, xc.offset),
            );
            offsets.push((oa, ob, xc.offset));
        }
        if count > 1 {
            norm.problem.batch = u32::try_from(count).map_err(|_| Error::ShapeTooLarge {
                m: a[0].0.rows,
                n: b[0].0.cols,
                k: a[0].0.cols,
                reason: format!("a batch of {count}"),
            })?;
            norm.table = Some(common);
        }
        Ok(Some(Self { norm, offsets }))
    }

    /// The kernels' A, B and C of product `z`, given where each product's caller buffers
    /// start (as [`Indexed::table`]).
    pub fn addresses<T, O>(&self, starts: &[(u64, u64, u64)], z: usize) -> (u64, u64, u64) {
        let norm = Normalized {
            offsets: self.offsets[z],
            ..self.norm
        };
        norm.addresses::<T, O>(starts[z])
    }

    /// Given where each product's caller buffers start (`starts[z]`: A's, B's and C's, of
    /// elements `T`, `T`, `O`), the kernels' A, B and C of product 0, and for a list of
    /// more than one product its table: per product the offsets of its A, B and C from
    /// product 0's, in elements, as `i64` bits.
    pub fn table<T, O>(&self, starts: &[(u64, u64, u64)]) -> Result<Table> {
        let at = |z: usize| self.addresses::<T, O>(starts, z);
        let first = at(0);
        if self.norm.table.is_none() {
            return Ok((first, None));
        }
        let apart = |x: u64, x0: u64, size: usize| {
            let d = x.wrapping_sub(x0) as i64;
            match d % size as i64 {
                0 => Ok((d / size as i64) as u64),
                _ => Err(Error::BatchMismatch {
                    reason: "a buffer that does not start at a whole element".into(),
                }),
            }
        };
        let (ea, ec) = (size_of::<T>(), size_of::<O>());
        let mut entries = Vec::with_capacity(3 * self.offsets.len());
        for z in 0..self.offsets.len() {
            let (a, b, c) = at(z);
            entries.push(apart(a, first.0, ea)?);
            entries.push(apart(b, first.1, ea)?);
            entries.push(apart(c, first.2, ec)?);
        }
        Ok((first, Some(entries)))
    }
}
