//! A batch of independent products (cuBLAS's `gemmBatched`): a list of views per operand,
//! all of one shape, leading dimension and layout, each product anywhere in a buffer of its
//! own. One launch computes them all: the kernels find product `z`'s operands through a
//! table of offsets ([`Problem::batch_table`](rgemm_kernels::problem::Problem)) instead of
//! a stride.
use crate::context::Context;
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::gemm::{GemmCall, Normalized};
use crate::view::{Batch, DeviceView, DeviceViewMut, MatrixLayout};

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

impl Context {
    /// A batch of independent products, `C_i = alpha op(A_i) op(B_i) + beta C_i` (cuBLAS's
    /// `gemmBatched`, whose arrays of pointers are these lists of views), in one launch.
    /// The views of one operand share their shape, leading dimension and layout, but each
    /// may lie anywhere in any buffer; each C in a buffer of its own (its view borrows it
    /// mutably). Set `alpha`, `beta`, a kernel or a precision as for [`Context::gemm`];
    /// lists of different lengths or of differing views are an
    /// [`Error::BatchMismatch`]. The kernel reads each product in place through a table of
    /// offsets that the call copies to the device (on the stream, before the launch).
    /// The TMA kernels read one address per operand and do not take such a batch: the rule
    /// chooses among the others.
    ///
    /// ```no_run
    /// # fn main() -> rgemm::Result<()> {
    /// use rgemm::{Context, Matrix};
    /// let ctx = Context::new(0)?;
    /// let a: Vec<_> = (0..4)
    ///     .map(|i| ctx.upload(&Matrix::<f32>::random(64, 32, i)?))
    ///     .collect::<rgemm::Result<_>>()?;
    /// let b = ctx.upload(&Matrix::<f32>::random(32, 48, 9)?)?; // shared by all four
    /// let mut c: Vec<_> = (0..4).map(|_| ctx.zeros::<f32>(64, 48)).collect::<rgemm::Result<_>>()?;
    /// ctx.gemm_batched(
    ///     a.iter().map(|a| a.view()),
    ///     (0..4).map(|_| b.view()),
    ///     c.iter_mut().map(|c| c.view_mut()),
    /// )
    /// .run()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn gemm_batched<'c, 'v, T: Element, O: Output<T>>(
        &'c self,
        a: impl IntoIterator<Item = DeviceView<'v, T>>,
        b: impl IntoIterator<Item = DeviceView<'v, T>>,
        c: impl IntoIterator<Item = DeviceViewMut<'v, O>>,
    ) -> GemmCall<'c, 'v, T, O> {
        let lists = (
            a.into_iter().collect(),
            b.into_iter().collect(),
            c.into_iter().collect(),
        );
        GemmCall::of(self, lists, true)
    }
}
