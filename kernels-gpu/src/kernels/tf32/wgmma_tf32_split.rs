//! f32 products in TF32 on Hopper's `wgmma` ([`Precision::Tf32`], only when asked), with the
//! last wave split over K: `wgmma_tf32` on `wgmma_split_128x64`'s schedule.
//!
//! Why: a TF32 product of few columns and a long K fills few 128 x 256 tiles: 4096 x 256 x
//! 16384 is 32 tiles on 132 SMs, and each SM that has one walks all of K while 100 idle
//! (`wgmma_tf32` ran it at 44-50% of cuBLAS, H200). Cut into slices of K over the idle SMs,
//! the last wave takes about a quarter of the time.
//!
//! Launch rules ([`SPEC`]): as `wgmma_tf32`'s, on `Grid::PersistentSplit`; the workspace
//! holds the tensor maps, then the split's counters and planes, then (from the first
//! 256-byte line after them) the packed operands, where the pack launch's workspace starts.
use crate::catalogue::Grid;
#[cfg(doc)]
use crate::parts::wgmma::pack::{PACK_SHARED, Packing};
use crate::parts::wgmma::pack::{Tf32, pack};
use crate::parts::wgmma::warp_specialised::{spec_tf32, warp_specialised};
use crate::parts::wgmma::warpgroup::STAGES;
use crate::problem::{Gemm, entry_points, kernel};

// Launch: `spec_tf32`'s 384 threads on the split persistent grid with its stages' shared bytes;
// the workspace holding the maps, the split's counters (zero) and planes, then the operands
// `pack_tf32_split` wrote for this problem (the block is `Packing::problem`):
// `warp_specialised`'s contract, TF32 maps always present.
kernel! {
    SPEC = spec_tf32(("wgmma_tf32_split", file!()), "`wgmma_tf32` with the last wave split over K as `wgmma_split_128x64` splits it, the split's counters and planes before the packed operands",
        Grid::PersistentSplit, "pack_tf32_split");
    /// The main launch: the packed operands through their tensor maps.
    fn wgmma_tf32_split(Gemm<f32>) = warp_specialised::<f32, true, true, [f32; 128], STAGES>;
    strided entries wgmma_tf32_split_f32: f32;
}

/// The pack launch, as `wgmma_tf32`'s: block `(x, y, z)` writes a 64 x 64 square of product
/// `z`'s packed B^T (the first `ceil(n / 64)` rows of blocks) or A (the others, if
/// launched), rounded to TF32, into its workspace, which starts after the split's planes.
///
/// # Safety
/// See the entry points; 32 x 8 threads, [`PACK_SHARED`] bytes; T is f32; the block is the
/// caller's problem, the workspace [`Packing::bytes`] long from where it starts.
#[inline(always)]
pub unsafe fn pack_tf32_split(gemm: Gemm<f32>) {
    // SAFETY: `pack::<f32, Tf32>` needs the pack launch of 32 x 8 threads with PACK_SHARED
    // bytes (one part), T f32, the caller's problem and a `Packing::bytes` workspace: this
    // fn's contract.
    unsafe { pack::<f32, Tf32>(gemm) }
}
entry_points!(strided pack_tf32_split; pack_tf32_split_f32: f32);
