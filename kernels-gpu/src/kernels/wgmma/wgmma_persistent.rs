//! Tensor cores on Hopper, third `wgmma` rung: `wgmma_tma` on a persistent grid. One block
//! per SM walks through the tiles (every `gridDim.x`-th, in groups of 8 tile rows taken
//! column by column, so that a wave's A and B panels stay in L2), and its pipeline runs on
//! from one tile to the next: the producer loads the next tile's first stages while the
//! consumers store the last one, so the tensor cores no longer wait for each tile's
//! epilogue and prologue.
//!
//! A batch is one sequence of tiles, product after product, so that small products keep
//! the pipeline running too.
//!
//! Launch rules ([`SPEC`]): as `wgmma_tma`, with a 1D grid of `min(tiles of the whole batch,
//! SMs)` blocks.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised};
use crate::parts::wgmma::warpgroup::{BN, STAGES};
use crate::problem::{Gemm, kernel};

// Launch: `warp_specialised::spec`'s for the body's tile width and stages, and the host writes A's
// and B's tensor maps into the workspace wherever `tma::reads` holds.
kernel! {
    SPEC = spec(("wgmma_persistent", file!()), "`wgmma_tma` on a persistent grid (one block per SM, tiles in groups of 8 rows for L2, a batch's products one after the other), the pipeline running on across tiles so loads overlap the epilogue",
        (BN, STAGES), Grid::Persistent);
    fn wgmma_persistent<T: Half>(Gemm<T>) = warp_specialised::<T, true, false, [f32; 128], STAGES>;
    strided entries wgmma_persistent_f16: f16, wgmma_persistent_bf16: Bf16, wgmma_persistent_f16_f16: Narrow<f16>, wgmma_persistent_bf16_bf16: Narrow<Bf16>;
}
