//! `dmma_buffered`'s register-buffered mainloop on `dmma_small`'s 64 x 64 block tiles: 4
//! warps of 32 x 32 hold half the fragments of a 64 x 32 warp tile, so three blocks fit
//! an SM, and a product has four times the blocks of 128 x 64 tiles.
//!
//! Launch rules ([`SPEC`]): 128 threads, a grid of 64 x 64 tiles, three blocks per SM; the
//! sm_90a module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Buffered};
use crate::problem::{Gemm, entry_points};

pub const SPEC: KernelSpec = KernelSpec {
    ptx: &[PtxFacts::all(&[Barriers(12)])],
    ..wide_tile::spec(
        ("dmma_small_buffered", file!()),
        "`dmma_buffered`'s mainloop on 64 x 64 block tiles, three blocks per SM",
        (Arch::Sm90a, Elem::F64, Precision::Exact),
        (64, 64, 16, 3, 2),
        3,
    )
};

/// # Safety
/// See the entry points; 128 threads per block; T is f64.
#[inline(always)]
pub unsafe fn dmma_small_buffered(gemm: Gemm<f64>) {
    // SAFETY: the entry point's contract holds; the launch follows SPEC (`wide_tile::spec`): 128
    // threads = `threads(64, 64, 2)`, one block per 64 x 64 tile and `shared_elements` for the
    // strided f64 stages, what `wide_tile::strided` needs.
    unsafe { wide_tile::strided::<f64, Dmma, Dmma, Buffered, 64, 64, 16, 3, 2>(gemm) }
}

entry_points!(dmma_small_buffered; dmma_small_buffered_f64: f64);
