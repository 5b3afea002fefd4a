//! Whether a CUDA library can be loaded, asked before the first call into it: under cudarc's
//! dynamic loading (the default) a missing library is a panic at cudarc's first call, and
//! rgemm returns a typed error instead. Under cudarc's dynamic linking the library is part
//! of the program, and the probe finds it loaded.
use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};

/// The file names a library goes by: unversioned, and with the major versions of the CUDA
/// releases cudarc's bindings cover (Linux `libcuda.so.1`, `libcublas.so.13`; Windows
/// `nvcuda.dll`, `cublas64_12.dll`).
fn candidates(name: &str) -> Vec<String> {
    let mut names = vec![format!("{DLL_PREFIX}{name}{DLL_SUFFIX}")];
    for major in ["1", "13", "12", "11"] {
        names.push(format!("{DLL_PREFIX}{name}{DLL_SUFFIX}.{major}"));
        names.push(format!("{DLL_PREFIX}{name}64_{major}{DLL_SUFFIX}"));
    }
    names
}

/// Whether one of `names` (`"cuda"`, `"nvcuda"`, `"cublas"`) loads.
pub(crate) fn present(names: &[&str]) -> bool {
    names.iter().flat_map(|name| candidates(name)).any(|file| {
        // SAFETY: loading a CUDA library runs only its initialisers, which set up nothing
        // but the library itself; it is unloaded again when the handle drops.
        unsafe { libloading::Library::new(file) }.is_ok()
    })
}
