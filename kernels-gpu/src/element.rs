//! Element types as the kernels see them: what is loaded from global memory, what it is
//! widened to for the multiply-add, and what is written to C.
use crate::device::vector::{Pack2, Pack4, pack};

/// What a kernel writes to C: its accumulator type, or a 16-bit input type (see [`Narrow`]).
pub trait Output: Copy + Pack2 + Pack4 {
    /// Two of these fill one 32-bit word (f16, bf16): a lane's pair of C values is what a
    /// warp shuffle moves (see [`crate::parts::wgmma::epilogue`]).
    const HALF_WORD: bool = false;
    /// A pair as one word, the first in the low half (`HALF_WORD` types only).
    #[inline(always)]
    fn to_word(_: [Self; 2]) -> u32 {
        crate::device::thread::trap()
    }
    /// Two words of pairs as four values (`HALF_WORD` types only).
    #[inline(always)]
    fn from_words(_: [u32; 2]) -> [Self; 4] {
        crate::device::thread::trap()
    }
}
impl Output for f32 {}
impl Output for f64 {}

/// `Output` for a 16-bit type whose bits `$bits` gives and `$from` takes back.
macro_rules! half_word_output {
    ($t:ty, $bits:expr, $from:expr) => {
        impl Output for $t {
            const HALF_WORD: bool = true;
            #[inline(always)]
            fn to_word([lo, hi]: [Self; 2]) -> u32 {
                $bits(lo) as u32 | ($bits(hi) as u32) << 16
            }
            #[inline(always)]
            fn from_words(w: [u32; 2]) -> [Self; 4] {
                let half = |i: usize| $from((w[i / 2] >> (16 * (i % 2))) as u16);
                [half(0), half(1), half(2), half(3)]
            }
        }
    };
}
half_word_output!(F16, F16::to_bits, F16::from_bits);
half_word_output!(Bf16, |x: Bf16| x.0, Bf16);

