//! Tensor cores on Hopper, `wgmma_persistent` on 128 x 128 block tiles: each consumer
//! warpgroup multiplies its 64 x 128 half with `wgmma.mma_async.m64n128k16` (64 accumulators
//! a thread), and six stages of 32 KiB replace four of 48.
//!
//! Why: a product with fewer 128 x 256 tiles than SMs leaves most of the GPU idle (1024^3:
//! 32 tiles on 132 SMs), and then its time is one tile's K loop plus the pipeline's fill
//! and the epilogue. Half-width tiles give twice the tiles, each half the work per phase;
//! every phase reads the same 16 KiB of A and half of B's 32 KiB, so the SMs that work move
//! more bytes per FLOP (64 per 1024 clocks of `wgmma` where the wide tile moves 48 per 2048),
//! which L2 holds at these sizes. The rule takes it where 128 x 256 tiles would not fill
//! the GPU (`heuristic.rs`).
//!
//! Everything else is `wgmma_persistent`'s: a producer warp issuing TMA copies on mbarriers,
//! `setmaxnreg` 40 / 232, every form (leading dimensions, transposes, alpha and beta,
//! strided batches), the grouped persistent tile order, and the one-stage `mma.sync`
//! fallback where TMA cannot read the inputs.
//!
//! Launch rules ([`SPEC`]): 384 threads, a persistent grid of `min(tiles, SMs)` blocks, 6
//! stages of 32 KiB, 1 KiB to align them and 12 mbarriers (197,728 bytes), the two tensor
//! maps in the workspace; only in the sm_90a module; f16, bf16.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised};
use crate::parts::wgmma::warpgroup::stages_for;
use crate::problem::{Gemm, kernel};

// Launch: `warp_specialised::spec`'s for the body's tile width and stages, and the host writes A's
// and B's tensor maps into the workspace wherever `tma::reads` holds.
kernel! {
    SPEC = spec(("wgmma_128x128", file!()), "`wgmma_persistent` on 128 x 128 tiles (`wgmma` m64n128k16 per consumer warpgroup, 6 stages of 32 KiB): twice the tiles where 128 x 256 ones leave SMs idle",
        (128, stages_for(128)), Grid::Persistent);
    fn wgmma_128x128<T: Half>(Gemm<T>) = warp_specialised::<T, true, false, [f32; 64], { stages_for(128) }>;
    strided entries wgmma_128x128_f16: f16, wgmma_128x128_bf16: Bf16, wgmma_128x128_f16_f16: Narrow<f16>, wgmma_128x128_bf16_bf16: Narrow<Bf16>;
}
