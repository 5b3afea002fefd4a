//! f64 on the FP64 tensor cores (DMMA, compute capability 9.0): `mma.sync.aligned.m16n8k8
//! .row.col.f64` on `wide_tile`'s block tile, 128 x 64 by 16 along K, 4 warps, a 3-stage
//! `cp.async` pipeline. Every product and sum is an IEEE f64 operation rounded to nearest;
//! only the order of the sums differs from the SIMT kernels'.
//!
//! Launch rules ([`SPEC`]): 128 threads, a grid of 128 x 64 tiles, 92,176 shared bytes,
//! two blocks per SM; the sm_90a module.
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::element::{Accumulator, Element};
use crate::problem::{Gemm, entry_points};
use crate::wide_tile::{self, Scheme};

const BN: u32 = 64;
const BK: u32 = 16;
const DEPTH: u32 = 3;

pub const SPEC: KernelSpec = wide_tile::spec(
    ("dmma", file!()),
    "f64 on the FP64 tensor cores: `mma.sync` m16n8k8 f64 on 128 x 64 tiles, a 3-stage `cp.async` pipeline",
    (Arch::Sm90a, Elem::F64, Precision::Exact),
    (128, BN, BK, DEPTH, 4),
    2,
);

/// f64 fragments as they are; K steps of 16 in one instruction (`mma.sync.m16n8k16.f64`,
/// the same sum as two m16n8k8 steps) where `K16`; the buffered mainloop in K steps of 4
/// (`mma.sync.m16n8k4.f64`, `dmma_k4`) where `K4`.
pub struct Dmma<const K16: bool, const K4: bool = false>;

impl<const K16: bool, const K4: bool> Scheme for Dmma<K16, K4> {
    const REPAIR: bool = false;
    const K16: bool = K16;
    const K4: bool = K4;
    type Frag<A: Accumulator> = A;
    #[inline(always)]
    fn prepare<A: Accumulator>(x: A) -> A {
        x
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma<A: Accumulator>(a: [A; 4], b: [A; 2], c: [A; 4]) -> [A; 4] {
        A::mma_m16n8k8_f64(a, b, c)
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma16<A: Accumulator>(a: [A; 8], b: [A; 4], c: [A; 4]) -> [A; 4] {
        A::mma_m16n8k16_f64(a, b, c)
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma4<A: Accumulator>(a: [A; 2], b: A, c: [A; 4]) -> [A; 4] {
        A::mma_m16n8k4_f64(a, b, c)
    }
}

/// # Safety
/// See the entry points; 128 threads per block; T is f64.
#[inline(always)]
pub unsafe fn dmma<T: Element>(gemm: Gemm<T>) {
    unsafe { wide_tile::strided::<T, Dmma<false>, Dmma<false>, 128, BN, BK, DEPTH, 4, false>(gemm) }
}

entry_points!(dmma; dmma_f64: f64);
