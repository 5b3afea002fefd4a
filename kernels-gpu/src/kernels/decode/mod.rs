//! Decode products: C with a few rows, B read once at the memory's speed.
// The family is named after its first kernel.
#[allow(clippy::module_inception)]
pub mod decode;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod decode_async;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod decode_mma;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod decode_tma;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod decode_wgmma;
