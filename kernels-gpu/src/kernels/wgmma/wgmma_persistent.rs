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
use crate::catalogue::{Grid, KernelSpec};
use crate::element::Half;
#[cfg(target_arch = "nvptx64")]
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised};
use crate::parts::wgmma::warpgroup::{BN, STAGES};
use crate::problem::{Gemm, entry_points};

pub const SPEC: KernelSpec = spec(
    ("wgmma_persistent", file!()),
    "`wgmma_tma` on a persistent grid (one block per SM, tiles in groups of 8 rows for L2, a batch's products one after the other), the pipeline running on across tiles so loads overlap the epilogue",
    (BN, STAGES),
    Grid::Persistent,
);

/// # Safety
/// See the entry points; 384 threads per block; T is f16 or bf16; as `wgmma_tma`.
#[inline(always)]
pub unsafe fn wgmma_persistent<T: Half>(gemm: Gemm<T>) {
    // SAFETY: the entry point's contract holds, with T f16 or bf16 (the only entries); the launch
    // follows SPEC (`warp_specialised::spec`): 384 threads, a persistent grid,
    // `stages_shared(256, 4)` bytes, and the host writes A's and B's tensor maps into the workspace
    // wherever `tma::reads` holds: `warp_specialised`'s contract (as `wgmma_tma`'s).
    unsafe { warp_specialised::<T, true, [f32; 128], STAGES>(gemm) }
}

entry_points!(strided wgmma_persistent; wgmma_persistent_f16: f16, wgmma_persistent_bf16: Bf16, wgmma_persistent_f16_f16: Narrow<f16>, wgmma_persistent_bf16_bf16: Narrow<Bf16>);
