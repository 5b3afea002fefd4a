//! Warp tiling: the double-buffered kernel with threads mapped so that each warp owns a
//! 64 x 64 warp tile of C (a 4 x 8 patch of thread tiles) instead of a 16 x 128 strip. Per K
//! step a warp then reads 4 distinct 16-byte groups of A and 8 of B from shared memory (was
//! 2 and 16): fewer shared-memory wavefronts per multiply-add.
//!
//! Launch rules: as `double_buffered`.
use crate::block_tile::WarpTiled;
use crate::double_buffered::pipelined;
#[cfg(target_arch = "nvptx64")]
use crate::element::Bf16;
use crate::element::{Element, gemm_entry_points};

/// # Safety
/// See the entry points; 256 threads per block.
#[inline(always)]
pub unsafe fn warp_tiled<T: Element>(
    a: *const T,
    b: *const T,
    c: *mut T::Acc,
    m: u32,
    n: u32,
    k: u32,
) {
    unsafe { pipelined::<T, WarpTiled>(a, b, c, m, n, k) }
}

gemm_entry_points!(warp_tiled;
    warp_tiled_f32: f32, warp_tiled_f64: f64, warp_tiled_f16: f16, warp_tiled_bf16: Bf16);
