//! Element types as the kernels see them: what is loaded from global memory, what it is
//! widened to for the multiply-add, and what is written to C.
use crate::device::vector::{Pack2, Pack4};

/// The accumulator (and output) type of a kernel.
pub trait Accumulator: Copy + Pack4 + Pack2 + core::ops::Add<Output = Self> {
    const ZERO: Self;
    /// Elements in 16 bytes, the widest shared-memory access: the thread tile's rows and
    /// columns come in runs of this many, so a warp's 16-byte reads of a K step are
    /// consecutive in shared memory (4 for f32, 2 for f64).
    const GRANULE: u32;
    /// `self + a * b`, rounded once (PTX `fma.rn`): rustc does not contract a separate
    /// multiply and add, and the fused form is both faster and more accurate.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

impl Accumulator for f32 {
    const ZERO: Self = 0.0;
    const GRANULE: u32 = 4;
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        core::intrinsics::fmaf32(a, b, self)
    }
}

impl Accumulator for f64 {
    const ZERO: Self = 0.0;
    const GRANULE: u32 = 2;
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        core::intrinsics::fmaf64(a, b, self)
    }
}

/// An input element of A and B.
pub trait Element: Copy + Pack4 {
    type Acc: Accumulator;
    /// Whether the element is its own accumulator type (f32, f64), so its bytes can be
    /// copied into shared memory as they are (`cp.async`) instead of widened.
    const IS_ACC: bool;
    fn widen(self) -> Self::Acc;
}

impl Element for f32 {
    type Acc = f32;
    const IS_ACC: bool = true;
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

impl Element for f64 {
    type Acc = f64;
    const IS_ACC: bool = true;
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
}

/// IEEE binary16 (Rust's `f16`), under a name other crates can use without the `f16`
/// feature; same layout as the host's `half::f16`.
pub type F16 = f16;

/// Widened by `cvt.f32.f16` on the GPU.
impl Element for f16 {
    type Acc = f32;
    const IS_ACC: bool = false;
    #[inline(always)]
    fn widen(self) -> f32 {
        self as f32
    }
}

/// bfloat16 bits; same layout as the host's `half::bf16`. Widening is exact: the bits are
/// the top half of an f32.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Element for Bf16 {
    type Acc = f32;
    const IS_ACC: bool = false;
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}
