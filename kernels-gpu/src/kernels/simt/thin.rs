//! Thin products: C with few rows (a row vector times a matrix) or few columns (a matrix
//! times a column vector). The tiled kernels give such a C one row or column of blocks, which
//! leaves most of the GPU idle and the tiles mostly padding; these products are bound by
//! reading the matrix once, so what matters is many loads in flight and every load coalesced.
//! The K loop is split among the block's threads, and the partial sums meet in shared memory.
//!
//! Two ways through, chosen per launch from the shape (uniform, so every barrier is reached
//! by every thread):
//! - few rows (`m <= n`): a block computes 32 elements of one row of C; lane `l` owns column
//!   `col0 + l` and warp `w` the K steps `w, w + 32, ...`: a warp's loads of B are one
//!   128-byte row segment, its loads of A one broadcast element.
//! - few columns (`m > n`): a block computes 32 rows of C, one column at a time; warp `w`
//!   owns row `row0 + w` and lane `l` the K steps `l, l + 32, ...`: a warp's loads of A are
//!   one 128-byte row segment (and of B, for n = 1, one too). For n = 1 with K a multiple
//!   of 4 and aligned inputs, lane `l` takes 4 K steps at a time (`4l, 4l + 128, ...`), in
//!   16-byte loads (f32).
//!
//! Each thread keeps `UNROLL` independent partial sums, so that many of its loads are in
//! flight at once. Every load and store is bounds-checked.
//!
//! Launch rules ([`SPEC`]): 1024 threads in a 1D block; grid `ceil(n / 32) x m`
//! (few rows) or `1 x ceil(m / 32)` (few columns); shared bytes `32 * 33 * size_of(Acc)`.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, KernelSpec, Shared, Threads, Tile};
use crate::device::global::{load, load4, store};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::device::vector::aligned4;
use crate::element::{Accumulator, Element};
use crate::element::{Bf16, Narrow};
use crate::problem::{Gemm, kernel};

// A candidate only where C has at most 32 rows or columns: it reads the larger input once
// per row (or column) of C, so past a few it cannot win, and timing it on first use of a
// large square shape cost seconds (f64 8192^3: 1.0 s a run, f32 0.5 s; measured on an H200).
kernel! {
    SPEC = KernelSpec::new(("thin", file!()), "thin products (row vector x matrix, matrix x column vector): the K loop split among 1024 threads, coalesced loads, partial sums added in shared memory",
        Arch::Sm70, Threads::Fixed(LANES * WARPS, 1), Tile::Thin)
        .with_shared(Shared::Elements(WARPS * (LANES + 1))).with_candidate(Candidate::WhenSideAtMost(32)).with_ptx(&[PtxFacts::all(&[Barriers(3)])]);
    fn thin;
    entries thin_f32: f32, thin_f64: f64, thin_f16: f16, thin_bf16: Bf16, thin_f16_f16: Narrow<f16>, thin_bf16_bf16: Narrow<Bf16>;
}

/// Threads per warp, and warps per block (1024 threads): each is one side of the 32 x 32
/// partial sums.
pub const LANES: u32 = 32;
pub const WARPS: u32 = 32;
/// Independent partial sums per thread (loads in flight).
const UNROLL: u32 = 4;

/// The steps `first, first + step, ...` below `end`, folded into `UNROLL` independent sums
/// (`add(s, sum)` adds step `s`'s products to `sum`), then added up.
#[inline(always)]
fn fold<A: Accumulator>(first: u32, step: u32, end: u32, mut add: impl FnMut(u32, A) -> A) -> A {
    let mut sums = [A::ZERO; UNROLL as usize];
    let mut s = first;
    while s + (UNROLL - 1) * step < end {
        for u in 0..UNROLL {
            sums[u as usize] = add(s + u * step, sums[u as usize]);
        }
        s += UNROLL * step;
    }
    while s < end {
        sums[0] = add(s, sums[0]);
        s += step;
    }
    let mut total = sums[0];
    for u in 1..UNROLL as usize {
        total = total + sums[u];
    }
    total
}

