//! Decode mainloops.
pub mod mma_strip;
pub mod stream;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tma_strip;
