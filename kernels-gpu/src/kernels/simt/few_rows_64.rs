//! `few_rows` on strips of 64 rows (f32, B stored `n x k`): for 33 to 64 rows of C, one
//! strip reads B once where two strips of 32 read it twice, and a thread's 8 x 8 tile takes
//! eight 16-byte runs of B's rows and eight of A's per 4 K steps for its 256 multiply-adds
//! (`few_rows`' 16 x 4 tile: four and sixteen). Three blocks share an SM, as for
//! `few_columns_64`, whose thread tile this is turned over.
//!
//! How a thread's 64 accumulators cover the strip ([`whole_columns`]), by the rows the
//! strip holds:
//!
//! | rows  | thread tile (rows x columns) | row groups | column groups | K groups |
//! |-------|------------------------------|------------|---------------|----------|
//! | 33-64 | 8 x 8                        | 8          | 16            | 1        |
//! | 17-32 | 16 x 4                       | 2          | 32            | 2        |
//! | 9-16  | 16 x 4                       | 1          | 32            | 4        |
//! | 1-8   | 8 x 8                        | 1          | 16            | 8        |
//!
//! B as stored (`k x n`) takes the 8 x 8 tile over 64 rows, read an element at a time.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 64) ceil(n / 128) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)); shared
//! [`SHARED`] accumulators; workspace (accumulator units) the split's counters, zero at
//! launch, then `splits` planes of a strip's elements per strip where `splits > 1`; f32
//! (compute capability 8.0+: `cp.async`).
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
pub const ROWS: u32 = 64;
const HALF: usize = half(ROWS);
/// Two stages of 27 KiB a block.
pub const SHARED: u32 = shared(ROWS);
const _: () = assert!(THREADS * 64 <= STAGES * stage(ROWS));

// The launch bounds: what the registers allow (see the module).
kernel! {
    SPEC = KernelSpec::new(("few_rows_64", file!()), "`few_rows` on strips of 64 rows, a thread's 8 x 8 tile over the whole strip's rows, three blocks per SM: B read once for up to 64 rows",
        Arch::Sm80, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: COLS })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(3), f64: None })
        .with_elements(&[Elem::F32]).with_candidate(Candidate::WhenSideAtMost(ROWS)).with_b_transposed()
        .with_ptx(&[PtxFacts::all(&[Barriers(17), Has("cp.async.cg.shared.global"), Has("atom.acq_rel.gpu.global.add.u32"), Lacks(".local")])]);
    fn few_rows_64;
    entries few_rows_64_f32: f32;
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn few_rows_64<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let block = StripBlock::this(&g, (ROWS, COLS), KC);
    let ((row0, col0), (k0, k1)) = (block.origin, block.k);
    let b_t = g.p.layout & TRANSPOSED_B != 0;
    // SAFETY: the launch provides SHARED accumulators (at least as many elements of T).
    let (a_stages, b_stages) = unsafe { whole_columns::stages::<T>(ROWS, b_t) };
    // SAFETY: the same launch-sized region.
    let last_flag = unsafe { whole_columns::last_flag::<T::Acc>(ROWS) };
    let here = (row0, col0, k0, k1);
    let (ab, mnk, st) = ((a, b), (m, n, k), (&a_stages, &b_stages));
    // The rows this strip holds: uniform over the block.
    let rows = (m - row0).min(ROWS);
    // SAFETY: the entry point's contract and SPEC's launch (128 threads, SHARED accumulators) hold;
    // `rows` and `b_t` are block-uniform, so every thread calls the same `slice` with the same
    // parameters; B's layout is the problem's (dense, row-major or `n x k`: the spec).
    let (sums, k_groups, nr) = unsafe {
        match (rows, b_t) {
            (33.., true) => slice::<T, ROWS, 64, 8, 8, true>(ab, mnk, here, st),
            (17..=32, true) => slice::<T, ROWS, 32, 16, 4, true>(ab, mnk, here, st),
            (9..=16, true) => slice::<T, ROWS, 16, 16, 4, true>(ab, mnk, here, st),
            (_, true) => slice::<T, ROWS, 8, 8, 8, true>(ab, mnk, here, st),
            (_, false) => slice::<T, ROWS, 64, 8, 8, false>(ab, mnk, here, st),
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
