//! SIMT kernels: FP32/FP64 multiply-adds on the CUDA cores, from the textbook loop to stream-K.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod async_copy;
pub mod coarse;
pub mod double_buffered;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod few_columns;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod few_columns_64;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod few_rows;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod few_rows_64;
pub mod fragment_buffered;
pub mod naive;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod paired_lanes;
pub mod register_tiled;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod stream_k;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod stream_k_short;
pub mod thin;
pub mod tiled;
pub mod vectorized;
pub mod warp_tiled;
