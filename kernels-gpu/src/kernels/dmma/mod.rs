//! f64 on the FP64 tensor cores (DMMA, sm_90a).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
// The family is named after its first kernel.
#[allow(clippy::module_inception)]
pub mod dmma;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_buffered;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_few_columns;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_few_columns_8_warps;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_few_rows;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_few_rows_64;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_k4;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_small;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_small_buffered;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_small_split;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod dmma_warps;
