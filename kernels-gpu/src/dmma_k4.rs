//! `dmma_buffered` in K steps of 4 (`mma.sync.aligned.m16n8k4.row.col.f64`, SASS
//! `DMMA.16x8x4`, which the FP64 tensor pipe runs at the rate of m16n8k8: 66.7 against 66.8
//! TFLOP/s in a register-only probe, H200): a step's fragments take half the registers, so
//! two steps' fit whole ([`wide_tile`]'s `buffered4`), and the next step's loads need not
//! wait for the `mma`s still reading the registers they would overwrite.
//!
//! Launch rules ([`SPEC`]): as `dmma_buffered`.
use crate::catalogue::{Arch, Elem, KernelSpec, Precision};
use crate::element::{Accumulator, Element};
use crate::problem::{Gemm, entry_points};
use crate::wide_tile::{self, Scheme};

pub const SPEC: KernelSpec = wide_tile::spec(
    ("dmma_k4", file!()),
    "`dmma_buffered` in K steps of 4 (`mma.sync` m16n8k4 f64): half the fragment registers a step, two steps held whole",
    (Arch::Sm90a, Elem::F64, Precision::Exact),
    (128, 64, 16, 3, 4),
    2,
);

/// f64 fragments as they are, the buffered mainloop in K steps of 4 where `K4`.
/// (`DmmaK4<false>` is the kernel's repair scheme, which never repairs.)
pub struct DmmaK4<const K4: bool>;

impl<const K4: bool> Scheme for DmmaK4<K4> {
    const REPAIR: bool = false;
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
    fn mma4<A: Accumulator>(a: [A; 2], b: A, c: [A; 4]) -> [A; 4] {
        A::mma_m16n8k4_f64(a, b, c)
    }
}

/// # Safety
/// See the entry points; 128 threads per block; T is f64.
#[inline(always)]
pub unsafe fn dmma_k4<T: Element>(gemm: Gemm<T>) {
    unsafe { wide_tile::strided::<T, DmmaK4<true>, DmmaK4<false>, 128, 64, 16, 3, 4, true>(gemm) }
}

entry_points!(dmma_k4; dmma_k4_f64: f64);
