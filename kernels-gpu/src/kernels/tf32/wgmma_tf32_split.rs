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
use crate::catalogue::PtxFact::{Barriers, Count, Has, Lacks, Lines};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Elem, Grid, KernelSpec, Pack, Precision, Shared, TensorMaps};
#[cfg(doc)]
use crate::parts::wgmma::pack::{PACK_SHARED, Packing};
use crate::parts::wgmma::pack::{Tf32, pack};
use crate::parts::wgmma::warp_specialised::{spec, stage_k, warp_specialised};
use crate::parts::wgmma::warpgroup::{ATOM, BM, BN, STAGES};
use crate::problem::{Gemm, entry_points, kernel};
const TF32_N256: &str = "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32";

/// K elements of a stage: 32 TF32 elements, one 128-byte row.
const BK: u32 = stage_k::<f32>();

// Launch: `spec`'s 384 threads on the split persistent grid with its stages' shared bytes;
// the workspace holding the maps, the split's counters (zero) and planes, then the operands
// `pack_tf32_split` wrote for this problem (the block is `Packing::problem`):
// `warp_specialised`'s contract, TF32 maps always present.
kernel! {
    SPEC = KernelSpec { shared: Shared::InputElements(STAGES * (BM * BK + BK * BN) + ATOM / 4 + 2 * 2 * STAGES),
        ..spec(("wgmma_tf32_split", file!()), "`wgmma_tf32` with the last wave split over K as `wgmma_split_128x64` splits it, the split's counters and planes before the packed operands",
            (BN, STAGES), Grid::PersistentSplit) }
        .with_elements(&[Elem::F32]).with_precision(Precision::Tf32).with_tma(TensorMaps::packed((BM, BN, BK), Pack { name: "pack_tf32_split", parts: 1, width: 4 }))
        .with_ptx(&[PtxFacts::all(&[Barriers(1), Count(TF32_N256, 4), Lines(&[TF32_N256, "}, {%r"], 4), Count("ld.shared.b32", 16), Count("cvt.rna.tf32.f32", 16),
                Lacks("fence.proxy.async"), Count("cp.async.bulk.tensor.3d", 2), Lacks("mma.sync"), Lacks("m64n256k16"),
                Has("atom.acq_rel.gpu.global.add.u32"), Has("ld.volatile.global.v4.b32"), Lacks(".local")]),
            PtxFacts::second(&[Barriers(1), Count("cvt.rna.tf32.f32", 16), Lacks(".local")])]);
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
