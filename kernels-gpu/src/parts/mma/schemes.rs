//! How the wide tile's mainloop ([`super::wide_tile`]) turns elements into `mma.sync`
//! fragments and multiplies them ([`Scheme`]): f64 as it is on the FP64 tensor cores
//! ([`Dmma`]), f32 rounded to TF32 ([`Tf32`]).
use crate::element::Accumulator;
use crate::parts::mma::wide_tile::Scheme;
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
