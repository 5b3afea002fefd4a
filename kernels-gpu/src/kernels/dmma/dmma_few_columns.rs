//! f64 products with few columns (C `m x n`, up to 64 columns per strip, m large) on the
//! FP64 tensor cores: A times a few vectors, bound by reading A once. The SIMT
//! `few_columns` and the DMMA tile kernels, whose tiles are 64 columns wide or more, ran
//! 8192 x 24 x 8192 at 48% of cuBLAS and 8192 x 48 x 8192 at 51% (H200).
//!
//! [`narrow_strip`] as it is, not turned over: `mma` m16n8k8's 16 rows are rows of C (A's),
//! its 8 columns columns of C, in strips of 128 x 64 with K split over blocks; four warps
//! of two `mma` row tiles, two blocks per SM, A and B through shared memory by `cp.async`
//! in three stages. The columns a strip holds are taken in pairs of tiles (16 columns). At
//! 49-64 columns a thread's 64 accumulators spill; where C has few row strips
//! `dmma_few_columns_8_warps` runs ahead.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 128) ceil(n / 64) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)) for two
//! blocks per SM; shared [`SHARED`] f64; workspace the split's counters, zero at launch,
//! then `splits` planes of a strip's elements per strip where `splits > 1`; f64 (sm_90a).
use crate::catalogue::PtxFact::{Barriers, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::parts::mma::narrow_strip::{self, LONG, PairsOfTiles, half, shared, threads};
use crate::problem::{Gemm, kernel};

/// Columns of C per block.
pub const COLS: u32 = 64;
/// Threads: four warps of two `mma` row tiles.
pub const THREADS: u32 = threads(2);
/// Shared f64: three stages of 36 KiB, so that two blocks share an SM.
pub const SHARED: u32 = shared(COLS);
const HALF: usize = half(COLS, THREADS);

/// The most columns of C `matmul`'s automatic choice considers it for: two strips.
pub const MOST_COLS: u32 = 2 * COLS;

// The launch bounds: what the shared memory allows (two blocks per SM).
kernel! {
    SPEC = KernelSpec::new(("dmma_few_columns", file!()), "few columns on the FP64 tensor cores (`mma` m16n8k8's 16 rows are rows of C, its 8 columns columns of C): strips of 128 x 64 with K split over blocks, A and B through shared memory by `cp.async` in three stages",
        Arch::Sm90a, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: LONG, cols: COLS })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(2), f64: Some(2) })
        .with_elements(&[Elem::F64]).with_candidate(Candidate::WhenColumnsAtMost(MOST_COLS)).with_b_transposed().on_tensor_cores()
        .with_ptx(&[PtxFacts::all(&[Barriers(26), Has("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64"), Has("cp.async.cg.shared.global"), Lacks(".local")])]);
    fn dmma_few_columns;
    entries dmma_few_columns_f64: f64;
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn dmma_few_columns(g: Gemm<f64>) {
    // SAFETY: `product`'s contract is this fn's, which SPEC's launch meets (256 threads, the
    // grid of strips of 128 x COLS, SHARED f64); each strip's slice has at least a tile of 8
    // columns per 8 it holds.
    unsafe { narrow_strip::product::<PairsOfTiles<2, true>, COLS, THREADS, HALF, true>(g) }
}
