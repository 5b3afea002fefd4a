//! ndarray interop (feature `ndarray`): 2-D array views in, arrays out.
//!
//! A view whose elements are contiguous in row-major or column-major order (a standard
//! array, or its transpose `.t()`) is uploaded as it is and read in place with that layout;
//! any other view (a slice with steps, a column block of a row-major array) is gathered
//! into a dense row-major buffer first, since its elements are not one span of memory.
use crate::context::Context;
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::matrix::{DeviceMatrix, Matrix};
use crate::view::MatrixLayout;
use ndarray::{Array2, ArrayView2};

/// The elements of `a` as one span, with the layout that reads them as `a`: row-major for a
/// standard-layout view, column-major for a transposed one; `None` when they are not one
/// contiguous span in either order.
pub fn dense_layout<'a, T>(a: &ArrayView2<'a, T>) -> Option<(&'a [T], MatrixLayout)> {
    let (rows, cols) = a.dim();
    if let Some(data) = a.to_slice() {
        return Some((data, MatrixLayout::row_major(rows, cols)));
    }
    let t = a.reversed_axes();
    t.to_slice()
        .map(|data| (data, MatrixLayout::col_major(rows, cols)))
}

impl Context {
    /// Copies a 2-D array view to the device: its span as it is where it has one
    /// ([`dense_layout`]), else its elements gathered in row-major order. Returns the
    /// device buffer (one row) and the layout that reads it as `a`.
    pub fn upload_ndarray<T: Element>(
        &self,
        a: &ArrayView2<T>,
    ) -> Result<(DeviceMatrix<T>, MatrixLayout)> {
        let (data, layout) = match dense_layout(a) {
            Some((data, layout)) => (data.to_vec(), layout),
            None => {
                let (rows, cols) = a.dim();
                (
                    a.iter().copied().collect(),
                    MatrixLayout::row_major(rows, cols),
                )
            }
        };
        let len = data.len();
        Ok((self.upload(&Matrix::from_vec(1, len, data)?)?, layout))
    }

    /// `A B` of two array views (any strides; transposed views are read in place), as a
    /// new row-major array, by [`Context::gemm`]'s choice of kernel.
    ///
    /// ```no_run
    /// # fn main() -> rgemm::Result<()> {
    /// use ndarray::Array2;
    /// let ctx = rgemm::Context::new(0)?;
    /// let a = Array2::<f32>::from_shape_fn((64, 32), |(i, j)| (i + j) as f32);
    /// let b = Array2::<f32>::from_shape_fn((64, 48), |(i, j)| i as f32 - j as f32);
    /// let c = ctx.matmul_ndarray(&a.t(), &b.view())?; // A^T B: 32 x 48, no copy of A^T
    /// assert_eq!(c.dim(), (32, 48));
    /// # Ok(())
    /// # }
    /// ```
    pub fn matmul_ndarray<T: Element>(
        &self,
        a: &ArrayView2<T>,
        b: &ArrayView2<T>,
    ) -> Result<Array2<T::Out>> {
        self.matmul_ndarray_as::<T, T::Out>(a, b)
    }

    /// [`Context::matmul_ndarray`] with C of type `O` ([`Output`]).
    pub fn matmul_ndarray_as<T: Element, O: Output<T>>(
        &self,
        a: &ArrayView2<T>,
        b: &ArrayView2<T>,
    ) -> Result<Array2<O>> {
        let ((m, _), (_, n)) = (a.dim(), b.dim());
        let (da, la) = self.upload_ndarray(a)?;
        let (db, lb) = self.upload_ndarray(b)?;
        let mut dc = self.zeros::<O>(m, n)?;
        self.gemm(da.view_as(la)?, db.view_as(lb)?, dc.view_mut())
            .run()?;
        let c = self.download(&dc)?;
        let len = m * n;
        Array2::from_shape_vec((m, n), c.into_vec()).map_err(|_| Error::LengthMismatch {
            rows: m,
            cols: n,
            expected: len,
            len,
        })
    }
}
