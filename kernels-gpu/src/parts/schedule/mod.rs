//! Schedules: which tiles (and which slice of K) a block computes, and how the parts of a split tile come together.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod decode_split;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod split_k;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod stream_k;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tile_order;
