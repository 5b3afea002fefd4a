//! `dmma_few_rows` on strips of 64 rows ([`narrow_strip`]): where C has 33-64 rows, one
//! strip reads B once, where strips of 32 read it twice (64 x 8192 x 4096 with B stored `n x
//! k`: `dmma_few_rows` at 79% of cuBLAS, H200). A warp's 32 columns meet up to 8 tiles of 8
//! rows: 16 `mma`s and 64 accumulators per K step of 8. The rows a strip holds are taken in
//! pairs of tiles (16 rows).
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 64) ceil(n / 128) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)) for two
//! blocks per SM; shared [`SHARED`] f64; workspace the split's counters, zero at launch,
//! then `splits` planes of a strip's elements per strip where `splits > 1`; f64 (sm_90a).
use crate::catalogue::PtxFact::{Barriers, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::parts::mma::narrow_strip::{self, LONG, PairsOfTiles, half, shared, threads};
use crate::problem::{Gemm, kernel};

/// Rows of C per block.
pub const ROWS: u32 = 64;
/// Shared f64: three stages of 36 KiB, so that two blocks share an SM.
pub const SHARED: u32 = shared(ROWS);
/// Threads: four warps of two `mma` row tiles.
pub const THREADS: u32 = threads(2);
const HALF: usize = half(ROWS, THREADS);

/// The most rows of C `matmul`'s automatic choice considers it for: two strips.
pub const MOST_ROWS: u32 = 2 * ROWS;

// The launch bounds: what the shared memory allows (two blocks per SM).
kernel! {
    SPEC = KernelSpec::new(("dmma_few_rows_64", file!()), "`dmma_few_rows` on strips of 64 rows: B read once where C has 33-64 rows",
        Arch::Sm90a, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: LONG })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(2), f64: Some(2) })
        .with_elements(&[Elem::F64]).with_candidate(Candidate::WhenRowsAtMost(MOST_ROWS)).with_b_transposed().on_tensor_cores()
        .with_ptx(&[PtxFacts::all(&[Barriers(26), Has("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64"), Has("cp.async.cg.shared.global"), Lacks(".local")])]);
    fn dmma_few_rows_64;
    entries dmma_few_rows_64_f64: f64;
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn dmma_few_rows_64(g: Gemm<f64>) {
    // SAFETY: `product`'s contract is this fn's, which SPEC's launch meets (128 threads, the
    // grid of strips of ROWS, SHARED f64); each strip's slice has at least a tile of 8 rows
    // per 8 it holds.
    unsafe { narrow_strip::product::<PairsOfTiles<2, false>, ROWS, THREADS, HALF, false>(g) }
}
