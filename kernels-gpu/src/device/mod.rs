//! The CUDA execution model under Rust names (cuda_std's spirit): thread and block
//! indices, barriers, and typed shared-memory tiles carved from the launch-sized region.
pub mod shared;
pub mod thread;
