//! SIMT mainloops: the register-tiled block tile and its pipelines, and the few-columns and
//! few-rows strips (whole rows or columns of C per thread).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod async_stages;
pub mod block_tile;
pub mod checked;
pub mod fragment_stages;
pub mod register_stages;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod whole_columns;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod whole_rows;
