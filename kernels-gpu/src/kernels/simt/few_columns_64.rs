//! `few_columns` on strips of 64 columns (f32): for 33 to 64 columns of C, one strip reads
//! A once where two strips of 32 read it twice, and a thread's 8 x 8 tile takes two
//! 16-byte runs of a B row and eight of A's rows per 4 K steps for its 256 multiply-adds
//! (`few_columns`' 4 x 16 tile: sixteen and four). Its eight runs of A in flight need 167
//! registers (ptxas, sm_90), so three blocks share an SM: at four (128 registers) it spilled
//! 244 bytes and ran no faster than `few_columns`.
//!
//! How a thread's 64 accumulators cover the strip ([`whole_rows`]), by the columns the
//! strip holds:
//!
//! | columns | thread tile | column groups | row groups | K groups |
//! |---------|-------------|---------------|------------|----------|
//! | 33-64   | 8 x 8       | 8 (runs of 4 interleaved) | 16 | 1    |
//! | 17-32   | 4 x 16      | 2             | 32         | 2        |
//! | 9-16    | 4 x 16      | 1             | 32         | 4        |
//! | 1-8     | 8 x 8       | 1             | 16         | 8        |
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 128) ceil(n / 64) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)); shared
//! [`SHARED`] accumulators; workspace (accumulator units) the split's counters, zero at
//! launch, then `splits` planes of a strip's elements per strip where `splits > 1`; f32
//! (compute capability 8.0+: `cp.async`).
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::element::Element;
use crate::parts::schedule::split_k_strips::{StripBlock, StripSums, finish};
use crate::parts::simt::whole_rows::{self, KC, ROWS, STAGES, THREADS, half, shared, slice};
use crate::problem::{Gemm, kernel};

/// Columns of C per block.
pub const COLS: u32 = 64;
const HALF: usize = half(COLS);
/// Two stages of 27 KiB a block.
pub const SHARED: u32 = shared(COLS);
const _: () = assert!(THREADS * 64 <= STAGES * whole_rows::stage(COLS));

// The launch bounds: what the registers allow (see the module).
kernel! {
    SPEC = KernelSpec::new(("few_columns_64", file!()), "`few_columns` on strips of 64 columns, a thread's 8 x 8 tile over the whole strip's columns, three blocks per SM: A read once for up to 64 columns",
        Arch::Sm80, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: COLS })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(3), f64: None })
        .with_elements(&[Elem::F32]).with_candidate(Candidate::WhenColumnsAtMost(COLS)).with_ptx(&[PtxFacts::all(&[Barriers(14)])]);
    fn few_columns_64;
    entries few_columns_64_f32: f32;
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn few_columns_64<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let block = StripBlock::this(&g, (ROWS, COLS), KC);
    let ((row0, col0), (k0, k1)) = (block.origin, block.k);
    // SAFETY: the launch provides SHARED accumulators (at least as many elements of T).
    let (a_stages, b_stages) = unsafe { whole_rows::stages::<T>(COLS) };
    // SAFETY: the same launch-sized region.
    let last_flag = unsafe { whole_rows::last_flag::<T::Acc>(COLS) };
    let here = (row0, col0, k0, k1);
    let (ab, mnk, st) = ((a, b), (m, n, k), (&a_stages, &b_stages));
    // The columns this strip holds: uniform over the block.
    let cols = (n - col0).min(COLS);
    // SAFETY: the entry point's contract and SPEC's launch (128 threads, SHARED accumulators) hold;
    // `cols` is block-uniform, so every thread calls the same `slice` with the same parameters.
    let (sums, k_groups, nc) = unsafe {
        match cols {
            33.. => slice::<T, 64, 8, 8, true>(ab, mnk, here, st),
            17..=32 => slice::<T, 32, 16, 4, false>(ab, mnk, here, st),
            9..=16 => slice::<T, 16, 16, 4, false>(ab, mnk, here, st),
            _ => slice::<T, 8, 8, 8, false>(ab, mnk, here, st),
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
