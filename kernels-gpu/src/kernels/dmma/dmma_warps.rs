//! `dmma` with 32 x 32 warp tiles: half the accumulators per thread (32 f64), so twice the
//! warps fit on an SM (2 blocks of 8 warps, 128 registers each) to hide the shared loads'
//! and the DMMA's latency. ncu on `dmma`'s 64 x 32 warp tiles: 2 warps per scheduler, no
//! warp eligible 71% of cycles. K steps of 16 (`mma.sync.m16n8k16.f64`, one `DMMA.16x8x16`):
//! measured as fast as two m16n8k8 steps here, with fewer instructions.
//!
//! Launch rules ([`SPEC`]): 256 threads, a grid of 128 x 64 tiles, 92,176 shared bytes,
//! two blocks per SM; the sm_90a module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Steps16};
use crate::problem::{Gemm, kernel};

// Launch: `wide_tile::spec`'s for the body's tile.
kernel! {
    SPEC = wide_tile::spec(("dmma_warps", file!()), "`dmma` with 32 x 32 warp tiles, 8 warps, `mma.sync` m16n8k16: twice the warps per SM",
        (Arch::Sm90a, Elem::F64, Precision::Exact), (128, 64, 16, 3, 2), 2).with_ptx(&[PtxFacts::all(&[Barriers(4)])]);
    fn dmma_warps(Gemm<f64>) = wide_tile::strided::<f64, Dmma, Dmma, Steps16, 128, 64, 16, 3, 2>;
    entries dmma_warps_f64: f64;
}