/// `a * b + c` rounded once: LLVM's fma intrinsic on the GPU (`fma.rn`), the standard
/// library's `mul_add` (the same IEEE operation) on the host.
mod fma {
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn f32(a: f32, b: f32, c: f32) -> f32 {
        core::intrinsics::fmaf32(a, b, c)
    }
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn f64(a: f64, b: f64, c: f64) -> f64 {
        core::intrinsics::fmaf64(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub fn f32(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub fn f64(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

/// The accumulator (and output) type of a kernel.
pub trait Accumulator:
    Output
    + PartialEq
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    /// `x` rounded to this type (alpha and beta arrive as f64).
    fn from_f64(x: f64) -> Self;
    /// Elements in 16 bytes, the widest shared-memory access: the thread tile's rows and
    /// columns come in runs of this many, so a warp's 16-byte reads of a K step are
    /// consecutive in shared memory (4 for f32, 2 for f64).
    const GRANULE: u32;
    /// `self + a * b`, rounded once (PTX `fma.rn`): rustc does not contract a separate
    /// multiply and add, and the fused form is both faster and more accurate.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// An f32 tensor-core accumulator as this type (exact).
    fn from_f32(x: f32) -> Self;
    fn is_nan(self) -> bool;
    fn is_finite(self) -> bool;
}

/// [`Accumulator`] for the float type `$t`, `$granule` of which fill 16 bytes.
macro_rules! accumulator {
    ($($t:ident: GRANULE = $granule:literal;)*) => {$(
        impl Accumulator for $t {
            const ONE: Self = 1.0;
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            const ZERO: Self = 0.0;
            const GRANULE: u32 = $granule;
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                fma::$t(a, b, self)
            }
            #[inline(always)]
            fn from_f32(x: f32) -> Self {
                x as $t
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
        }
    )*};
}

accumulator! {
    f32: GRANULE = 4;
    f64: GRANULE = 2;
}

/// An input element of A and B.
pub trait Element: Copy + Pack4 + 'static {
    type Acc: Accumulator;
    /// What C holds: the accumulator, or for [`Narrow`] inputs the input type.
    type Out: Output;
    /// An accumulated element of C as C holds it: the accumulator as it is, or rounded once
    /// to the 16-bit type (to nearest even: overflow gives Inf, NaN stays NaN).
    fn out(acc: Self::Acc) -> Self::Out;
    /// An element of C back in the accumulator type (exact), for `beta C`.
    fn out_widen(c: Self::Out) -> Self::Acc;
    /// Zero, as loaded for padding.
    const ZERO: Self;
    /// Whether the element is its own accumulator type (f32, f64), so its bytes can be
    /// copied into shared memory as they are (`cp.async`) instead of widened.
    const IS_ACC: bool;
    fn widen(self) -> Self::Acc;
}

/// A 16-bit input on the tensor cores (f16, bf16; C in f32 or in the input type): its bits
/// in fragments and the `mma.sync` that takes it (and every `wgmma` shape). Kernels on the
/// 16-bit tensor cores are generic over this, so a wider type has no such kernel.
pub trait Half: WgmmaInput {
    /// The bits (tensor-core fragments pack two per 32-bit register).
    fn bits16(self) -> u16;
    /// `D = A B + C` for one 16 x 8 x 16 tile on the tensor cores (`mma.sync.aligned.m16n8k16
    /// .row.col.f32.<type>.<type>.f32`), with the fragments each lane holds as the PTX ISA
    /// lays them out; see [`crate::device::mma`].
    fn mma_m16n8k16(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4];
}

/// An input of Hopper's `wgmma` (16-bit types, and f32 as TF32): the shapes that take it.
pub trait WgmmaInput: Element<Acc = f32> {
    /// `D += A B` for a 64 x 256 tile and one 32-byte K slice of the operands on Hopper's
    /// tensor cores: K = 16 for 16-bit types (`wgmma.mma_async.m64n256k16`, A MN-major where
    /// `A_MN`, else K-major, and B likewise), K = 8 in TF32 for f32 (`m64n256k8.tf32`, both
    /// K-major: the transposes trap), the f32 entries of TF32 kernels only; see
    /// [`crate::device::wgmma`]. Modules without `wgmma`: traps.
    ///
    /// # Safety
    /// As `device::wgmma::m64n256k16_bf16`.
    unsafe fn wgmma_m64n256<const A_MN: bool, const B_MN: bool>(
        acc: &mut [f32; 128],
        a: Wgmma,
        b: Wgmma,
    );
    /// [`WgmmaInput::wgmma_m64n256`] on a 64 x 192 tile (`wgmma.mma_async.m64n192k16`),
    /// 16-bit types only: f32 traps.
    ///
    /// # Safety
    /// As `device::wgmma::m64n192k16_bf16`.
    unsafe fn wgmma_m64n192<const A_MN: bool, const B_MN: bool>(
        acc: &mut [f32; 96],
        a: Wgmma,
        b: Wgmma,
    );
    /// [`WgmmaInput::wgmma_m64n256`] on a 64 x 128 tile (`wgmma.mma_async.m64n128k16`),
    /// 16-bit types only: f32 traps.
    ///
    /// # Safety
    /// As `device::wgmma::m64n128k16_bf16`.
    unsafe fn wgmma_m64n128<const A_MN: bool, const B_MN: bool>(
        acc: &mut [f32; 64],
        a: Wgmma,
        b: Wgmma,
    );
    /// [`WgmmaInput::wgmma_m64n256`] on a 64 x 64 tile (`wgmma.mma_async.m64n64k16`),
    /// 16-bit types only: f32 traps.
    ///
    /// # Safety
    /// As `device::wgmma::m64n64k16_bf16`.
    unsafe fn wgmma_m64n64<const A_MN: bool, const B_MN: bool>(
        acc: &mut [f32; 32],
        a: Wgmma,
        b: Wgmma,
    );
    /// [`WgmmaInput::wgmma_m64n256`] on a 64 x 32 tile (`wgmma.mma_async.m64n32k16`),
    /// 16-bit types only: f32 traps.
    ///
    /// # Safety
    /// As `device::wgmma::m64n32k16_bf16`.
    unsafe fn wgmma_m64n32<const A_MN: bool, const B_MN: bool>(
        acc: &mut [f32; 16],
        a: Wgmma,
        b: Wgmma,
    );
    /// [`WgmmaInput::wgmma_m64n256`] on a 64 x 16 tile (`wgmma.mma_async.m64n16k16`),
    /// 16-bit types only: f32 traps.
    ///
    /// # Safety
    /// As `device::wgmma::m64n16k16_bf16`.
    unsafe fn wgmma_m64n16<const A_MN: bool, const B_MN: bool>(
        acc: &mut [f32; 8],
        a: Wgmma,
        b: Wgmma,
    );
}

/// A `wgmma` matrix descriptor, where the module has them.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub type Wgmma = crate::device::wgmma::Descriptor;
/// A `wgmma` matrix descriptor: no `wgmma` in this module.
#[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90a")))]
pub type Wgmma = u64;

/// The 64 x 192, 64 x 128, 64 x 64, 64 x 32 and 64 x 16 `wgmma`s of f32, which has only
/// TF32's 64 x 256: traps.
macro_rules! no_narrow_wgmma {
    () => {
        wgmma_shape!(wgmma_m64n192, 96, trap);
        wgmma_shape!(wgmma_m64n128, 64, trap);
        wgmma_shape!(wgmma_m64n64, 32, trap);
        wgmma_shape!(wgmma_m64n32, 16, trap);
        wgmma_shape!(wgmma_m64n16, 8, trap);
    };
}

/// One `wgmma` shape of [`WgmmaInput`], `$method` on `$len` accumulators a thread: `$device`
/// in `device::wgmma` (the sm_90a module and the host; the other modules trap), or `trap`
/// for a type without it.
macro_rules! wgmma_shape {
    ($method:ident, $len:literal, trap) => {
        #[inline(always)]
        unsafe fn $method<const A_MN: bool, const B_MN: bool>(
            _: &mut [f32; $len],
            _: Wgmma,
            _: Wgmma,
        ) {
            crate::device::thread::trap()
        }
    };
    ($method:ident, $len:literal, $device:ident) => {
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        unsafe fn $method<const A_MN: bool, const B_MN: bool>(
            acc: &mut [f32; $len],
            a: Wgmma,
            b: Wgmma,
        ) {
            #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
            // SAFETY: the caller's contract (the trait method's `# Safety`) is
            // `device::wgmma`'s for this shape.
            unsafe {
                crate::device::wgmma::$device::<A_MN, B_MN>(acc, a, b)
            }
            #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90a")))]
            {
                let _ = (acc, a, b);
                crate::device::thread::trap()
            }
        }
    };
}

/// The tensor-core operations of 16-bit type `$t`: `$mma` in `device::mma` (sm_80 and the
/// host; the sm_70 module has no tensor-core kernel and traps), the `wgmma`s in
/// `device::wgmma`.
macro_rules! tensor_cores {
    (
        $t:ty, $bits:expr, $mma:ident, $wgmma:ident, $wgmma192:ident, $wgmma128:ident,
        $wgmma64:ident, $wgmma32:ident, $wgmma16:ident
    ) => {
        impl Half for $t {
            #[inline(always)]
            fn bits16(self) -> u16 {
                $bits(self)
            }
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            fn mma_m16n8k16(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
                #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
                return crate::device::mma::$mma(a, b, c);
                #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
                {
                    let _ = (a, b, c);
                    crate::device::thread::trap()
                }
            }
        }
        impl WgmmaInput for $t {
            wgmma_shape!(wgmma_m64n256, 128, $wgmma);
            wgmma_shape!(wgmma_m64n192, 96, $wgmma192);
            wgmma_shape!(wgmma_m64n128, 64, $wgmma128);
            wgmma_shape!(wgmma_m64n64, 32, $wgmma64);
            wgmma_shape!(wgmma_m64n32, 16, $wgmma32);
            wgmma_shape!(wgmma_m64n16, 8, $wgmma16);
        }
    };
}

impl WgmmaInput for f32 {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn wgmma_m64n256<const A_MN: bool, const B_MN: bool>(
        acc: &mut [f32; 128],
        a: Wgmma,
        b: Wgmma,
    ) {
        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
        if !A_MN && !B_MN {
            // SAFETY: both operands K-major (tested above): the caller's contract (the
            // trait's) is `m64n256k8_tf32`'s.
            return unsafe { crate::device::wgmma::m64n256k8_tf32(acc, a, b) };
        }
        let _ = (acc, a, b);
        crate::device::thread::trap()
    }
    no_narrow_wgmma!();
}

/// IEEE binary16: Rust's `f16` on the GPU, `half::f16` on the host, where the primitive
/// needs a nightly compiler (the two have one layout and round alike, to nearest even).
#[cfg(target_arch = "nvptx64")]
pub type F16 = f16;
/// IEEE binary16: Rust's `f16` on the GPU, `half::f16` on the host, where the primitive
/// needs a nightly compiler (the two have one layout and round alike, to nearest even).
#[cfg(not(target_arch = "nvptx64"))]
pub type F16 = half::f16;

/// [`F16`]'s conversions, written once for both of its types.
#[cfg(target_arch = "nvptx64")]
mod binary16 {
    use super::F16;
    pub const ZERO: F16 = 0.0;
    #[inline(always)]
    pub fn widen(x: F16) -> f32 {
        x as f32
    }
    #[inline(always)]
    pub fn round(x: f32) -> F16 {
        x as F16
    }
}
/// [`F16`]'s conversions, written once for both of its types.
#[cfg(not(target_arch = "nvptx64"))]
mod binary16 {
    use super::F16;
    pub const ZERO: F16 = F16::ZERO;
    #[inline(always)]
    pub fn widen(x: F16) -> f32 {
        x.to_f32()
    }
    #[inline(always)]
    pub fn round(x: f32) -> F16 {
        F16::from_f32(x)
    }
}

tensor_cores!(
    F16,
    F16::to_bits,
    m16n8k16_f16,
    m64n256k16_f16,
    m64n192k16_f16,
    m64n128k16_f16,
    m64n64k16_f16,
    m64n32k16_f16,
    m64n16k16_f16
);

/// bfloat16 bits; same layout as the host's `half::bf16`. Widening is exact: the bits are
/// the top half of an f32.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Bf16(pub u16);

tensor_cores!(
    Bf16,
    |x: Bf16| x.0,
    m16n8k16_bf16,
    m64n256k16_bf16,
    m64n192k16_bf16,
    m64n128k16_bf16,
    m64n64k16_bf16,
    m64n32k16_bf16,
    m64n16k16_bf16
);

impl Bf16 {
    /// `x` rounded to the nearest bfloat16, ties to even: a finite value past the largest
    /// bfloat16 gives Inf, NaN the canonical NaN. One `cvt.rn.bf16.f32` from compute
    /// capability 8.0 (the integer form cost so many instructions per element that LLVM
    /// stopped unrolling `wgmma_tma`'s epilogue and sent its 128 accumulators to local
    /// memory); the same in integer operations elsewhere (sm_70, the host).
    #[inline(always)]
    pub fn round(x: f32) -> Bf16 {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
        {
            let bits: u16;
            // SAFETY: a conversion between registers.
            unsafe {
                core::arch::asm!("cvt.rn.bf16.f32 {b}, {x};", b = out(reg16) bits, x = in(reg32) x)
            };
            Bf16(bits)
        }
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_80")))]
        Self::round_bits(x)
    }

    /// [`Bf16::round`] in integer operations.
    #[inline(always)]
    pub fn round_bits(x: f32) -> Bf16 {
        let bits = x.to_bits();
        let even = (bits >> 16) & 1;
        let rounded = (bits.wrapping_add(0x7fff + even) >> 16) as u16;
        Bf16(if x.is_nan() { 0x7fff } else { rounded })
    }
}

/// [`Element`] for each `$t` whose C is held in its accumulator type `$acc` (`IS_ACC` where
/// that is `$t` itself), with zero `$zero` and widened by `$widen`.
macro_rules! element {
    ($(
        $t:ty => $acc:ty, IS_ACC = $is_acc:literal, ZERO = $zero:expr, widen: $widen:expr;
    )*) => {$(
        impl Element for $t {
            type Acc = $acc;
            type Out = $acc;
            #[inline(always)]
            fn out(acc: $acc) -> $acc {
                acc
            }
            #[inline(always)]
            fn out_widen(c: $acc) -> $acc {
                c
            }
            const ZERO: Self = $zero;
            const IS_ACC: bool = $is_acc;
            #[inline(always)]
            fn widen(self) -> $acc {
                $widen(self)
            }
        }
    )*};
}

element! {
    f32 => f32, IS_ACC = true, ZERO = 0.0, widen: core::convert::identity;
    f64 => f64, IS_ACC = true, ZERO = 0.0, widen: core::convert::identity;
    // Widened by `cvt.f32.f16` on the GPU.
    F16 => f32, IS_ACC = false, ZERO = binary16::ZERO, widen: binary16::widen;
    Bf16 => f32, IS_ACC = false, ZERO = Bf16(0),
        widen: |x: Bf16| f32::from_bits((x.0 as u32) << 16);
}

/// A 16-bit input whose product is written to C in that same type: the bits of `E`, and
/// entry points `<kernel>_<type>_<type>` that accumulate in f32 like `E`'s and round each
/// element of C once, as it is stored.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Narrow<E>(pub E);

/// An input type that C can be held in ([`Narrow`]).
pub trait Narrowing: Element<Acc = f32> + Output {
    /// The f32 accumulator rounded once to this type (to nearest even: overflow gives Inf,
    /// NaN stays NaN).
    fn narrow(acc: f32) -> Self;
}

impl Narrowing for F16 {
    #[inline(always)]
    fn narrow(acc: f32) -> Self {
        binary16::round(acc)
    }
}

impl Narrowing for Bf16 {
    #[inline(always)]
    fn narrow(acc: f32) -> Self {
        Bf16::round(acc)
    }
}

impl<E: Narrowing> Element for Narrow<E>
where
    Self: Pack4,
{
    type Acc = f32;
    type Out = E;
    #[inline(always)]
    fn out(acc: f32) -> E {
        E::narrow(acc)
    }
    #[inline(always)]
    fn out_widen(c: E) -> f32 {
        c.widen()
    }
    const ZERO: Self = Narrow(E::ZERO);
    const IS_ACC: bool = false;
    #[inline(always)]
    fn widen(self) -> f32 {
        self.0.widen()
    }
}

tensor_cores!(
    Narrow<F16>,
    |x: Narrow<F16>| x.0.to_bits(),
    m16n8k16_f16,
    m64n256k16_f16,
    m64n192k16_f16,
    m64n128k16_f16,
    m64n64k16_f16,
    m64n32k16_f16,
    m64n16k16_f16
);

tensor_cores!(
    Narrow<Bf16>,
    |x: Narrow<Bf16>| x.0.0,
    m16n8k16_bf16,
    m64n256k16_bf16,
    m64n192k16_bf16,
    m64n128k16_bf16,
    m64n64k16_bf16,
    m64n32k16_bf16,
    m64n16k16_bf16
);

pack!(Pack4, 4, Aligned8 => F16, Bf16, Narrow<F16>, Narrow<Bf16>);
pack!(Pack2, 2, Pair4 => F16, Bf16);
