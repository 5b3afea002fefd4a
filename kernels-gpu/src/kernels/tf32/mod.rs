//! f32 products in TF32 or 3xTF32, only when the caller asks for them.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_3xtf32;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma_tf32;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_3xtf32;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_tf32;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_tf32_split;
