//! `dmma_warps` on 64 x 64 block tiles (4 warps, 3 blocks per SM): four times the blocks of
//! `dmma`'s 128 x 64 tiles for a product, so a 1024^3 one fills 1.9 waves of 132 SMs
//! instead of 128 blocks on 264 slots.
//!
//! Launch rules ([`SPEC`]): 128 threads, a grid of 64 x 64 tiles, 61,456 shared bytes,
//! three blocks per SM; the sm_90a module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Steps16};
use crate::problem::{Gemm, entry_points};

pub const SPEC: KernelSpec = KernelSpec {
    ptx: &[PtxFacts::all(&[Barriers(4)])],
    ..wide_tile::spec(
        ("dmma_small", file!()),
        "`dmma_warps` on 64 x 64 block tiles, three blocks per SM: more blocks for smaller products",
        (Arch::Sm90a, Elem::F64, Precision::Exact),
        (64, 64, 16, 3, 2),
        3,
    )
};

/// # Safety
/// See the entry points; 128 threads per block; T is f64.
#[inline(always)]
pub unsafe fn dmma_small(gemm: Gemm<f64>) {
    // SAFETY: the entry point's contract holds, with T f64 (the only entry); the launch follows
    // SPEC (`wide_tile::spec`): 128 threads = `threads(64, 64, 2)`, one block per 64 x 64 tile and
    // `shared_elements` for the strided f64 stages, what `wide_tile::strided` needs (it picks
    // `A_T`, `B_T` from the problem's layout itself).
    unsafe { wide_tile::strided::<f64, Dmma, Dmma, Steps16, 64, 64, 16, 3, 2>(gemm) }
}

entry_points!(dmma_small; dmma_small_f64: f64);
