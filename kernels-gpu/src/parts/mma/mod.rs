//! `mma.sync` mainloops: the tensor tile's one-stage and pipelined loops, the wide tile of the DMMA and TF32 kernels, the turned-over strip of the DMMA few-rows kernels.
pub mod async_pipeline;
pub mod fragments;
pub mod one_stage;
pub mod schemes;
pub mod tensor_tile;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod turned_strip;
pub mod wide_tile;
