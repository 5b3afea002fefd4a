//! Views: a matrix inside a buffer (rows, columns, leading dimension, offset, row- or
//! column-major), read and written in place by [`Context::gemm`](crate::Context::gemm),
//! and batches of them.
//!
//! A view is checked against its buffer when it is made, so a product never reads or writes
//! past a buffer. A transposed operand is a view too: [`DeviceView::t`] swaps rows and
//! columns and flips the layout over the same elements (cuBLAS's `op(A) = A^T`).
use crate::element::Scalar;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::matrix::{DeviceMatrix, Matrix};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut,
    DeviceSlice, SyncOnDrop,
};
use std::marker::PhantomData;
use std::sync::Arc;

/// Where a `rows x cols` matrix lies in a buffer (no buffer: plain data, checked by the views
/// that hold it).
///
/// ```
/// use rgemm::{Layout, MatrixLayout};
/// // Rows 1..3, columns 2..6 of a 4 x 8 row-major matrix:
/// let part = MatrixLayout::row_major(4, 8).sub(1, 2, 2, 4).unwrap();
/// assert_eq!((part.rows, part.cols, part.ld, part.offset), (2, 4, 8, 10));
/// // Its transpose: the same elements, 4 x 2, column-major.
/// let t = part.t();
/// assert_eq!((t.rows, t.cols, t.layout), (4, 2, Layout::ColMajor));
/// assert_eq!(t.index(3, 1), part.index(1, 3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixLayout {
    pub rows: usize,
    pub cols: usize,
    /// Elements between consecutive rows (row-major) or columns (column-major): at least
    /// the length of one, and at least 1.
    pub ld: usize,
    /// Index of element `(0, 0)` in the buffer.
    pub offset: usize,
    pub layout: Layout,
}

impl MatrixLayout {
    /// A dense row-major `rows x cols` matrix at the start of its buffer.
    pub const fn row_major(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            ld: if cols > 0 { cols } else { 1 },
            offset: 0,
            layout: Layout::RowMajor,
        }
    }

    /// A dense column-major `rows x cols` matrix at the start of its buffer.
    pub const fn col_major(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            ld: if rows > 0 { rows } else { 1 },
            offset: 0,
            layout: Layout::ColMajor,
        }
    }

    /// The same with leading dimension `ld`.
    pub const fn with_ld(self, ld: usize) -> Self {
        Self { ld, ..self }
    }

    /// The same starting at element `offset` of the buffer.
    pub const fn at(self, offset: usize) -> Self {
        Self { offset, ..self }
    }

    /// The transpose: `cols x rows`, the other layout, the same elements.
    pub const fn t(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            layout: self.layout.flipped(),
            ..self
        }
    }

    /// `(rows, cols)`
    pub const fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// Length of one row (row-major) or column (column-major): the least `ld`.
    pub const fn inner(&self) -> usize {
        match self.layout {
            Layout::RowMajor => self.cols,
            Layout::ColMajor => self.rows,
        }
    }

    /// Number of rows (row-major) or columns (column-major).
    pub const fn outer(&self) -> usize {
        match self.layout {
            Layout::RowMajor => self.rows,
            Layout::ColMajor => self.cols,
        }
    }

    /// Buffer index of element `(r, c)` (unchecked arithmetic: for `r < rows`, `c < cols`
    /// of a checked layout).
    pub const fn index(&self, r: usize, c: usize) -> usize {
        match self.layout {
            Layout::RowMajor => self.offset + r * self.ld + c,
            Layout::ColMajor => self.offset + c * self.ld + r,
        }
    }

    /// The `rows x cols` block at `(r0, c0)`: a view of the same buffer.
    pub fn sub(self, r0: usize, c0: usize, rows: usize, cols: usize) -> Result<Self> {
        let fits =
            |start: usize, len: usize, all: usize| start.checked_add(len).is_some_and(|e| e <= all);
        if !fits(r0, rows, self.rows) || !fits(c0, cols, self.cols) {
            return Err(Error::ViewOutOfBounds {
                what: format!(
                    "a {rows}x{cols} block at ({r0}, {c0}) of a {}x{} view",
                    self.rows, self.cols
                ),
                needs: 0,
                len: 0,
            });
        }
        let offset = if rows > 0 && cols > 0 {
            self.index(r0, c0)
        } else {
            self.offset
        };
        Ok(Self {
            rows,
            cols,
            offset,
            ..self
        })
    }

    /// Elements of the buffer the view reaches: one past its last element (0 if empty).
    pub fn extent(&self) -> Result<usize> {
        if self.rows == 0 || self.cols == 0 {
            return Ok(0);
        }
        let overflow = Error::ElementCountOverflow {
            rows: self.rows,
            cols: self.cols,
        };
        (self.outer() - 1)
            .checked_mul(self.ld)
            .and_then(|x| x.checked_add(self.inner()))
            .and_then(|x| x.checked_add(self.offset))
            .ok_or(overflow)
    }

    /// Checks the leading dimension and that the view lies inside a buffer of `len`
    /// elements.
    pub fn check(&self, len: usize) -> Result<()> {
        let least = self.inner().max(1);
        if self.ld < least {
            return Err(Error::LeadingDimension {
                ld: self.ld,
                least,
                layout: self.layout,
            });
        }
        let needs = self.extent()?;
        if needs > len {
            return Err(Error::ViewOutOfBounds {
                what: format!(
                    "a {}x{} {:?} view (ld {}, offset {})",
                    self.rows, self.cols, self.layout, self.ld, self.offset
                ),
                needs,
                len,
            });
        }
        Ok(())
    }
}

