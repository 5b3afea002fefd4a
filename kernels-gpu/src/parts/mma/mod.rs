//! `mma.sync` mainloops: the tensor tile's one-stage and pipelined loops, the wide tile of the DMMA and TF32 kernels.
pub mod async_pipeline;
pub mod fragments;
pub mod one_stage;
pub mod schemes;
pub mod tensor_tile;
pub mod wide_tile;
