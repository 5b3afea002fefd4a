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
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Buffered};
use crate::problem::{Gemm, entry_points};

pub const SPEC: KernelSpec = KernelSpec {
    ptx: &[PtxFacts::all(&[Barriers(12)])],
    ..wide_tile::spec(
        ("dmma_buffered", file!()),
        "`dmma` with fragments double-buffered in registers across stages: the barrier before the last K step's `mma`s",
        (Arch::Sm90a, Elem::F64, Precision::Exact),
        (128, 64, 16, 3, 4),
        2,
    )
};

/// # Safety
/// See the entry points; 128 threads per block; T is f64.
#[inline(always)]
pub unsafe fn dmma_buffered(gemm: Gemm<f64>) {
    // SAFETY: the entry point's contract holds, with T f64 (the only entry); the launch follows
    // SPEC (`wide_tile::spec`): 128 threads = `threads(128, 64, 4)`, one block per 128 x 64 tile
    // and `shared_elements` for the strided f64 stages, what `wide_tile::strided` needs (it picks
    // `A_T`, `B_T` from the problem's layout itself).
    unsafe { wide_tile::strided::<f64, Dmma, Dmma, Buffered, 128, 64, 16, 3, 4>(gemm) }
}

entry_points!(dmma_buffered; dmma_buffered_f64: f64);
