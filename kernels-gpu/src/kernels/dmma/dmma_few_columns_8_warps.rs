//! `dmma_few_columns` on eight warps of one `mma` row tile, one block per SM: where C has
//! few row strips (4096 x 64 x 4096, 32 strips of 128 x 64, H200: 0.076 ms against four
//! warps' 0.088), whose blocks the split of K spreads over the SMs. A warp's 16 rows meet up
//! to 8 tiles of 8 columns: 8 `mma`s and 32 accumulators per K step of 8, in up to 255
//! registers (four warps of two tiles hold 64 and spill). The columns a strip holds are
//! taken in pairs of tiles (16 columns).
//!
//! Launch rules ([`SPEC`]): 256 threads; grid `ceil(m / 128) ceil(n / 64) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)) for one
//! block per SM; shared [`SHARED`] f64; workspace the split's counters, zero at launch,
//! then `splits` planes of a strip's elements per strip where `splits > 1`; f64 (sm_90a).
use crate::catalogue::PtxFact::{Barriers, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::parts::mma::narrow_strip::{self, LONG, PairsOfTiles, half, shared, threads};
use crate::problem::{Gemm, kernel};

/// Columns of C per block.
pub const COLS: u32 = 64;
/// Threads: eight warps of one `mma` row tile.
pub const THREADS: u32 = threads(1);
/// Shared f64: three stages of 36 KiB.
pub const SHARED: u32 = shared(COLS);
const HALF: usize = half(COLS, THREADS);

/// The most columns of C `matmul`'s automatic choice considers it for: two strips.
pub const MOST_COLS: u32 = 2 * COLS;

// The launch bounds: one block per SM, so that a thread may hold 255 registers.
kernel! {
    SPEC = KernelSpec::new(("dmma_few_columns_8_warps", file!()), "`dmma_few_columns` on eight warps of one `mma` row tile, one block per SM: few row strips",
        Arch::Sm90a, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: LONG, cols: COLS })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(1), f64: Some(1) })
        .with_elements(&[Elem::F64]).with_candidate(Candidate::WhenColumnsAtMost(MOST_COLS)).with_b_transposed().on_tensor_cores()
        .with_ptx(&[PtxFacts::all(&[Barriers(26), Has("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64"), Has("cp.async.cg.shared.global"), Lacks(".local")])]);
    fn dmma_few_columns_8_warps;
    entries dmma_few_columns_8_warps_f64: f64;
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn dmma_few_columns_8_warps(g: Gemm<f64>) {
    // SAFETY: `product`'s contract is this fn's, which SPEC's launch meets (256 threads, the
    // grid of strips of 128 x COLS, SHARED f64); each strip's slice has at least a tile of 8
    // columns per 8 it holds.
    unsafe { narrow_strip::product::<PairsOfTiles<1, true>, COLS, THREADS, HALF, true>(g) }
}