/// A strided batch: `count` products, product `i`'s operands at the views' offsets plus `i`
/// times each operand's stride (in elements; 0 shares one operand among all products, as
/// cuBLAS's `gemmStridedBatched` allows for A and B). C's products must not overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Batch {
    pub count: usize,
    pub stride_a: usize,
    pub stride_b: usize,
    pub stride_c: usize,
}

impl Batch {
    /// One product.
    pub const ONE: Batch = Batch {
        count: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    };

    /// `count` products with strides `(a, b, c)`.
    pub const fn strided(
        count: usize,
        (stride_a, stride_b, stride_c): (usize, usize, usize),
    ) -> Self {
        Self {
            count,
            stride_a,
            stride_b,
            stride_c,
        }
    }

    /// Checks that every product's view of one operand lies in a buffer of `len`.
    pub(crate) fn check_operand(
        &self,
        view: &MatrixLayout,
        stride: usize,
        len: usize,
    ) -> Result<()> {
        view.check(len)?;
        if self.count <= 1 || view.extent()? == 0 {
            return Ok(());
        }
        let last = (self.count - 1)
            .checked_mul(stride)
            .and_then(|s| s.checked_add(view.offset))
            .ok_or(Error::ElementCountOverflow {
                rows: self.count,
                cols: stride,
            })?;
        view.at(last).check(len).map_err(|e| match e {
            Error::ViewOutOfBounds { needs, len, .. } => Error::ViewOutOfBounds {
                what: format!(
                    "product {} of a batch of {} (stride {stride})",
                    self.count - 1,
                    self.count
                ),
                needs,
                len,
            },
            e => e,
        })
    }

    /// Checks that no two products' Cs share an element.
    pub(crate) fn check_disjoint(&self, c: &MatrixLayout) -> Result<()> {
        if self.count <= 1 || c.extent()? == 0 {
            return Ok(());
        }
        let overlap = |d: usize| Error::BatchOverlap {
            stride: self.stride_c,
            apart: d,
        };
        if self.stride_c == 0 {
            return Err(overlap(1));
        }
        // Products i and j collide when their offsets' difference d = (j - i) stride is
        // q ld + p for some |q| < outer and |p| < inner.
        let (ld, outer, inner) = (c.ld as i128, c.outer() as i128, c.inner() as i128);
        for apart in 1..self.count {
            let d = apart as i128 * self.stride_c as i128;
            if d >= outer * ld + inner {
                break; // further apart than the whole view: none nearer after this either
            }
            let q = d / ld;
            for q in [q, q + 1] {
                let p = d - q * ld;
                if q < outer && p.abs() < inner {
                    return Err(overlap(apart));
                }
            }
        }
        Ok(())
    }
}

