//! The kernels' PTX, built from `kernels-gpu/` by `build.rs` and embedded here.

/// PTX text of every kernel (`.target sm_70`; the driver JIT-compiles it for the GPU).
pub const KERNELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// The same kernels built for `sm_80`, plus those that need it (`cp.async`): loaded on GPUs
/// of compute capability 8.0 and newer.
pub const KERNELS_PTX_SM80: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels_sm80.ptx"));
