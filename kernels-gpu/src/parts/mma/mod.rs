//! `mma.sync` mainloops: the tensor tile's one-stage and pipelined loops, the wide tile of the DMMA and TF32 kernels, the narrow strip of the DMMA few-rows and few-columns kernels.
pub mod async_pipeline;
pub mod fragments;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod narrow_strip;
pub mod one_stage;
pub mod schemes;
pub mod tensor_tile;
pub mod wide_tile;
