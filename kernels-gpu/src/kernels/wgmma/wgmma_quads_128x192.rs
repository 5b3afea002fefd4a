//! Tensor cores on Hopper, `wgmma_quads` on 128 x 192 tiles (`wgmma_128x192`'s: m64n192k16
//! per consumer warpgroup, four stages of 40 KiB): B's three panels a phase split one and
//! two between the blocks of a column of the square, a transposed B in boxes of 96 rows, A
//! in halves between the blocks of a row.
//!
//! Why: shapes whose 128 x 256 tiles leave the last wave mostly idle run on 128 x 192 tiles
//! (3000^3: 384 tiles, 96 squares), and where both operands' rows lie off the 32-byte
//! sectors the blocks of a square share the copies of both.
//!
//! Launch rules ([`SPEC`]): as `wgmma_quads`, with `wgmma_128x192`'s tiles and stages.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised_quads};
use crate::parts::wgmma::warpgroup::stages_for;
use crate::problem::{Gemm, kernel};

// Launch: as `wgmma_quads`, on 128 x 192 tiles.
kernel! {
    SPEC = spec(("wgmma_quads_128x192", file!()), "`wgmma_quads` on 128 x 192 tiles (`wgmma` m64n192k16, 4 stages of 40 KiB): A's halves shared by the blocks of a row of the square, B's three panels one and two by those of a column",
        (192, stages_for(192)), Grid::PersistentQuads);
    fn wgmma_quads_128x192<T: Half>(Gemm<T>) = warp_specialised_quads::<T, [f32; 96], { stages_for(192) }>;
    strided entries wgmma_quads_128x192_f16: f16, wgmma_quads_128x192_bf16: Bf16, wgmma_quads_128x192_f16_f16: Narrow<f16>, wgmma_quads_128x192_bf16_bf16: Narrow<Bf16>;
}