/// Where a view's elements are: a cudarc buffer or view (whose events order the product
/// after the buffer's earlier writes, when cudarc manages that), or memory the caller
/// vouches for.
#[derive(Debug)]
pub(crate) enum Buffer<'a, T> {
    Slice(&'a CudaSlice<T>),
    View(&'a CudaView<'a, T>),
    Raw {
        ptr: CUdeviceptr,
        stream: &'a Arc<CudaStream>,
        elements: PhantomData<&'a [T]>,
    },
}

impl<T> Clone for Buffer<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Buffer<'_, T> {}

/// [`Buffer`], written.
#[derive(Debug)]
pub(crate) enum BufferMut<'a, T> {
    Slice(&'a mut CudaSlice<T>),
    View(CudaViewMut<'a, T>),
    Raw {
        ptr: CUdeviceptr,
        stream: &'a Arc<CudaStream>,
        elements: PhantomData<&'a mut [T]>,
    },
}

/// What [`Buffer`] and [`BufferMut`] share but for the borrow: the context, and the device
/// address through cudarc's `device_ptr` (a read) or `device_ptr_mut` (a write).
macro_rules! buffer_methods {
    ($buf:ident, $ptr:ident $(, $mut:tt)?) => {
        impl<T> $buf<'_, T> {
            /// The CUDA context the memory belongs to.
            pub(crate) fn context(&self) -> &Arc<CudaContext> {
                match self {
                    $buf::Slice(s) => s.context(),
                    $buf::View(v) => v.stream().context(),
                    $buf::Raw { stream, .. } => stream.context(),
                }
            }

            /// The device address, and the guard that records the access when it drops.
            pub(crate) fn $ptr<'b>(
                &'b $($mut)? self,
                stream: &'b CudaStream,
            ) -> (CUdeviceptr, Option<SyncOnDrop<'b>>) {
                let (ptr, guard) = match self {
                    $buf::Slice(s) => s.$ptr(stream),
                    $buf::View(v) => v.$ptr(stream),
                    $buf::Raw { ptr, .. } => return (*ptr, None),
                };
                (ptr, Some(guard))
            }
        }
    };
}

buffer_methods!(Buffer, device_ptr);
buffer_methods!(BufferMut, device_ptr_mut, mut);

/// A view of a matrix in device memory, borrowed from its buffer: a [`DeviceMatrix`], a
/// cudarc [`CudaSlice`] or [`CudaView`], or (unsafely) a raw device pointer.
#[derive(Clone, Copy, Debug)]
pub struct DeviceView<'a, T> {
    pub(crate) buf: Buffer<'a, T>,
    pub(crate) len: usize,
    pub(crate) layout: MatrixLayout,
}

/// A view of a matrix in device memory that a product writes, borrowed mutably (so no
/// operand of the same product can be a view of the same buffer).
#[derive(Debug)]
pub struct DeviceViewMut<'a, T> {
    pub(crate) buf: BufferMut<'a, T>,
    pub(crate) len: usize,
    pub(crate) layout: MatrixLayout,
}

macro_rules! view_methods {
    ($view:ident) => {
        impl<'a, T> $view<'a, T> {
            pub fn layout(&self) -> MatrixLayout {
                self.layout
            }

            pub fn rows(&self) -> usize {
                self.layout.rows
            }

            pub fn cols(&self) -> usize {
                self.layout.cols
            }

            /// The transpose, over the same elements.
            pub fn t(self) -> Self {
                Self {
                    layout: self.layout.t(),
                    ..self
                }
            }

            /// The `rows x cols` block at `(r0, c0)`.
            pub fn sub(self, r0: usize, c0: usize, rows: usize, cols: usize) -> Result<Self> {
                Ok(Self {
                    layout: self.layout.sub(r0, c0, rows, cols)?,
                    ..self
                })
            }
        }
    };
}
view_methods!(DeviceView);
view_methods!(DeviceViewMut);

