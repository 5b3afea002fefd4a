//! The element types the kernels take: `f32`, `f64`, and `half::f16` / `half::bf16`
//! (which accumulate in `f32` and write C in `f32` or in their own type: [`Output`]).
use cudarc::cublas::sys::{cublasComputeType_t, cudaDataType_t};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use std::fmt::Debug;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

/// What every element of a device buffer is: plain bits that may start as zeros.
pub trait Scalar:
    DeviceRepr + ValidAsZeroBits + Copy + Default + Debug + PartialEq + Send + Sync + 'static
{
    /// Exact for every type here.
    fn to_f64(self) -> f64;
    /// Rounds to nearest.
    fn from_f64(value: f64) -> Self;
}

/// An input element type of A and B. Sealed: the kernels exist for these four only.
pub trait Element: Scalar + sealed::Sealed {
    /// The kernels' accumulator, and the type of C unless the caller asks for another
    /// ([`Output`]): `f64` for `f64`, else `f32`.
    type Out: Output<Self>;
    /// The suffix of this type's kernel entry points (`naive_f32`, ...).
    const NAME: &'static str;
    /// The same, as the catalogue names element types.
    const ELEM: rgemm_kernels::catalogue::Elem;
    /// Unit roundoff of the accumulation (`2^-24` for f32, `2^-53` for f64).
    const ACC_UNIT_ROUNDOFF: f64;
    /// cuBLAS `gemmEx` types: A/B, C, compute.
    #[doc(hidden)]
    const CUBLAS: (cudaDataType_t, cudaDataType_t, cublasComputeType_t);
    /// `1` in the output type (cuBLAS's alpha).
    #[doc(hidden)]
    const ONE: Self::Out;
}

/// The type of C for inputs of type `T`: `T`'s accumulator type (`f32` for `f16` and
/// `bf16`, the default), or for 16-bit inputs the input type itself. Either way the
/// kernels accumulate in the accumulator type; a 16-bit C is rounded once, to nearest even,
/// as each element is stored (a sum past the type's range gives Inf, NaN stays NaN).
///
/// | inputs | C |
/// |---|---|
/// | `f32` | `f32` |
/// | `f64` | `f64` |
/// | `f16` | `f32` or `f16` |
/// | `bf16` | `f32` or `bf16` |
pub trait Output<T: Element>: Scalar + sealed::Sealed {
    /// The kernels' element type for this pairing (layout-identical inputs; its `Out` is
    /// layout-identical to `Self`).
    #[doc(hidden)]
    type Device: rgemm_kernels::host_bodies::HostBodies
        + rgemm_kernels::element::Element<Acc = T::Out>;
    /// The kernels' element type of a second launch (a fix-up or the TF32 pack): its entry
    /// points are named by C's type, so 16-bit inputs with C in f32 run the f32 ones
    /// (`stream_k_fixup_f32`), and its `Out` is `Device`'s.
    #[doc(hidden)]
    type Second: rgemm_kernels::host_bodies::HostBodies
        + rgemm_kernels::element::Element<
            Acc = T::Out,
            Out = <Self::Device as rgemm_kernels::element::Element>::Out,
        >;
    /// The suffix of the entry points for this pairing: `bf16` (C in f32), `bf16_bf16`.
    const SUFFIX: &'static str;
    /// Whether C is the 16-bit input type rather than the accumulator.
    const NARROW: bool;
    /// cuBLAS `gemmEx`'s type of C.
    #[doc(hidden)]
    const CUBLAS_C: cudaDataType_t;
    /// `(u, eta)`: storing an accumulated value `x` in C changes it by at most
    /// `u |x| + eta` (the unit roundoff, and half the smallest subnormal step); `(0, 0)`
    /// where C is the accumulator.
    const ROUNDING: (f64, f64);
}

/// `Output<$t> for $o`.
macro_rules! output {
    ($($t:ty => $o:ty: $device:ty, $second:ty, $suffix:literal, $cuda:ident, $rounding:expr;)*) => {$(
        impl Output<$t> for $o {
            type Device = $device;
            type Second = $second;
            const SUFFIX: &'static str = $suffix;
            const NARROW: bool = $rounding.0 > 0.0;
            const CUBLAS_C: cudaDataType_t = cudaDataType_t::$cuda;
            const ROUNDING: (f64, f64) = $rounding;
        }
    )*};
}

use rgemm_kernels::element::{Bf16 as DeviceBf16, F16 as DeviceF16, Narrow};

output! {
    f32 => f32: f32, f32, "f32", CUDA_R_32F, (0.0, 0.0);
    f64 => f64: f64, f64, "f64", CUDA_R_64F, (0.0, 0.0);
    half::f16 => f32: DeviceF16, f32, "f16", CUDA_R_32F, (0.0, 0.0);
    half::bf16 => f32: DeviceBf16, f32, "bf16", CUDA_R_32F, (0.0, 0.0);
    // 11 and 8 significant bits; subnormal steps 2^-24 and 2^-133.
    half::f16 => half::f16: Narrow<DeviceF16>, Narrow<DeviceF16>, "f16_f16", CUDA_R_16F,
        (F16_U, F16_ETA);
    half::bf16 => half::bf16: Narrow<DeviceBf16>, Narrow<DeviceBf16>, "bf16_bf16", CUDA_R_16BF,
        (BF16_U, BF16_ETA);
}

const F16_U: f64 = 1.0 / 2048.0;
const F16_ETA: f64 = 1.0 / (1u64 << 25) as f64;
const BF16_U: f64 = 1.0 / 256.0;
const BF16_ETA: f64 = 1e-40;

impl Scalar for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(value: f64) -> Self {
        value as f32
    }
}

impl Scalar for f64 {
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(value: f64) -> Self {
        value
    }
}

impl Scalar for half::f16 {
    fn to_f64(self) -> f64 {
        half::f16::to_f64(self)
    }
    fn from_f64(value: f64) -> Self {
        half::f16::from_f64(value)
    }
}

impl Scalar for half::bf16 {
    fn to_f64(self) -> f64 {
        half::bf16::to_f64(self)
    }
    fn from_f64(value: f64) -> Self {
        half::bf16::from_f64(value)
    }
}

const F32_U: f64 = f32::EPSILON as f64 / 2.0;

/// `Element for $t`: its accumulator `$out`, names, unit roundoff and cuBLAS types (A/B,
/// C, compute).
macro_rules! element {
    ($($t:ty => $out:ty: $name:literal, $elem:ident, $u:expr, ($ab:ident, $c:ident, $compute:ident);)*) => {$(
        impl Element for $t {
            type Out = $out;
            const NAME: &'static str = $name;
            const ELEM: rgemm_kernels::catalogue::Elem = rgemm_kernels::catalogue::Elem::$elem;
            const ACC_UNIT_ROUNDOFF: f64 = $u;
            const CUBLAS: (cudaDataType_t, cudaDataType_t, cublasComputeType_t) = (
                cudaDataType_t::$ab,
                cudaDataType_t::$c,
                cublasComputeType_t::$compute,
            );
            const ONE: $out = 1.0;
        }
    )*};
}

element! {
    f32 => f32: "f32", F32, F32_U, (CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F);
    f64 => f64: "f64", F64, f64::EPSILON / 2.0, (CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F);
    half::f16 => f32: "f16", F16, F32_U, (CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F);
    half::bf16 => f32: "bf16", Bf16, F32_U, (CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F);
}
