//! The parts kernels are composed of, by what they do: mainloops per instruction family,
//! epilogues, and schedules (tile order, stream-K, split-K, the decode split).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod decode;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma;
pub mod schedule;
pub mod simt;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma;
