//! f64 on the FP64 tensor cores (DMMA, compute capability 9.0): `mma.sync.aligned.m16n8k8
//! .row.col.f64` on `wide_tile`'s block tile, 128 x 64 by 16 along K, 4 warps, a 3-stage
//! `cp.async` pipeline. Every product and sum is an IEEE f64 operation rounded to nearest;
//! only the order of the sums differs from the SIMT kernels'.
//!
//! Launch rules ([`SPEC`]): 128 threads, a grid of 128 x 64 tiles, 92,176 shared bytes,
//! two blocks per SM; the sm_90a module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Steps8};
use crate::problem::{Gemm, entry_points};

const BN: u32 = 64;
const BK: u32 = 16;
const DEPTH: u32 = 3;

pub const SPEC: KernelSpec = KernelSpec {
    ptx: &[PtxFacts::all(&[Barriers(4)])],
    ..wide_tile::spec(
        ("dmma", file!()),
        "f64 on the FP64 tensor cores: `mma.sync` m16n8k8 f64 on 128 x 64 tiles, a 3-stage `cp.async` pipeline",
        (Arch::Sm90a, Elem::F64, Precision::Exact),
        (128, BN, BK, DEPTH, 4),
        2,
    )
};

/// # Safety
/// See the entry points; 128 threads per block; T is f64.
#[inline(always)]
pub unsafe fn dmma(gemm: Gemm<f64>) {
    // SAFETY: the entry point's contract holds, with T f64 (the only entry); the launch follows
    // SPEC (`wide_tile::spec`): 128 threads = `threads(128, 64, 4)`, one block per 128 x 64 tile
    // and `shared_elements` for the strided f64 stages, what `wide_tile::strided` needs (it picks
    // `A_T`, `B_T` from the problem's layout itself).
    unsafe { wide_tile::strided::<f64, Dmma, Dmma, Steps8, 128, BN, BK, DEPTH, 4>(gemm) }
}

entry_points!(dmma; dmma_f64: f64);
