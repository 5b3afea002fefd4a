//! Tensor cores on Hopper, `wgmma_128x64` with its last wave split over K: the tiles of the
//! last, partial wave (all of them where they fill less than one) are cut into slices of K,
//! as many as the idle SMs take (`split_tail`).
//!
//! Why: a product with few rows and a long K (128 x 4096 x 8192: 64 tiles of 128 x 64 on
//! 132 SMs) leaves half the GPU idle for the whole K loop. Two slices a tile put every SM to
//! work on B's bytes; each consumer warp writes its 16 rows of partial sums to the
//! workspace, and the last of a tile's slices to arrive adds them in K order and stores C,
//! with no block waiting for another.
//!
//! A kernel of its own, not a mode of `wgmma_128x64`: compiled into the same function, the
//! slices' end cost the persistent kernels 3-7% where nothing was split (bf16, H200,
//! `wgmma_persistent` 4096^3 0.195 -> 0.203 ms, 8192^3 1.41 -> 1.50; not profiled further).
//!
//! Launch rules ([`SPEC`]): `wgmma_128x64`'s, on `Grid::PersistentSplit`: `Problem::ctas`
//! slices, a grid of one block per unit where the tiles fill less than a wave, the counters
//! (zero at launch) and planes after the tensor maps in the workspace.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised};
use crate::parts::wgmma::warpgroup::stages_for;
use crate::problem::{Gemm, kernel};

// Launch: `warp_specialised::spec`'s for the body's tile width and stages; the host writes A's
// and B's tensor maps, then the split's counters and planes, into the workspace.
kernel! {
    SPEC = spec(("wgmma_split_128x64", file!()), "`wgmma_128x64` with the tiles of its last, partial wave (all of them where they fill less than one) cut into slices of K, one per idle SM; each consumer warp's slices meet in the workspace, the last to arrive adding them in K order",
        (64, stages_for(64)), Grid::PersistentSplit);
    fn wgmma_split_128x64<T: Half>(Gemm<T>) = warp_specialised::<T, true, true, [f32; 32], { stages_for(64) }>;
    strided entries wgmma_split_128x64_f16: f16, wgmma_split_128x64_bf16: Bf16, wgmma_split_128x64_f16_f16: Narrow<f16>, wgmma_split_128x64_bf16_bf16: Narrow<Bf16>;
}
