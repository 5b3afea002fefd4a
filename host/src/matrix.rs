//! Row-major matrices on the host ([`Matrix`]) and on the device ([`DeviceMatrix`]).
use crate::element::Scalar;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaSlice};
use std::sync::Arc;

/// `rows * cols`, or an error if it does not fit in `usize`.
pub(crate) fn element_count(rows: usize, cols: usize) -> Result<usize> {
    rows.checked_mul(cols)
        .ok_or(Error::ElementCountOverflow { rows, cols })
}

/// A `LengthMismatch` unless a buffer of `len` elements `fits` a `rows x cols` matrix
/// (given its element count).
fn check_len(rows: usize, cols: usize, len: usize, fits: impl FnOnce(usize) -> bool) -> Result<()> {
    let expected = element_count(rows, cols)?;
    if !fits(expected) {
        return Err(Error::LengthMismatch {
            rows,
            cols,
            expected,
            len,
        });
    }
    Ok(())
}

/// `rows`, `cols` and `shape` of a matrix type with `rows` and `cols` fields.
macro_rules! shape_methods {
    () => {
        pub fn rows(&self) -> usize {
            self.rows
        }

        pub fn cols(&self) -> usize {
            self.cols
        }

        /// `(rows, cols)`
        pub fn shape(&self) -> (usize, usize) {
            (self.rows, self.cols)
        }
    };
}

/// A row-major matrix in host memory: element `(r, c)` is `data[r * cols + c]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<T> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

impl<T: Copy> Matrix<T> {
    /// Takes `data` as a `rows x cols` row-major matrix; its length must be `rows * cols`.
    pub fn from_vec(rows: usize, cols: usize, data: Vec<T>) -> Result<Self> {
        check_len(rows, cols, data.len(), |expected| data.len() == expected)?;
        Ok(Self { rows, cols, data })
    }

    /// A matrix whose element `(r, c)` is `f(r, c)`.
    pub fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> T) -> Result<Self> {
        element_count(rows, cols)?;
        let data = (0..rows)
            .flat_map(|r| (0..cols).map(move |c| (r, c)))
            .map(|(r, c)| f(r, c))
            .collect();
        Ok(Self { rows, cols, data })
    }

    shape_methods!();

    /// Element `(row, col)`, or `None` outside the matrix.
    pub fn get(&self, row: usize, col: usize) -> Option<T> {
        (row < self.rows && col < self.cols).then(|| self.data[row * self.cols + col])
    }

    /// The elements, row-major.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    pub fn into_vec(self) -> Vec<T> {
        self.data
    }
}

impl<T: Scalar> Matrix<T> {
    /// A `rows x cols` matrix of values uniform in [-1, 1), rounded to `T`, drawn from a
    /// generator seeded with `seed` (the same seed gives the same matrix).
    pub fn random(rows: usize, cols: usize, seed: u64) -> Result<Self> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        Self::from_fn(rows, cols, |_, _| T::from_f64(rng.random_range(-1.0..1.0)))
    }

    /// A `rows x cols` matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Result<Self> {
        let len = element_count(rows, cols)?;
        Ok(Self {
            rows,
            cols,
            data: vec![T::default(); len],
        })
    }
}

/// A row-major matrix in device memory, owned by one [`Context`](crate::Context).
///
/// Made by [`Context::upload`](crate::Context::upload) or
/// [`Context::zeros`](crate::Context::zeros), read back by
/// [`Context::download`](crate::Context::download).
#[derive(Debug)]
pub struct DeviceMatrix<T> {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    /// Never empty: a matrix with no elements holds one unused element, since the driver
    /// does not allocate zero bytes.
    pub(crate) buf: CudaSlice<T>,
}

impl<T> DeviceMatrix<T> {
    shape_methods!();

    pub(crate) fn len(&self) -> usize {
        self.rows * self.cols
    }

    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        self.buf.context()
    }

    /// The device buffer, for use with other cudarc-based code.
    pub fn as_cuda_slice(&self) -> &CudaSlice<T> {
        &self.buf
    }

    /// The device buffer, writable (its first `rows * cols` elements are the matrix, row
    /// by row).
    pub fn as_cuda_slice_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.buf
    }

    /// A `rows x cols` row-major matrix over a cudarc buffer of `rows * cols` elements,
    /// without a copy (a matrix with no elements takes a buffer of at most one); an error
    /// if the length differs.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), rgemm::Error> {
    /// let ctx = rgemm::Context::new(0)?;
    /// let buf = ctx.stream().alloc_zeros::<f32>(32 * 16).map_err(rgemm::Error::from)?;
    /// let m = rgemm::DeviceMatrix::from_cuda_slice(buf, 32, 16)?;
    /// let buf = m.into_cuda_slice(); // and back, still on the device
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_cuda_slice(buf: CudaSlice<T>, rows: usize, cols: usize) -> Result<Self> {
        let len = buf.len();
        check_len(rows, cols, len, |expected| {
            len == expected || (expected == 0 && len <= 1)
        })?;
        Ok(Self { rows, cols, buf })
    }

    /// The device buffer, given up by the matrix (one unused element if the matrix has
    /// none).
    pub fn into_cuda_slice(self) -> CudaSlice<T> {
        self.buf
    }
}
