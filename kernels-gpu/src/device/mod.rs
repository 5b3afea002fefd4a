//! The CUDA execution model under Rust names (cuda_std's spirit): thread and block
//! indices, barriers, global-memory access, and typed shared-memory tiles carved from the
//! launch-sized region.
//!
//! One source, two targets: on nvptx64 these are PTX special registers, `bar.sync` and
//! `.shared`; on the host they read the simulated thread that rgemm's CPU executor is
//! running (see [`host`]), and every shared and global access is bounds-checked.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod async_copy;
pub mod global;
#[cfg(not(target_arch = "nvptx64"))]
pub mod host;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod ldmatrix;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod mbarrier;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma;
pub mod shared;
pub mod shuffle;
pub mod thread;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tma;
pub mod vector;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma;
