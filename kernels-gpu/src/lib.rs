//! rgemm's GPU kernels: plain `no_std` Rust, compiled by rustc's NVPTX backend to PTX
//! while the host crate builds (see `host/build.rs`).
//!
//! Three layers: instruction atoms ([`device`]: PTX, host emulation, fragment layouts), the
//! parts kernels are made of ([`parts`]: mainloops, epilogues, schedules), and the kernels
//! by family ([`kernels`]), each a composition of parts with its spec, importing no other
//! kernel. Every entry point is `extern "ptx-kernel"` and `#[unsafe(no_mangle)]`, with the
//! same parameters (`problem.rs`); each kernel's launch rules (block shape, block tile,
//! shared bytes, module, launch bounds) are its spec, declared next to its code and listed
//! in `catalogue.rs`, which the host, the build script and the tests read.
//!
//! The same source also builds for the host, where the kernel bodies (`kernels::simt::naive::naive`,
//! ...) run on rgemm's CPU executor: `device` then implements the CUDA
//! model (indices, barriers, shared memory) on the host, with bounds checks.
//!
//! Entry names follow `<algorithm>_<element>`: `naive_f32`, `tiled16_bf16`,
//! `tiled_dyn_f64`, ... Elements: `f32`, `f64` (accumulate and write in their own type),
//! `f16`, `bf16` (accumulate in `f32` and write `f32`; the `<algorithm>_<t>_<t>` entries,
//! `tiled16_bf16_bf16`, write C in the input type, rounded once: `element::Narrow`).
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, stdarch_nvptx, gpu_intrinsics, gpu_launch_sized_workgroup_mem)
)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(asm_experimental_arch, core_intrinsics, f16)
)]
#![allow(internal_features)]
// Compilers before 1.95 do not know the nvptx target features (`sm_80`, `sm_90a`) that the
// host build's `cfg`s name.
#![cfg_attr(not(target_arch = "nvptx64"), allow(unexpected_cfgs))]
// Register tiles are indexed with loop counters on purpose: constant-trip index loops unroll
// into registers, where iterator adaptors over arrays left state in local memory.
#![allow(clippy::needless_range_loop)]

/// Where this crate's source lies: rgemm's build script builds the PTX from it on request.
#[cfg(not(target_arch = "nvptx64"))]
pub const SOURCE_DIR: &str = env!("CARGO_MANIFEST_DIR");

pub mod catalogue;
pub mod device;
pub mod element;
#[cfg(all(not(target_arch = "nvptx64"), feature = "host-bodies"))]
pub mod host_bodies;
pub mod kernels;
pub mod parts;
pub mod problem;

/// A kernel cannot unwind: a panic (which the kernels avoid by construction) traps, which
/// the host sees as a launch failure rather than a wrong answer.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    device::thread::trap()
}
