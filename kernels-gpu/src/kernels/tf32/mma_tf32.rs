//! f32 products in TF32, when the caller asks for them ([`Precision::Tf32`]): each element
//! of A and B rounded to TF32 (`cvt.rna.tf32.f32`) as its fragment is read, `mma.sync
//! .aligned.m16n8k8.row.col.f32.tf32.tf32.f32` on `wide_tile`'s block tile (128 x 128 by 32
//! along K, 8 warps, 3 stages), accumulated in f32.
//!
//! Launch rules ([`SPEC`]): 256 threads, a grid of 128 x 128 tiles, 107,520 shared bytes,
//! one block per SM; the sm_80 module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::parts::mma::schemes::Tf32;
use crate::parts::mma::wide_tile::{self, Steps8};
use crate::problem::{Gemm, entry_points};

const BN: u32 = 128;
const BK: u32 = 32;
const DEPTH: u32 = 3;

pub const SPEC: KernelSpec = KernelSpec {
    ptx: &[PtxFacts::all(&[Barriers(1)])],
    ..wide_tile::spec(
        ("mma_tf32", file!()),
        "f32 in TF32 when asked: inputs rounded by `cvt.rna.tf32`, `mma.sync` m16n8k8 on 128 x 128 tiles, 3 `cp.async` stages",
        (Arch::Sm80, Elem::F32, Precision::Tf32),
        (128, BN, BK, DEPTH, 4),
        1,
    )
};

/// # Safety
/// See the entry points; 256 threads per block; T is f32.
#[inline(always)]
pub unsafe fn mma_tf32(gemm: Gemm<f32>) {
    // SAFETY: the entry point's contract holds, with T f32 (the only entry); the launch follows
    // SPEC (`wide_tile::spec`): 256 threads = `threads(128, 128, 4)`, one block per 128 x 128 tile,
    // `shared_elements(128, 128, 32, 3, 4, false)`; SPEC is not strided, so the problem is
    // row-major: `A_T` and `B_T` false.
    unsafe {
        wide_tile::pipelined::<f32, Tf32, Tf32, Steps8, 128, BN, BK, DEPTH, 4, false, false>(gemm)
    }
}

entry_points!(mma_tf32; mma_tf32_f32: f32);