/// The views' constructor over memory no cudarc value owns (`$buf::Raw`), with its docs.
macro_rules! from_raw {
    ($buf:ident, $(#[$doc:meta])*) => {
        $(#[$doc])*
        pub unsafe fn from_raw(
            ptr: CUdeviceptr,
            len: usize,
            stream: &'a Arc<CudaStream>,
            layout: MatrixLayout,
        ) -> Result<Self> {
            let buf = $buf::Raw {
                ptr,
                stream,
                elements: PhantomData,
            };
            Self::checked(buf, len, layout)
        }
    };
}

impl<'a, T> DeviceView<'a, T> {
    /// The view of `len` elements of `buf` laid out as `layout`, once `layout` fits.
    fn checked(buf: Buffer<'a, T>, len: usize, layout: MatrixLayout) -> Result<Self> {
        layout.check(len)?;
        Ok(Self { len, buf, layout })
    }

    /// A view of `buf` laid out as `layout`; an error if it reaches past the buffer.
    pub fn new(buf: &'a CudaSlice<T>, layout: MatrixLayout) -> Result<Self> {
        Self::checked(Buffer::Slice(buf), buf.len(), layout)
    }

    /// A view of a cudarc view (a part of some [`CudaSlice`]) laid out as `layout`; an
    /// error if it reaches past the view.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), rgemm::Error> {
    /// use rgemm::{Context, DeviceView, DeviceViewMut, MatrixLayout};
    /// let ctx = Context::new(0)?;
    /// let stream = ctx.stream();
    /// let ab = stream.alloc_zeros::<f32>(2 * 64 * 64).map_err(rgemm::Error::from)?;
    /// let mut c = stream.alloc_zeros::<f32>(64 * 64).map_err(rgemm::Error::from)?;
    /// // A and B as two halves of one allocation.
    /// let (a, b) = (ab.slice(..64 * 64), ab.slice(64 * 64..));
    /// let square = MatrixLayout::row_major(64, 64);
    /// let (a, b) = (DeviceView::from_cuda_view(&a, square)?, DeviceView::from_cuda_view(&b, square)?);
    /// let c = DeviceViewMut::from_cuda_view_mut(c.as_view_mut(), square)?;
    /// ctx.gemm(a, b, c).run()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_cuda_view(view: &'a CudaView<'a, T>, layout: MatrixLayout) -> Result<Self> {
        Self::checked(Buffer::View(view), view.len(), layout)
    }

    from_raw! {
        Buffer,
        /// A view of `len` elements of type `T` at device address `ptr`, laid out as `layout`,
        /// for memory that no cudarc value owns (another library's allocation). Products with
        /// it run on their context's stream, and rgemm orders nothing for it: earlier writes
        /// to it must be complete, or queued on that same stream, when the product is queued.
        ///
        /// # Safety
        ///
        /// `ptr` must be the address of `len` initialised elements of `T` in memory of
        /// `stream`'s CUDA context, aligned for `T`, valid and not written by anyone else for
        /// `'a`.
    }
}

impl<'a, T> DeviceViewMut<'a, T> {
    /// The writable view of `len` elements of `buf` laid out as `layout`, once `layout` fits.
    fn checked(buf: BufferMut<'a, T>, len: usize, layout: MatrixLayout) -> Result<Self> {
        layout.check(len)?;
        Ok(Self { len, buf, layout })
    }

    /// A writable view of `buf` laid out as `layout`; an error if it reaches past the buffer.
    pub fn new(buf: &'a mut CudaSlice<T>, layout: MatrixLayout) -> Result<Self> {
        let len = buf.len();
        Self::checked(BufferMut::Slice(buf), len, layout)
    }

    /// A writable view of a cudarc view ([`CudaSlice::slice_mut`],
    /// [`CudaSlice::as_view_mut`]) laid out as `layout`; an error if it reaches past the
    /// view. See [`DeviceView::from_cuda_view`].
    pub fn from_cuda_view_mut(view: CudaViewMut<'a, T>, layout: MatrixLayout) -> Result<Self> {
        let len = view.len();
        Self::checked(BufferMut::View(view), len, layout)
    }

    from_raw! {
        BufferMut,
        /// [`DeviceView::from_raw`], written.
        ///
        /// # Safety
        ///
        /// As [`DeviceView::from_raw`], and no one else reads or writes the memory for `'a`.
    }
}

impl<T> DeviceMatrix<T> {
    /// The whole matrix as a view (row-major, dense).
    pub fn view(&self) -> DeviceView<'_, T> {
        DeviceView {
            buf: Buffer::Slice(&self.buf),
            len: self.rows * self.cols,
            layout: MatrixLayout::row_major(self.rows, self.cols),
        }
    }

    /// The whole matrix as a writable view.
    pub fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut {
            len: self.rows * self.cols,
            layout: MatrixLayout::row_major(self.rows, self.cols),
            buf: BufferMut::Slice(&mut self.buf),
        }
    }

    /// Its elements as a `layout`-shaped view (for example column-major, or a batch of
    /// matrices stored one after the other).
    pub fn view_as(&self, layout: MatrixLayout) -> Result<DeviceView<'_, T>> {
        layout.check(self.rows * self.cols)?;
        Ok(DeviceView {
            buf: Buffer::Slice(&self.buf),
            len: self.rows * self.cols,
            layout,
        })
    }

    /// [`DeviceMatrix::view_as`], writable.
    pub fn view_mut_as(&mut self, layout: MatrixLayout) -> Result<DeviceViewMut<'_, T>> {
        layout.check(self.rows * self.cols)?;
        Ok(DeviceViewMut {
            len: self.rows * self.cols,
            layout,
            buf: BufferMut::Slice(&mut self.buf),
        })
    }
}

