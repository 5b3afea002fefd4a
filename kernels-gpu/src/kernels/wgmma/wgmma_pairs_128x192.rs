//! Tensor cores on Hopper, `wgmma_pairs` on 128 x 192 tiles (`wgmma_128x192`'s: m64n192k16
//! per consumer warpgroup, four stages of 40 KiB): B's three panels a phase split one and
//! two between the blocks of a cluster, a transposed B in boxes of 96 rows.
//!
//! Why: shapes whose 128 x 256 tiles leave the last wave mostly idle run on 128 x 192 tiles
//! (3000^3: 384 tiles, three nearly full waves), and where their rows of B lie off the
//! 32-byte sectors the blocks of a pair share B's copies as in `wgmma_pairs`.
//!
//! Launch rules ([`SPEC`]): as `wgmma_pairs`, with `wgmma_128x192`'s tiles and stages.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised_pairs};
use crate::parts::wgmma::warpgroup::stages_for;
use crate::problem::{Gemm, kernel};

// Launch: as `wgmma_pairs`, on 128 x 192 tiles.
kernel! {
    SPEC = spec(("wgmma_pairs_128x192", file!()), "`wgmma_pairs` on 128 x 192 tiles (`wgmma` m64n192k16, 4 stages of 40 KiB): B's three panels shared one and two by the blocks of a cluster",
        (192, stages_for(192)), Grid::PersistentPairs);
    fn wgmma_pairs_128x192<T: Half>(Gemm<T>) = warp_specialised_pairs::<T, [f32; 96], { stages_for(192) }>;
    strided entries wgmma_pairs_128x192_f16: f16, wgmma_pairs_128x192_bf16: Bf16, wgmma_pairs_128x192_f16_f16: Narrow<f16>, wgmma_pairs_128x192_bf16_bf16: Narrow<Bf16>;
}
