//! The kernels' PTX, one module per architecture, embedded here by `build.rs`: the shipped
//! modules (`ptx/`), or a build from the kernels' Rust source (`RGEMM_PTX`).
use rgemm_kernels::catalogue::Arch;

include!(concat!(env!("OUT_DIR"), "/modules.rs"));

/// The PTX text of `arch`'s module, if any kernel is built into it.
pub fn module(arch: Arch) -> Option<&'static str> {
    MODULE_PTX
        .iter()
        .find(|(a, _)| *a == arch)
        .map(|(_, text)| *text)
}
