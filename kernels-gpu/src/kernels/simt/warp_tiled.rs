//! Warp tiling, then deeper phases and smaller tiles for small problems: the double-buffered
//! kernel with threads mapped so that each warp owns a compact patch of thread tiles (4 x 8)
//! instead of a strip, so per K step a warp reads 4 distinct 16-byte groups of A and 8 of B
//! from shared memory (a 128-wide row-major warp reads 2 and 16).
//!
//! - `warp_tiled`: block tile 128 x 128, BK = 8 (as `double_buffered`).
//! - `warp_tiled_k16`: BK = 16: half the barriers and phase overheads per multiply-add, and
//!   interior blocks run a mainloop compiled without bounds checks.
//! - `warp_tiled_64`: block tile 64 x 64, BK = 16, 64 threads: four times the blocks, for
//!   products too small to fill every SM with 128 x 128 tiles (also specialised).
//!
//! Launch rules ([`WARP_TILED`] and its siblings): `(BM / 8) * (BN / 8)` threads in a 1D block, grid
//! `ceil(n / BN) x ceil(m / BM)`, shared bytes `2 * (BK * BM + BK * BN) * size_of(Acc)`.
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Shared};
use crate::element::Element;
use crate::element::{Bf16, Narrow};
use crate::parts::simt::block_tile;
use crate::parts::simt::block_tile::WarpTiled;
use crate::parts::simt::block_tile::{VECTORS_F32, VECTORS_F64};
use crate::parts::simt::register_stages::pipelined;
use crate::problem::{Gemm, kernel};

// Launch: `block_tile::spec`'s, two stages as `pipelined` needs.
kernel! {
    WARP_TILED = block_tile::spec(("warp_tiled", file!()), "each warp owns a compact 4 x 8 patch of thread tiles",
        Arch::Sm70, (128, 128), Shared::stages(2, 8), Some(2)).with_ptx(&[PtxFacts::all(&[Barriers(2), AtLeast("fma.rn.f", 512)]), VECTORS_F32, VECTORS_F64]);
    fn warp_tiled<T: Element>(Gemm<T>) = pipelined::<T, WarpTiled, { WARP_TILED.rows() }, { WARP_TILED.cols() }, { WARP_TILED.bk() }, false>;
    entries warp_tiled_f32: f32, warp_tiled_f64: f64, warp_tiled_f16: f16, warp_tiled_bf16: Bf16, warp_tiled_f16_f16: Narrow<f16>, warp_tiled_bf16_bf16: Narrow<Bf16>;
}

kernel! {
    WARP_TILED_K16 = block_tile::spec(("warp_tiled_k16", file!()), "BK = 16, interior blocks run a mainloop compiled without bounds checks",
        Arch::Sm70, (128, 128), Shared::stages(2, 16), Some(2)).with_ptx(&[PtxFacts::all(&[Barriers(4), AtLeast("fma.rn.f", 64)]), VECTORS_F32, VECTORS_F64]);
    fn warp_tiled_k16<T: Element>(Gemm<T>) = pipelined::<T, WarpTiled, { WARP_TILED_K16.rows() }, { WARP_TILED_K16.cols() }, { WARP_TILED_K16.bk() }, true>;
    entries warp_tiled_k16_f32: f32, warp_tiled_k16_f64: f64, warp_tiled_k16_f16: f16, warp_tiled_k16_bf16: Bf16, warp_tiled_k16_f16_f16: Narrow<f16>, warp_tiled_k16_bf16_bf16: Narrow<Bf16>;
}

// No launch bound: 64 threads a block leave registers to spare.
kernel! {
    WARP_TILED_64 = block_tile::spec(("warp_tiled_64", file!()), "64 x 64 block tiles: 4x the blocks for products too small to fill the GPU",
        Arch::Sm70, (64, 64), Shared::stages(2, 16), None).with_ptx(&[PtxFacts::all(&[Barriers(4), AtLeast("fma.rn.f", 64)]), VECTORS_F32, VECTORS_F64]);
    fn warp_tiled_64<T: Element>(Gemm<T>) = pipelined::<T, WarpTiled, { WARP_TILED_64.rows() }, { WARP_TILED_64.cols() }, { WARP_TILED_64.bk() }, true>;
    entries warp_tiled_64_f32: f32, warp_tiled_64_f64: f64, warp_tiled_64_f16: f16, warp_tiled_64_bf16: Bf16, warp_tiled_64_f16_f16: Narrow<f16>, warp_tiled_64_bf16_bf16: Narrow<Bf16>;
}
