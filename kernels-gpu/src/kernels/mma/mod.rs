//! 16-bit products on the tensor cores with `mma.sync` (compute capability 8.0+).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_async;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_deep;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_deep128;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_ldmatrix;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_swizzled;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_sync;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_wide;
