//! Checked loads of the textbook SIMT kernels: zero outside the matrix.
use crate::device::global::load;
use crate::element::{Accumulator, Element};
/// Element `(row, col)` of a `rows x cols` row-major matrix, widened; zero outside it.
///
/// # Safety
/// `ptr` holds `rows * cols` elements.
#[inline(always)]
pub(crate) unsafe fn load_or_zero<T: Element>(
    ptr: *const T,
    row: u32,
    col: u32,
    rows: u32,
    cols: u32,
) -> T::Acc {
    if row < rows && col < cols {
        // SAFETY: `(row, col)` is inside the `rows x cols` matrix (tested just above), all of
        // which `ptr` holds (this fn's contract), so the index is inside `ptr`'s buffer.
        unsafe { load(ptr, row as usize * cols as usize + col as usize).widen() }
    } else {
        T::Acc::ZERO
    }
}
