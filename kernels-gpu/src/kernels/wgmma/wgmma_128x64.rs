//! Tensor cores on Hopper, `wgmma_persistent` on 128 x 64 block tiles: each consumer
//! warpgroup multiplies its 64 x 64 half with `wgmma.mma_async.m64n64k16` (32 accumulators
//! a thread), in eight stages of 24 KiB.
//!
//! Why: a product with few rows (decode-like, 1 to 128 rows of C) reads all of B and does
//! little with it, so its time is B's bytes over the rate the working SMs pull them at.
//! With 128-column tiles, `n / 128` SMs pull B (64 of 132 at 8192 columns); with 64-column
//! ones twice as many do, each with more stages in flight. The rule takes it where that
//! means fewer waves of tiles (`heuristic.rs`).
//!
//! Everything else is `wgmma_persistent`'s (`wgmma_tma::warp_specialised`): TMA on
//! mbarriers, a producer warp, `setmaxnreg`, every form, the grouped persistent order and
//! the one-stage `mma.sync` fallback.
//!
//! Launch rules ([`SPEC`]): 384 threads, a persistent grid of `min(tiles, SMs)` blocks, 8
//! stages of 24 KiB, 1 KiB to align them and 16 mbarriers (197,760 bytes), the two tensor
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
    SPEC = spec(("wgmma_128x64", file!()), "`wgmma_persistent` on 128 x 64 tiles (`wgmma` m64n64k16 per consumer warpgroup, 8 stages of 24 KiB): twice `wgmma_128x128`'s tiles, so twice the SMs read B where C has few rows",
        (64, stages_for(64)), Grid::Persistent);
    fn wgmma_128x64<T: Half>(Gemm<T>) = warp_specialised::<T, true, false, [f32; 32], { stages_for(64) }>;
    strided entries wgmma_128x64_f16: f16, wgmma_128x64_bf16: Bf16, wgmma_128x64_f16_f16: Narrow<f16>, wgmma_128x64_bf16_bf16: Narrow<Bf16>;
}
