//! A batch of independent products (cuBLAS's `gemmBatched`): a list of views per operand,
//! all of one shape, leading dimension and layout, each product anywhere in a buffer of its
//! own. One launch computes them all: the kernels find product `z`'s operands through a
//! table of offsets ([`Problem::batch_table`](rgemm_kernels::problem::Problem)) instead of
//! a stride.
use crate::context::Context;
use crate::element::{Element, Output};
use crate::gemm::GemmCall;
use crate::view::{DeviceView, DeviceViewMut};

impl Context {
    /// A batch of independent products, `C_i = alpha op(A_i) op(B_i) + beta C_i` (cuBLAS's
    /// `gemmBatched`, whose arrays of pointers are these lists of views), in one launch.
    /// The views of one operand share their shape, leading dimension and layout, but each
    /// may lie anywhere in any buffer; each C in a buffer of its own (its view borrows it
    /// mutably). Set `alpha`, `beta`, a kernel or a precision as for [`Context::gemm`];
    /// lists of different lengths or of differing views are an
    /// [`Error::BatchMismatch`](crate::Error::BatchMismatch). The kernel reads each product
    /// in place through a table of offsets that the call copies to the device (on the
    /// stream, before the launch).
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
