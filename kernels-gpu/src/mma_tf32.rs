//! f32 products in TF32, when the caller asks for them ([`Precision::Tf32`]): each element
//! of A and B rounded to TF32 (`cvt.rna.tf32.f32`) as its fragment is read, `mma.sync
//! .aligned.m16n8k8.row.col.f32.tf32.tf32.f32` on `wide_tile`'s block tile (128 x 128 by 32
//! along K, 8 warps, 3 stages), accumulated in f32.
//!
//! Launch rules ([`SPEC`]): 256 threads, a grid of 128 x 128 tiles, 107,520 shared bytes,
//! one block per SM; the sm_80 module.
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::element::{Accumulator, Element};
use crate::problem::{Gemm, entry_points};
use crate::wide_tile::{self, Scheme};

pub(crate) const BN: u32 = 128;
pub(crate) const BK: u32 = 32;
pub(crate) const DEPTH: u32 = 3;

pub const SPEC: KernelSpec = wide_tile::spec(
    ("mma_tf32", file!()),
    "f32 in TF32 when asked: inputs rounded by `cvt.rna.tf32`, `mma.sync` m16n8k8 on 128 x 128 tiles, 3 `cp.async` stages",
    (Arch::Sm80, Elem::F32, Precision::Tf32),
    (128, BN, BK, DEPTH, 4),
    1,
);

/// Each input rounded to TF32 once, as its fragment is read.
pub struct Tf32;

impl Scheme for Tf32 {
    const REPAIR: bool = false;
    type Frag<A: Accumulator> = u32;
    #[inline(always)]
    fn prepare<A: Accumulator>(x: A) -> u32 {
        x.tf32()
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma<A: Accumulator>(a: [u32; 4], b: [u32; 2], c: [A; 4]) -> [A; 4] {
        A::mma_m16n8k8_tf32(a, b, c)
    }
}

/// # Safety
/// See the entry points; 256 threads per block; T is f32.
#[inline(always)]
pub unsafe fn mma_tf32<T: Element>(gemm: Gemm<T>) {
    unsafe {
        wide_tile::pipelined::<T, Tf32, Tf32, 128, BN, BK, DEPTH, 4, false, false, false>(gemm)
    }
}

entry_points!(mma_tf32; mma_tf32_f32: f32);
