//! How the wide tile's mainloop ([`super::wide_tile`]) turns elements into `mma.sync`
//! fragments and multiplies them ([`Scheme`]): f64 as it is on the FP64 tensor cores
//! ([`Dmma`]), f32 rounded to TF32 ([`Tf32`]). Each scheme is its accumulator type's: a
//! kernel's element type and its scheme agree or the kernel does not compile.
use crate::parts::mma::wide_tile::Scheme;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
use crate::parts::mma::wide_tile::{Step4, Step16};

/// f64 fragments as they are, on the FP64 tensor cores (sm_90a): K steps of 8
/// (`mma.sync.m16n8k8.f64`), of 16 in one instruction (`m16n8k16`, the same sum as two
/// steps of 8) and of 4 (`m16n8k4`, `dmma_k4`'s buffered mainloop).
pub struct Dmma;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
impl Scheme for Dmma {
    const REPAIR: bool = false;
    type Acc = f64;
    type Frag = f64;
    #[inline(always)]
    fn prepare(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma(a: [f64; 4], b: [f64; 2], c: [f64; 4]) -> [f64; 4] {
        crate::device::mma::m16n8k8_f64(a, b, c)
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
impl Step16 for Dmma {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma16(a: [f64; 8], b: [f64; 4], c: [f64; 4]) -> [f64; 4] {
        crate::device::mma::m16n8k16_f64(a, b, c)
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
impl Step4 for Dmma {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma4(a: [f64; 2], b: f64, c: [f64; 4]) -> [f64; 4] {
        crate::device::mma::m16n8k4_f64(a, b, c)
    }
}

/// Each f32 input rounded to TF32 once, as its fragment is read.
pub struct Tf32;

impl Scheme for Tf32 {
    const REPAIR: bool = false;
    type Acc = f32;
    type Frag = u32;
    #[inline(always)]
    fn prepare(x: f32) -> u32 {
        crate::device::mma::round_tf32(x)
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
        crate::device::mma::m16n8k8_tf32(a, b, c)
    }
}
