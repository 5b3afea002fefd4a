//! The kernels, by family: each file one kernel (or one idea's few variants), a composition
//! of [`crate::parts`] with its spec and entry points. No kernel file imports another.
pub mod decode;
pub mod dmma;
pub mod mma;
pub mod simt;
pub mod tf32;
pub mod wgmma;
