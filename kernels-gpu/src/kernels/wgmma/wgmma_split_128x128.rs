//! Tensor cores on Hopper, `wgmma_128x128` with its last wave split over K
//! (`wgmma_split_128x64`'s schedule on 128 x 128 tiles).
//!
//! Why: where C has few rows (1-64: decode and small batches of a layer), 128-column tiles
//! are half as many as 64-column ones, and slices of K make up the SMs: a tile's B panel
//! is read by as many SMs, each with six stages of 32 KiB in flight, and A's box, cut to 64
//! rows, is read once per slice.
//!
//! Launch rules ([`SPEC`]): `wgmma_128x128`'s, on `Grid::PersistentSplit`, as
//! `wgmma_split_128x64`'s.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised};
use crate::parts::wgmma::warpgroup::stages_for;
use crate::problem::{Gemm, kernel};

// Launch: `warp_specialised::spec`'s for the body's tile width and stages; the host writes A's
// and B's tensor maps, then the split's counters and planes, into the workspace.
kernel! {
    SPEC = spec(("wgmma_split_128x128", file!()), "`wgmma_128x128` with the last wave split over K as `wgmma_split_128x64` splits it: half the tiles, each B panel read by as many SMs",
        (128, stages_for(128)), Grid::PersistentSplit);
    fn wgmma_split_128x128<T: Half>(Gemm<T>) = warp_specialised::<T, true, true, [f32; 64], { stages_for(128) }>;
    strided entries wgmma_split_128x128_f16: f16, wgmma_split_128x128_bf16: Bf16, wgmma_split_128x128_f16_f16: Narrow<f16>, wgmma_split_128x128_bf16_bf16: Narrow<Bf16>;
}
