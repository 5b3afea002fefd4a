//! 16-bit products on Hopper's `wgmma` (sm_90a).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_128x128;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_128x192;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_128x64;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_async;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_packed;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_packed_split;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_pairs;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_pairs_128x192;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_persistent;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_quads;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_quads_128x192;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_split_128x128;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_split_128x64;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma_tma;
