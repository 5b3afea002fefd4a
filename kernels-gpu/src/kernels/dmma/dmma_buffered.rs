//! `dmma` with its fragments double-buffered in registers, across stages too
//! (`wide_tile::buffered`): each K step's `mma`s issue after the next step's fragment
//! loads, and the wait and barrier for the next stage come before the last K step's
//! `mma`s, so the FP64 tensor pipe has work while the first fragments of a stage load.
//! The tile is cuBLAS DGEMM's on Hopper (ncu, H200: `tilesize128x64x16_stage3_warpsize2x2x1
//! _tensor16x8x8`, 246 registers): 128 x 64 by 16 along K in 3 stages, 4 warps of 64 x 32,
//! `mma.sync` m16n8k8 (two fragment buffers of m16n8k16's would not fit in 255 registers).
//!
//! Launch rules ([`SPEC`]): 128 threads, a grid of 128 x 64 tiles, 92,176 shared bytes,
//! two blocks per SM; the sm_90a module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Buffered};
use crate::problem::{Gemm, kernel};

// Launch: `wide_tile::spec`'s for the body's tile.
kernel! {
    SPEC = wide_tile::spec(("dmma_buffered", file!()), "`dmma` with fragments double-buffered in registers across stages: the barrier before the last K step's `mma`s",
        (Arch::Sm90a, Elem::F64, Precision::Exact), (128, 64, 16, 3, 4), 2).with_ptx(&[PtxFacts::all(&[Barriers(12)])]);
    fn dmma_buffered(Gemm<f64>) = wide_tile::strided::<f64, Dmma, Dmma, Buffered, 128, 64, 16, 3, 4>;
    entries dmma_buffered_f64: f64;
}
