//! `dmma_small_buffered` with K split over the blocks of each tile: for C with few tiles
//! (8192 x 64 x 8192 is 128 tiles of 64 x 64, a block per SM at four warps), each tile's
//! blocks take slices of K so that three blocks share an SM (twelve warps, whose loads and
//! `mma`s hide each other's latency), and the last block of a tile adds the slices in K
//! order into C. The dense product only, B as stored or stored `n x k`.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `tiles x splits` of 64 x 64 tiles
//! (`split_k_strips`, `Problem::ctas` = splits, for three blocks per SM); the strided
//! kernels' shared elements, whose bytes later hold the tile's sums; workspace the split's
//! counters, zero at launch, then `splits` planes of a tile per tile where `splits > 1`;
//! f64 (sm_90a).
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Buffered, threads};
use crate::problem::{Gemm, kernel};

/// The block tile, K step, stages and warp tile rows (in m16 tiles): `dmma_small_buffered`'s.
const TILE: (u32, u32, u32, u32, usize) = (64, 64, 16, 3, 2);
const THREADS: u32 = threads(TILE.0, TILE.1, TILE.4);
/// Half a thread's share of a tile's sums.
const HALF: usize = (TILE.0 * TILE.1 / THREADS / 2) as usize;

// Launch: `wide_tile::split_spec`'s for the body's tile, three blocks per SM.
kernel! {
    SPEC = wide_tile::split_spec(("dmma_small_split", file!()), "`dmma_small_buffered` with K split over each tile's blocks, the last adding the slices: few tiles",
        TILE, 3).with_ptx(&[PtxFacts::all(&[Barriers(14)])]);
    fn dmma_small_split(Gemm<f64>) = wide_tile::split::<f64, Dmma, Buffered, 64, 64, 16, 3, 2, THREADS, HALF>;
    entries dmma_small_split_f64: f64;
}
