//! The CPU executor: runs the very same kernel source (`kernels-gpu/`, built for the
//! host) as a CUDA launch, block by block, thread by thread, with the device model's
//! checks (barriers, shared and global bounds) turned into typed errors.
mod executor;
mod gemm;

pub use executor::{CpuExecutor, CpuLaunch, Fault};
pub use rgemm_kernels::device::host::GlobalRegion;
