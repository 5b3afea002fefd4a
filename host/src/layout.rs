//! The two orders of a matrix's elements in memory.

/// How a matrix's elements follow each other in its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Element `(r, c)` at `offset + r * ld + c` (C, Rust, NumPy's default).
    RowMajor,
    /// Element `(r, c)` at `offset + c * ld + r` (Fortran, BLAS, cuBLAS).
    ColMajor,
}

impl Layout {
    /// The other one.
    pub const fn flipped(self) -> Self {
        match self {
            Layout::RowMajor => Layout::ColMajor,
            Layout::ColMajor => Layout::RowMajor,
        }
    }
}
