//! The kernels' PTX, built from `kernels-gpu/` by `build.rs` and embedded here.

/// PTX text of every kernel (`.target sm_70`; the driver JIT-compiles it for the GPU).
pub const KERNELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));
