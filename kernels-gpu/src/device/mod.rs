//! The CUDA execution model under Rust names (cuda_std's spirit): thread and block
//! indices, barriers, global-memory access, and typed shared-memory tiles carved from the
//! launch-sized region.
//!
//! One source, two targets: on nvptx64 these are PTX special registers, `bar.sync` and
//! `.shared`; on the host they read the simulated thread that rgemm's CPU executor is
//! running (see [`host`]), and every shared and global access is bounds-checked.

/// Functions that are one PTX instruction without register operands on the GPU (`{N}`: the
/// const generic `N`, where one is declared) and nothing on the host, whose emulations leave
/// them nothing to do: they complete asynchronous operations at once and share no register
/// pool.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
macro_rules! instructions {
    ($($(#[$doc:meta])* fn $name:ident$(<const $n:ident>)?() = $ptx:literal;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name$(<const $n: u32>)?() {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: no memory operand: the instruction closes, waits for or orders this
            // thread's (or warpgroup's) own asynchronous operations, or resizes its share of
            // the register pool within the kernel's launch bounds.
            unsafe {
                core::arch::asm!($ptx $(, $n = const $n)?)
            }
        }
    )*};
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod async_copy;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod cluster;
pub mod global;
#[cfg(not(target_arch = "nvptx64"))]
pub mod host;
#[cfg(not(target_arch = "nvptx64"))]
pub mod host_sums;
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
