//! One thread per element of C: the textbook's first kernel.
//!
//! Launch rules ([`SPEC`]): 2D block (any shape; 32 x 8, a warp per row), grid
//! `ceil(n / block.x) x ceil(m / block.y)`, no shared memory. Thread (x, y) of block
//! (bx, by) computes C[row = by*block.y + y][col = bx*block.x + x].
use crate::catalogue::{
    ALL_ELEMENTS, Arch, Candidate, Grid, KernelSpec, PerAcc, Precision, Shared, Threads, Tile,
};
use crate::device::global::load;
use crate::device::thread::{block_dim_x, block_dim_y, block_idx_x, block_idx_y};
use crate::device::thread::{thread_idx_x, thread_idx_y};
use crate::element::{Accumulator, Element};
#[cfg(target_arch = "nvptx64")]
use crate::element::{Bf16, Narrow};
use crate::problem::{Gemm, entry_points};

/// A warp spans 32 columns of one row of C.
pub const SPEC: KernelSpec = KernelSpec {
    name: "naive",
    file: file!(),
    idea: "one thread per element of C",
    arch: Arch::Sm70,
    threads: Threads::Fixed(32, 8),
    tile: Tile::Fixed { rows: 8, cols: 32 },
    grid: Grid::Tiles,
    shared: Shared::None,
    min_blocks_per_sm: PerAcc::NONE,
    elements: ALL_ELEMENTS,
    tensor_cores: false,
    tma: None,
    precision: Precision::Exact,
    strided: true,
    candidate: Candidate::Never,
    cpu: true,
    ptx: &[],
};

/// # Safety
/// See the entry points.
#[inline(always)]
pub unsafe fn naive<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let (s, out) = (g.p.strides(), g.c_out());
    let row = block_idx_y() * block_dim_y() + thread_idx_y();
    let col = block_idx_x() * block_dim_x() + thread_idx_x();
    // Threads past the edge of C exist (the grid rounds up) and do nothing.
    if row < m && col < n {
        let mut acc = T::Acc::ZERO;
        for i in 0..k {
            // In range: row < m, i < k, col < n.
            // SAFETY: row < m, i < k and col < n (the branch and the loop), so `s.a(row, i)` and
            // `s.b(i, col)` index op(A) and op(B) inside `a` and `b` as the entry point's contract
            // lays them out.
            let (x, y) = unsafe { (load(a, s.a(row, i)), load(b, s.b(i, col))) };
            acc = acc.mul_add(x.widen(), y.widen());
        }
        // SAFETY: (row, col) is inside C (checked above), which `s.c` indexes at `ldc`; each thread
        // of the grid owns one distinct element, and a single element needs no alignment.
        unsafe { out.put(s.c(row, col), acc) };
    }
}

entry_points!(naive; naive_f32: f32, naive_f64: f64, naive_f16: f16, naive_bf16: Bf16, naive_f16_f16: Narrow<f16>, naive_bf16_bf16: Narrow<Bf16>);
