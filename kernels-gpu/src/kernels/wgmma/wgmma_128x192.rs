//! Tensor cores on Hopper, `wgmma_persistent` on 128 x 192 block tiles: each consumer
//! warpgroup multiplies its 64 x 192 part with `wgmma.mma_async.m64n192k16` (96
//! accumulators a thread), in four stages of 40 KiB.
//!
//! Why: the time of a grid of tiles is its waves', and a last wave that few tiles fill
//! costs as much as a full one. Three quarters of a 256-column tile's work fills 132 SMs
//! where the wide tiles leave a third of them idle: 512 x 6144 (an LLM's QKV projection at
//! 512 tokens) is 96 tiles of 128 x 256 on 132 SMs, and 128 of 128 x 192; 3000^3 is 288
//! tiles (three waves, the last a fifth full) and 384 (three waves, nearly full). Each
//! phase still reads A's 16 KiB and B's 24 KiB for 1.5 times the `wgmma` work of a 128 x
//! 128 tile.
//!
//! Everything else is `wgmma_persistent`'s: a producer warp issuing TMA copies on mbarriers,
//! `setmaxnreg` 40 / 232, every form (leading dimensions, transposes, alpha and beta,
//! strided batches), the grouped persistent tile order, and the one-stage `mma.sync`
//! fallback where TMA cannot read the inputs.
//!
//! Launch rules ([`SPEC`]): 384 threads, a persistent grid of `min(tiles, SMs)` blocks, 4
//! stages of 40 KiB, 1 KiB to align them and 8 mbarriers, the two tensor maps in the
//! workspace; only in the sm_90a module; f16, bf16.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised};
use crate::parts::wgmma::warpgroup::stages_for;
use crate::problem::{Gemm, kernel};

// Launch: `warp_specialised::spec`'s for the body's tile width and stages, and the host writes A's
// and B's tensor maps into the workspace wherever `tma::reads` holds.
kernel! {
    SPEC = spec(("wgmma_128x192", file!()), "`wgmma_persistent` on 128 x 192 tiles (`wgmma` m64n192k16 per consumer warpgroup, 4 stages of 40 KiB): a third more tiles than 128 x 256 where those leave the last wave's SMs idle",
        (192, stages_for(192)), Grid::Persistent);
    fn wgmma_128x192<T: Half>(Gemm<T>) = warp_specialised::<T, true, false, [f32; 96], { stages_for(192) }>;
    strided entries wgmma_128x192_f16: f16, wgmma_128x192_bf16: Bf16, wgmma_128x192_f16_f16: Narrow<f16>, wgmma_128x192_bf16_bf16: Narrow<Bf16>;
}
