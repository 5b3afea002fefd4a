//! f32 products in TF32 on Hopper's `wgmma` ([`Precision::Tf32`], only when asked):
//! `wgmma_persistent`'s pipeline (TMA, warp-specialised, persistent grid) with
//! `wgmma.mma_async.m64n256k8.f32.tf32.tf32`, after a pack launch.
//!
//! Why a pack launch: TF32 `wgmma` reads both operands K-major only (no transpose
//! immediates), so a row-major B (N contiguous) cannot be read as it is stored; and TF32
//! means each input rounded to nearest (`cvt.rna.tf32.f32`), which the instruction does not
//! do (it reads the upper 19 bits). [`pack_tf32()`] therefore writes, into the launch's
//! workspace, B as `n x k` (B^T) and, unless the main launch reads A in place, A as `m x k`,
//! both row-major with rows of [`Packing::row`] elements (whole 128-byte lines), every element
//! rounded to TF32, whatever the caller's layout, transposes, leading dimensions and batch
//! strides: every form of the product becomes one K-major pair. It reads and writes each
//! operand once.
//!
//! A row-major A that TMA can read as it lies ([`Packing::a_in_place`]: 16-byte aligned
//! rows and planes) is not packed: the main launch's maps read the caller's A, and each
//! consumer warp loads its A fragments from the stage into registers, rounding them on the
//! way, for `wgmma` with A from registers (`wgmma_tma`'s `mainloop_tf32`). At 4096^3 that
//! drops half of the pack's 256 MB of traffic: 0.376 ms against 0.397 (H200). (TMA's own
//! TFLOAT32 maps round a tie such as 1 + 2^-11 down, not away from zero as `cvt.rna`, H200:
//! they are not used.)
//!
//! The main launch's problem block describes the operands it reads (B transposed with
//! leading dimension [`Packing::row`], one plane per product or one for a shared operand;
//! A packed so too, or the caller's); its tensor maps read them with boxes of 128 x 32 and
//! 256 x 32 elements (128-byte rows, swizzled as `wgmma` reads them); C is the caller's,
//! alpha and beta applied by the same epilogue as the 16-bit kernels.
//!
//! Launch rules ([`SPEC`]): the pack, grid `ceil(row / 64) x (ceil(n / 64) [+ ceil(m /
//! 64)]) x batch` blocks of 32 x 8 threads, 16,640 shared bytes; then as `wgmma_persistent`
//! (4 stages of 48 KiB, TF32 elements 4 bytes); the workspace holds the two maps and the
//! packed operands ([`Packing`], room for A whether or not it is packed); f32 only, sm_90a.
use crate::catalogue::Grid;
#[cfg(doc)]
use crate::parts::wgmma::pack::{PACK_SHARED, Packing};
use crate::parts::wgmma::pack::{Tf32, pack};
use crate::parts::wgmma::warp_specialised::{spec_tf32, warp_specialised};
use crate::parts::wgmma::warpgroup::STAGES;
use crate::problem::{Gemm, entry_points, kernel};

// Launch: `spec_tf32`'s 384 threads on a persistent grid with its stages' shared bytes, the
// workspace holding the maps and the operands `pack_tf32` wrote for this problem (the block is
// `Packing::problem`): `warp_specialised`'s contract, TF32 maps always present.
kernel! {
    SPEC = spec_tf32(("wgmma_tf32", file!()), "f32 in TF32 when asked: B (and an A TMA cannot read K-major) packed K-major and rounded (`cvt.rna`) by a first launch, a row-major A read in place, rounded on its way to `wgmma`'s A registers; `wgmma_persistent`'s pipeline with `wgmma` m64n256k8 tf32",
        Grid::Persistent, "pack_tf32");
    /// The main launch: the packed operands through their tensor maps.
    fn wgmma_tf32(Gemm<f32>) = warp_specialised::<f32, true, false, [f32; 128], STAGES>;
    strided entries wgmma_tf32_f32: f32;
}

/// The pack launch: block `(x, y, z)` writes a 64 x 64 square of product `z`'s packed B^T
/// (the first `ceil(n / 64)` rows of blocks) or A (the others, if launched), elements `(r, q)` = `(row
/// of A or column of B, K)`, zeros past K up to the packed row. Each square is read along
/// whichever of its two indices is contiguous in the caller's layout, and written along K.
///
/// # Safety
/// See the entry points; 32 x 8 threads, [`PACK_SHARED`] bytes; T is f32; the block is the
/// caller's problem, the workspace [`Packing::bytes`] long.
#[inline(always)]
pub unsafe fn pack_tf32(gemm: Gemm<f32>) {
    // SAFETY: `pack::<f32, Tf32>` needs the pack launch of 32 x 8 threads with PACK_SHARED bytes (one
    // part), T f32, the caller's problem and a `Packing::bytes` workspace: this fn's contract.
    unsafe { pack::<f32, Tf32>(gemm) }
}
entry_points!(strided pack_tf32; pack_tf32_f32: f32);
