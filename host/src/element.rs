//! The element types the kernels take: `f32`, `f64`, and `half::f16` / `half::bf16`
//! (which accumulate and write `f32`).
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
    /// The type of C and of the kernels' accumulator: `f64` for `f64`, else `f32`.
    type Out: Scalar;
    /// The same bits as the kernels see them (`rgemm_kernels::element`), for the CPU
    /// executor; identical layout.
    #[doc(hidden)]
    type Device: rgemm_kernels::element::Element<Acc = Self::Out>;
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
const F32_CUBLAS: (cudaDataType_t, cudaDataType_t, cublasComputeType_t) = (
    cudaDataType_t::CUDA_R_32F,
    cudaDataType_t::CUDA_R_32F,
    cublasComputeType_t::CUBLAS_COMPUTE_32F,
);

impl Element for f32 {
    type Out = f32;
    type Device = f32;
    const NAME: &'static str = "f32";
    const ELEM: rgemm_kernels::catalogue::Elem = rgemm_kernels::catalogue::Elem::F32;
    const ACC_UNIT_ROUNDOFF: f64 = F32_U;
    const CUBLAS: (cudaDataType_t, cudaDataType_t, cublasComputeType_t) = F32_CUBLAS;
    const ONE: f32 = 1.0;
}

impl Element for f64 {
    type Out = f64;
    type Device = f64;
    const NAME: &'static str = "f64";
    const ELEM: rgemm_kernels::catalogue::Elem = rgemm_kernels::catalogue::Elem::F64;
    const ACC_UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
    const CUBLAS: (cudaDataType_t, cudaDataType_t, cublasComputeType_t) = (
        cudaDataType_t::CUDA_R_64F,
        cudaDataType_t::CUDA_R_64F,
        cublasComputeType_t::CUBLAS_COMPUTE_64F,
    );
    const ONE: f64 = 1.0;
}

impl Element for half::f16 {
    type Out = f32;
    type Device = rgemm_kernels::element::F16;
    const NAME: &'static str = "f16";
    const ELEM: rgemm_kernels::catalogue::Elem = rgemm_kernels::catalogue::Elem::F16;
    const ACC_UNIT_ROUNDOFF: f64 = F32_U;
    const CUBLAS: (cudaDataType_t, cudaDataType_t, cublasComputeType_t) = (
        cudaDataType_t::CUDA_R_16F,
        cudaDataType_t::CUDA_R_32F,
        cublasComputeType_t::CUBLAS_COMPUTE_32F,
    );
    const ONE: f32 = 1.0;
}

impl Element for half::bf16 {
    type Out = f32;
    type Device = rgemm_kernels::element::Bf16;
    const NAME: &'static str = "bf16";
    const ELEM: rgemm_kernels::catalogue::Elem = rgemm_kernels::catalogue::Elem::Bf16;
    const ACC_UNIT_ROUNDOFF: f64 = F32_U;
    const CUBLAS: (cudaDataType_t, cudaDataType_t, cublasComputeType_t) = (
        cudaDataType_t::CUDA_R_16BF,
        cudaDataType_t::CUDA_R_32F,
        cublasComputeType_t::CUBLAS_COMPUTE_32F,
    );
    const ONE: f32 = 1.0;
}
