//! Products with few rows (C `m x n`, m up to 32 per strip, n large) and B stored `n x k`,
//! as a layer's weights are: a few vectors times a matrix. Such a product is bound by
//! reading B once, and every element of B meets only m elements of A: the tiled kernels'
//! register tiles there leave two warps per scheduler, and their transposing shared stores
//! conflict (f32 64 x 8192 x 4096 with B transposed ran `stream_k_64` at half of cuBLAS).
//!
//! `few_columns` turned over ([`whole_columns`]): a block of 128 threads owns a strip of 32
//! rows and 128 columns of C and a slice of K; its threads split into `KG` groups that take
//! alternate runs of 4 K steps and meet in shared memory at the end, so that each thread
//! keeps 64 accumulators (f32; 32 in f64) whatever m.
//!
//! How a thread's 64 accumulators cover the strip, by the rows the strip holds:
//!
//! | rows  | thread tile (rows x columns) | row groups | column groups | K groups |
//! |-------|------------------------------|------------|---------------|----------|
//! | 17-32 | 16 x 4                       | 2          | 32            | 2        |
//! | 9-16  | 16 x 4                       | 1          | 32            | 4        |
//! | 1-8   | 8 x 8                        | 1          | 16            | 8        |
//!
//! (f64: half the columns per thread, twice the column groups, half the K groups.) B as
//! stored (`k x n`) is read too, for the plain product (the rule keeps `stream_k_32` and
//! `stream_k_64` there).
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 32) ceil(n / 128) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)); shared
//! [`SHARED`] accumulators; workspace (accumulator units) the split's counters, zero at
//! launch, then `splits` planes of a strip's elements per strip where `splits > 1`; f32,
//! f64 (compute capability 8.0+: `cp.async`).
use crate::catalogue::PtxFact::{Barriers, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::element::Element;
use crate::parts::schedule::split_k_strips::{StripBlock, StripSums, finish};
use crate::parts::simt::whole_columns::{
    self, COLS, KC, STAGES, THREADS, half, shared, slice, stage,
};
use crate::problem::{Gemm, TRANSPOSED_B, kernel};

/// Rows of C per block.
pub const ROWS: u32 = 32;
const HALF: usize = half(ROWS);
/// Two stages of 23 KiB in f32: four blocks share an SM; f64's 46 KiB two.
pub const SHARED: u32 = shared(ROWS);
const _: () = assert!(THREADS * 64 <= STAGES * stage(ROWS));

/// The most rows of C `matmul`'s automatic choice considers it for: eight strips (f32 with
/// B stored `n x k` ran 256 rows at 73-90% of cuBLAS, against 58-87% before, on an H200).
pub const MOST_ROWS: u32 = 8 * ROWS;

// The launch bounds: what the shared memory allows (see STAGES).
kernel! {
    SPEC = KernelSpec::new(("few_rows", file!()), "few rows (strips of 32) with B stored n x k: a thread owns whole columns of C against every row of its strip, B through shared memory by `cp.async` read as 16-byte runs of K, A's runs broadcast; K split over thread groups and over blocks, the last block of a strip adding the slices in order",
        Arch::Sm80, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: COLS })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(4), f64: Some(2) })
        .with_elements(&[Elem::F32, Elem::F64]).with_candidate(Candidate::WhenSideAtMost(MOST_ROWS)).with_b_transposed()
        .with_ptx(&[PtxFacts::all(&[Barriers(14), Has("cp.async.cg.shared.global"), Has("atom.acq_rel.gpu.global.add.u32"), Lacks(".local")])]);
    fn few_rows;
    entries few_rows_f32: f32, few_rows_f64: f64;
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn few_rows<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let block = StripBlock::this(&g, (ROWS, COLS), KC);
    let ((row0, col0), (k0, k1)) = (block.origin, block.k);
    let b_t = g.p.layout & TRANSPOSED_B != 0;
    // SAFETY: the launch provides SHARED accumulators (at least as many elements of T).
    let (a_stages, b_stages) = unsafe { whole_columns::stages::<T>(ROWS, b_t) };
    // SAFETY: the same launch-sized region.
    let last_flag = unsafe { whole_columns::last_flag::<T::Acc>(ROWS) };
    let wide = size_of::<T::Acc>() > 4;
    let here = (row0, col0, k0, k1);
    let (ab, mnk, st) = ((a, b), (m, n, k), (&a_stages, &b_stages));
    // The rows this strip holds: uniform over the block.
    let rows = (m - row0).min(ROWS);
    // SAFETY: the entry point's contract and SPEC's launch (128 threads, SHARED accumulators) hold;
    // `rows`, `wide` and `b_t` are block-uniform, so every thread calls the same `slice` with the
    // same parameters; B's layout is the problem's (dense, row-major or `n x k`: the spec).
    let (sums, k_groups, nr) = unsafe {
        match (rows, wide, b_t) {
            (17.., false, true) => slice::<T, ROWS, 32, 16, 4, true>(ab, mnk, here, st),
            (9..=16, false, true) => slice::<T, ROWS, 16, 16, 4, true>(ab, mnk, here, st),
            (_, false, true) => slice::<T, ROWS, 8, 8, 8, true>(ab, mnk, here, st),
            (17.., true, true) => slice::<T, ROWS, 32, 16, 2, true>(ab, mnk, here, st),
            (9..=16, true, true) => slice::<T, ROWS, 16, 16, 2, true>(ab, mnk, here, st),
            (_, true, true) => slice::<T, ROWS, 8, 8, 4, true>(ab, mnk, here, st),
            (_, false, false) => slice::<T, ROWS, 32, 16, 4, false>(ab, mnk, here, st),
            (_, true, false) => slice::<T, ROWS, 32, 16, 2, false>(ab, mnk, here, st),
        }
    };
    let sums = StripSums {
        tile: sums,
        parts: k_groups,
        rows: nr,
        cols: COLS,
    };
    // SAFETY: the launch rules are `finish`'s (workspace, counters zero, 128 threads); the sums
    // are complete since `slice`'s final barrier; every thread gets here.
    unsafe { finish::<T, ROWS, COLS, THREADS, HALF>(&g, block, &sums, &last_flag) };
}
