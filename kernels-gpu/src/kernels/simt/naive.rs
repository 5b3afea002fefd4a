//! One thread per element of C: the textbook's first kernel.
//!
//! Launch rules ([`SPEC`]): 2D block (any shape; 32 x 8, a warp per row), grid
//! `ceil(n / block.x) x ceil(m / block.y)`, no shared memory. Thread (x, y) of block
//! (bx, by) computes C[row = by*block.y + y][col = bx*block.x + x].
use crate::catalogue::{Arch, Candidate, KernelSpec, Threads, Tile};
use crate::device::global::load;
use crate::device::thread::{block_dim_x, block_dim_y, block_idx_x, block_idx_y};
use crate::device::thread::{thread_idx_x, thread_idx_y};
use crate::element::{Accumulator, Element};
use crate::element::{Bf16, Narrow};
use crate::problem::{Gemm, kernel};

// A warp spans 32 columns of one row of C.
kernel! {
    SPEC = KernelSpec::new(("naive", file!()), "one thread per element of C", Arch::Sm70, Threads::Fixed(32, 8), Tile::Fixed { rows: 8, cols: 32 })
        .general().with_candidate(Candidate::Never);
    fn naive;
    entries naive_f32: f32, naive_f64: f64, naive_f16: f16, naive_bf16: Bf16, naive_f16_f16: Narrow<f16>, naive_bf16_bf16: Narrow<Bf16>;
}

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
