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
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Steps16};
use crate::problem::{Gemm, entry_points};

pub const SPEC: KernelSpec = KernelSpec {
    ptx: &[PtxFacts::all(&[Barriers(4)])],
    ..wide_tile::spec(
        ("dmma_warps", file!()),
        "`dmma` with 32 x 32 warp tiles, 8 warps, `mma.sync` m16n8k16: twice the warps per SM",
        (Arch::Sm90a, Elem::F64, Precision::Exact),
        (128, 64, 16, 3, 2),
        2,
    )
};

/// # Safety
/// See the entry points; 256 threads per block; T is f64.
#[inline(always)]
pub unsafe fn dmma_warps(gemm: Gemm<f64>) {
    // SAFETY: the entry point's contract holds, with T f64 (the only entry); the launch follows
    // SPEC (`wide_tile::spec`): 256 threads = `threads(128, 64, 2)`, one block per 128 x 64 tile
    // and `shared_elements` for the strided f64 stages, what `wide_tile::strided` needs (it picks
    // `A_T`, `B_T` from the problem's layout itself).
    unsafe { wide_tile::strided::<f64, Dmma, Dmma, Steps16, 128, 64, 16, 3, 2>(gemm) }
}

entry_points!(dmma_warps; dmma_warps_f64: f64);
