//! Products with few columns (C `m x n`, n up to 32 per strip, m large): a matrix times a
//! few vectors. Such a product is bound by reading A once (`m x k`), and every element of A
//! meets only n elements of B: the tiled kernels' 128-column tiles are mostly padding, and
//! `stream_k_narrow_32`'s register tiles leave two warps per scheduler (latency-bound).
//!
//! Here a thread owns whole rows of C against all (up to 32) columns
//! ([`whole_rows`]): a block of 128 threads owns a strip of 128 rows and 32 columns of C
//! and a slice of K; its threads split into `KG` groups that take alternate runs of 4 K
//! steps and meet in shared memory at the end, so that each thread keeps 64 accumulators
//! (f32; 32 in f64) whatever n.
//!
//! How a thread's 64 accumulators cover the strip, by the columns the strip holds:
//!
//! | columns | thread tile | column groups | row groups | K groups |
//! |---------|-------------|---------------|------------|----------|
//! | 17-32   | 4 x 16      | 2             | 32         | 2        |
//! | 9-16    | 4 x 16      | 1             | 32         | 4        |
//! | 1-8     | 8 x 8       | 1             | 16         | 8        |
//!
//! (f64: half the rows per thread, twice the row groups, half the K groups.)
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 128) ceil(n / 32) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)); shared
//! [`SHARED`] accumulators; workspace (accumulator units) [`counters`] counters, zero at
//! launch, then `splits` planes of a strip's elements per strip where `splits > 1`; f32, f64
//! (compute capability 8.0+: `cp.async`).
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::element::Element;
use crate::parts::schedule::split_k_strips::{StripBlock, StripSums, finish};
use crate::parts::simt::whole_rows::{self, KC, ROWS, STAGES, THREADS, half, shared, slice};
use crate::problem::{Gemm, kernel};

/// Columns of C per block.
pub const COLS: u32 = 32;
const HALF: usize = half(COLS);
/// Two stages of 23 KiB (f32) let four blocks share an SM, as many as the registers allow
/// (ptxas, sm_90a: 122 at 4 blocks, no spill; uncapped an earlier build took 129); f64's 46
/// KiB stages leave two.
pub const SHARED: u32 = shared(COLS);
const _: () = assert!(THREADS * 64 <= STAGES * whole_rows::stage(COLS));

// The launch bounds: what the shared memory allows (see STAGES).
kernel! {
    SPEC = KernelSpec::new(("few_columns", file!()), "few columns (strips of 32): a thread owns whole rows of C against every column of its strip, A through shared memory by `cp.async` read as 16-byte runs, B rows broadcast; K split over thread groups and over blocks, the last block of a strip adding the slices in order",
        Arch::Sm80, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: COLS })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(4), f64: Some(2) })
        .with_elements(&[Elem::F32, Elem::F64]).with_candidate(Candidate::WhenColumnsAtMost(2 * COLS)).with_ptx(&[PtxFacts::all(&[Barriers(11)])]);
    fn few_columns;
    entries few_columns_f32: f32, few_columns_f64: f64;
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn few_columns<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let block = StripBlock::this(&g, (ROWS, COLS), KC);
    let ((row0, col0), (k0, k1)) = (block.origin, block.k);
    // SAFETY: the launch provides SHARED accumulators (at least as many elements of T).
    let (a_stages, b_stages) = unsafe { whole_rows::stages::<T>(COLS) };
    // SAFETY: the same launch-sized region.
    let last_flag = unsafe { whole_rows::last_flag::<T::Acc>(COLS) };
    let wide = size_of::<T::Acc>() > 4;
    let here = (row0, col0, k0, k1);
    let (ab, mnk, st) = ((a, b), (m, n, k), (&a_stages, &b_stages));
    // The columns this strip holds: uniform over the block.
    let cols = (n - col0).min(COLS);
    // SAFETY: the entry point's contract and SPEC's launch (128 threads, SHARED accumulators) hold;
    // `cols` and `wide` are block-uniform, so every thread calls the same `slice` with the same
    // parameters.
    let (sums, k_groups, nc) = unsafe {
        match (cols, wide) {
            (17.., false) => slice::<T, 32, 16, 4, false>(ab, mnk, here, st),
            (9..=16, false) => slice::<T, 16, 16, 4, false>(ab, mnk, here, st),
            (_, false) => slice::<T, 8, 8, 8, false>(ab, mnk, here, st),
            (17.., true) => slice::<T, 32, 16, 2, false>(ab, mnk, here, st),
            (9..=16, true) => slice::<T, 16, 16, 2, false>(ab, mnk, here, st),
            (_, true) => slice::<T, 8, 8, 4, false>(ab, mnk, here, st),
        }
    };
    let sums = StripSums {
        tile: sums,
        parts: k_groups,
        rows: ROWS,
        cols: nc,
    };
    // SAFETY: the launch rules are `finish`'s (workspace, counters zero, 128 threads); the sums
    // are complete since `slice`'s final barrier; every thread gets here.
    unsafe { finish::<T, ROWS, COLS, THREADS, HALF>(&g, block, &sums, &last_flag) };
}
