//! `dmma` with 8 K steps per stage and 6 stages: the same 48 KiB of K in flight per block,
//! but only one K step's fragments live at a time. `dmma`'s two steps per stage let the
//! compiler load both steps' fragments ahead (48 f64 beside 64 f64 accumulators), which
//! took it to 255 registers and 100 bytes of spills (ptxas, sm_90a).
//!
//! Launch rules ([`SPEC`]): as `dmma`, with 6 stages of 8 K steps (99,856 shared bytes).
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::dmma::Dmma;
use crate::element::Element;
use crate::problem::{Gemm, entry_points};
use crate::wide_tile;

const BN: u32 = 64;
const BK: u32 = 8;
const DEPTH: u32 = 6;

pub const SPEC: KernelSpec = wide_tile::spec(
    ("dmma_deep", file!()),
    "`dmma` with 8 K steps per stage, 6 stages: one step's fragments live at a time",
    (Arch::Sm90a, Elem::F64, Precision::Exact),
    (BN, BK, DEPTH),
    2,
);

/// # Safety
/// See the entry points; 128 threads per block; T is f64.
#[inline(always)]
pub unsafe fn dmma_deep<T: Element>(gemm: Gemm<T>) {
    unsafe { wide_tile::pipelined::<T, Dmma, Dmma, BN, BK, DEPTH>(gemm) }
}

entry_points!(dmma_deep; dmma_deep_f64: f64);
