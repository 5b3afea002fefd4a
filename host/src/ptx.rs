//! The kernels' PTX, one module per architecture, embedded here by `build.rs`: the shipped
//! modules (`ptx/`), or a build from the kernels' Rust source (`RGEMM_PTX`). The build also
//! cuts each module into one module per entry point (`ptx_split`), which is what the
//! library loads: the driver compiles a module whole on loading it, so a product pays for
//! its own kernel's compilation, not for its architecture's hundred.
use rgemm_kernels::catalogue::Arch;

/// An entry point's own module: its architecture, its name, and the byte ranges of the
/// architecture's module text that make it.
type EntryModule = (Arch, &'static str, &'static [(usize, usize)]);

include!(concat!(env!("OUT_DIR"), "/modules.rs"));

/// The PTX text of `arch`'s module, if any kernel is built into it.
pub fn module(arch: Arch) -> Option<&'static str> {
    MODULE_PTX
        .iter()
        .find(|(a, _)| *a == arch)
        .map(|(_, text)| *text)
}

/// The PTX module of entry point `name` alone (with the functions it calls), cut from
/// `arch`'s module; `None` if that module has no such entry.
pub fn entry(arch: Arch, name: &str) -> Option<String> {
    let text = module(arch)?;
    let (_, _, ranges) = ENTRY_PTX
        .iter()
        .find(|(a, entry, _)| *a == arch && *entry == name)?;
    Some(
        ranges
            .iter()
            .map(|&(start, end)| &text[start..end])
            .collect(),
    )
}