/// The sum of row `r` of the partial sums.
///
/// # Safety
/// A barrier since the row was last written.
#[inline(always)]
unsafe fn row_sum<A: Accumulator>(partial: &SharedTile<A>, r: u32) -> A {
    let mut total = A::ZERO;
    for l in 0..LANES {
        // SAFETY: r < WARPS and l < LANES lie inside the `WARPS x (LANES + 1)` tile; a barrier came
        // after the row's last write (this fn's contract), and the next write waits for another.
        total = total + unsafe { partial.get(r, l) };
    }
    total
}

/// # Safety
/// See the entry points; 1024 threads per block, the grid of the launch rules.
#[inline(always)]
pub unsafe fn thin<T: Element>(g: Gemm<T>) {
    let (a, b, c, m, n, k) = g.plain();
    let tid = thread_idx_x();
    let (warp, lane) = (tid / LANES, tid % LANES);
    // SAFETY: the launch provides WARPS * (LANES + 1) accumulator elements of shared memory.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    // Rows padded by one, so a warp's accesses down a column hit 32 banks, not one.
    let partial = arena.tile(WARPS, LANES + 1);
    // Adds A(row, kk) * B(kk, col); callers keep row < m, col < n, kk < k.
    let step = |row: u32, col: u32| {
        // SAFETY: callers keep row < m, col < n and kk < k, so both indices lie inside the
        // row-major `m x k` A and `k x n` B (SPEC is not strided).
        move |kk: u32, sum: T::Acc| unsafe {
            sum.mul_add(
                load(a, row as usize * k as usize + kk as usize).widen(),
                load(b, kk as usize * n as usize + col as usize).widen(),
            )
        }
    };
    if m <= n {
        // Few rows. partial[l][w]: warp w's share of column l, stored transposed so that the
        // sum below reads one row.
        let (row, col) = (block_idx_y(), block_idx_x() * LANES + lane);
        let mine = if row < m && col < n {
            fold(warp, WARPS, k, step(row, col))
        } else {
            T::Acc::ZERO
        };
        // SAFETY: (lane, warp) < (32, 32) lies inside the tile and is this thread's own element; it
        // is read only after the barrier below.
        unsafe { partial.set(lane, warp, mine) };
        sync_threads();
        if warp == 0 && row < m && col < n {
            // SAFETY: the barrier above follows every warp's write of row `lane`, and no write
            // comes before the kernel ends.
            let total = unsafe { row_sum(&partial, lane) };
            // SAFETY: (row, col) is inside the row-major `m x n` C (checked); only warp 0's lane of
            // this column in this block's row writes it.
            unsafe { store(c, row as usize * n as usize + col as usize, T::out(total)) };
        }
    } else {
        // Few columns.
        let row = block_idx_y() * WARPS + warp;
        // A matrix times one column, K a multiple of 4, both aligned: 4 K steps per load
        // (16 bytes of f32), from A's row and from B, which is then contiguous too.
        let packed = n == 1 && k.is_multiple_of(4) && aligned4(a) && aligned4(b);
        // Adds K steps 4g..4g + 4 of row `row` (column 0).
        let group = |g: u32, sum: T::Acc| {
            // SAFETY: row < m, 4g + 4 <= k, and the rows are 4-aligned (k % 4 == 0).
            let (x, y) = unsafe {
                (
                    load4(a, row as usize * k as usize + 4 * g as usize),
                    load4(b, 4 * g as usize),
                )
            };
            let mut sum = sum;
            for j in 0..4 {
                sum = sum.mul_add(x[j].widen(), y[j].widen());
            }
            sum
        };
        for col in 0..n {
            let mine = if row >= m {
                T::Acc::ZERO
            } else if packed {
                fold(lane, LANES, k / 4, group)
            } else {
                fold(lane, LANES, k, step(row, col))
            };
            // SAFETY: (warp, lane) is this thread's own element; the previous column's reads ended
            // at the barrier closing the loop.
            unsafe { partial.set(warp, lane, mine) };
            sync_threads();
            if lane == 0 && row < m {
                // SAFETY: every lane wrote row `warp` before the barrier above; the next writes
                // wait for the barrier below.
                let total = unsafe { row_sum(&partial, warp) };
                // SAFETY: (row, col) is inside C (checked); lane 0 of warp `warp` of this block is
                // the only writer of row `row`.
                unsafe { store(c, row as usize * n as usize + col as usize, T::out(total)) };
            }
            // Before the next column overwrites the partial sums.
            sync_threads();
        }
    }
}
