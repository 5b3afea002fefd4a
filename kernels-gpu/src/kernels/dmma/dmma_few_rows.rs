//! f64 products with few rows (C `m x n`, up to 32 rows per strip, n large) on the FP64
//! tensor cores: a layer's weights B times a few vectors, bound by reading B once. The
//! SIMT `few_rows` spends an FMA per row of its 32-row thread tile per element of B, and
//! read B at 1.7 TB/s where cuBLAS reads it at 3.2 (17 x 8192 x 4096, H200).
//!
//! The product turned over on strips of 32 rows ([`narrow_strip`]): C's rows in tiles of 8,
//! `few_rows`' strips of 32 x 128 and split of K over blocks, four warps of two `mma` row
//! tiles, B and A through shared memory by `cp.async` in three stages.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 32) ceil(n / 128) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)) for two
//! blocks per SM; shared [`SHARED`] f64; workspace the split's counters, zero at launch,
//! then `splits` planes of a strip's elements per strip where `splits > 1`; f64 (sm_90a).
use crate::catalogue::PtxFact::{Barriers, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::device::shared::SharedTile;
use crate::parts::mma::narrow_strip::{self, LONG, SliceOf, Strips, half, shared, slice, threads};
use crate::problem::{Gemm, kernel};

/// Rows of C per block.
pub const ROWS: u32 = 32;
/// Shared f64: three stages of 30 KiB, so that two blocks share an SM.
pub const SHARED: u32 = shared(ROWS);
/// Threads: four warps of two `mma` row tiles.
pub const THREADS: u32 = threads(2);
const HALF: usize = half(ROWS, THREADS);

/// The most rows of C `matmul`'s automatic choice considers it for: two strips.
pub const MOST_ROWS: u32 = 2 * ROWS;

// The launch bounds: what the shared memory allows (two blocks per SM).
kernel! {
    SPEC = KernelSpec::new(("dmma_few_rows", file!()), "few rows on the FP64 tensor cores, turned over (C^T = B^T A^T: `mma` m16n8k8's 16 rows are columns of C, its 8 columns rows of C): `few_rows`' strips of 32 x 128 and split of K over blocks, B and A through shared memory by `cp.async` in three stages",
        Arch::Sm90a, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: LONG })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(2), f64: Some(2) })
        .with_elements(&[Elem::F64]).with_candidate(Candidate::WhenRowsAtMost(MOST_ROWS)).with_b_transposed().on_tensor_cores()
        .with_ptx(&[PtxFacts::all(&[Barriers(26), Has("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64"), Has("cp.async.cg.shared.global"), Lacks(".local")])]);
    fn dmma_few_rows;
    entries dmma_few_rows_f64: f64;
}

/// This kernel's slice for each strip's rows.
struct Strips32;

impl Strips for Strips32 {
    #[inline(always)]
    unsafe fn slice(tiles: u32, b_t: bool, s: SliceOf) -> SharedTile<f64> {
        // SAFETY: `slice`'s contract: this fn's, and in every arm 8 NT <= ROWS and at least
        // the rows of the tiles.
        unsafe {
            match (tiles, b_t) {
                (1, true) => slice::<ROWS, 1, 2, true, true, false>(s),
                (2, true) => slice::<ROWS, 2, 2, true, true, false>(s),
                (3, true) => slice::<ROWS, 3, 2, true, true, false>(s),
                (_, true) => slice::<ROWS, 4, 2, true, true, false>(s),
                (1, false) => slice::<ROWS, 1, 2, false, true, false>(s),
                (2, false) => slice::<ROWS, 2, 2, false, true, false>(s),
                (3, false) => slice::<ROWS, 3, 2, false, true, false>(s),
                (_, false) => slice::<ROWS, 4, 2, false, true, false>(s),
            }
        }
    }
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn dmma_few_rows(g: Gemm<f64>) {
    // SAFETY: `product`'s contract is this fn's, which SPEC's launch meets (128 threads, the
    // grid of strips of ROWS, SHARED f64); each strip's slice has a tile of 8 rows per 8 it
    // holds.
    unsafe { narrow_strip::product::<Strips32, ROWS, THREADS, HALF, false>(g) }
}
