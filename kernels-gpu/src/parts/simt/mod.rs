//! SIMT mainloops: the register-tiled block tile and its pipelines.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod async_stages;
pub mod block_tile;
pub mod checked;
pub mod fragment_stages;
pub mod register_stages;