/// A view of a matrix in host memory.
#[derive(Clone, Copy, Debug)]
pub struct MatrixView<'a, T> {
    pub(crate) data: &'a [T],
    pub(crate) layout: MatrixLayout,
}

/// A writable view of a matrix in host memory.
#[derive(Debug)]
pub struct MatrixViewMut<'a, T> {
    pub(crate) data: &'a mut [T],
    pub(crate) layout: MatrixLayout,
}

view_methods!(MatrixView);
view_methods!(MatrixViewMut);

impl<T: Copy> MatrixView<'_, T> {
    /// Element `(r, c)` of product `i` of a batch whose stride is `stride`.
    pub fn get(&self, i: usize, stride: usize, r: usize, c: usize) -> T {
        self.data[self.layout.index(r, c) + i * stride]
    }
}

impl<T: Copy> MatrixViewMut<'_, T> {
    /// Element `(r, c)` of product `i` of a batch whose stride is `stride`.
    pub fn get(&self, i: usize, stride: usize, r: usize, c: usize) -> T {
        self.data[self.layout.index(r, c) + i * stride]
    }
}

impl<'a, T: Copy> MatrixView<'a, T> {
    /// A view of `data` laid out as `layout`; an error if it reaches past the slice.
    pub fn new(data: &'a [T], layout: MatrixLayout) -> Result<Self> {
        layout.check(data.len())?;
        Ok(Self { data, layout })
    }
}

impl<'a, T: Copy> MatrixViewMut<'a, T> {
    /// A writable view of `data` laid out as `layout`; an error if it reaches past the slice.
    pub fn new(data: &'a mut [T], layout: MatrixLayout) -> Result<Self> {
        layout.check(data.len())?;
        Ok(Self { data, layout })
    }

    /// The elements, as the view's buffer holds them.
    pub fn as_slice(&self) -> &[T] {
        self.data
    }
}

impl<T: Scalar> Matrix<T> {
    /// The whole matrix as a view.
    pub fn view(&self) -> MatrixView<'_, T> {
        MatrixView {
            data: self.as_slice(),
            layout: MatrixLayout::row_major(self.rows(), self.cols()),
        }
    }
}
