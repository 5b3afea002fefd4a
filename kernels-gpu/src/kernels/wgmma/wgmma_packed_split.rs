//! Tensor cores on Hopper, `wgmma_packed` with its last wave split over K
//! (`wgmma_split_128x64`'s schedule on the packed kernel's 128 x 256 tiles).
//!
//! Why: a packed product whose last wave of 128 x 256 tiles is a fraction full pays a
//! whole wave for it: 3000^3 is 288 tiles on 132 SMs, three waves of which the last holds
//! 24. Cut into slices of K over the idle SMs, that wave takes about a fifth of the time.
//! Its rows of B are 6000 bytes apart, which cost the TMA kernels 19% (H200), so it stays
//! packed.
//!
//! Launch rules ([`SPEC`]): as `wgmma_packed`'s, on `Grid::PersistentSplit`; the workspace
//! holds the tensor maps, then the split's counters and planes, then (from the first
//! 256-byte line after them) the packed operands, where the pack launch's workspace starts.
use crate::catalogue::{Grid, Pack, PtxFacts, TensorMaps};
use crate::element::Half;
use crate::element::{Bf16, Element, Narrow};
use crate::parts::wgmma::pack::{AS_STORED_PACK, AsStored, pack};
#[cfg(doc)]
use crate::parts::wgmma::pack::{PACK_SHARED, Packing};
use crate::parts::wgmma::warp_specialised::{TILES_256_SPLIT, spec, stage_k, warp_specialised};
use crate::parts::wgmma::warpgroup::{BM, BN, STAGES};
use crate::problem::{Gemm, entry_points, kernel};

/// K elements of a stage: 64 16-bit elements, one 128-byte row.
const BK: u32 = stage_k::<Bf16>();

/// The main entries show the split kernels' facts on 128 x 256 tiles; the pack's one
/// barrier, no local memory and no conversion (each element copied as stored).
const _: () = assert!(TILES_256_SPLIT.len() == 6, "FACTS takes every fact");
const FACTS: &[PtxFacts] = &[
    TILES_256_SPLIT[0],
    TILES_256_SPLIT[1],
    TILES_256_SPLIT[2],
    TILES_256_SPLIT[3],
    TILES_256_SPLIT[4],
    TILES_256_SPLIT[5],
    AS_STORED_PACK,
];

// Launch: `spec`'s 384 threads on the split persistent grid with its stages' shared bytes;
// the workspace holding the maps, the split's counters (zero) and planes, then the operands
// `pack_16_split` wrote for this problem (the block is `Packing::problem`):
// `warp_specialised`'s contract, the maps always present.
kernel! {
    SPEC = spec(("wgmma_packed_split", file!()), "`wgmma_packed` with the last wave split over K as `wgmma_split_128x64` splits it, the split's counters and planes before the packed operands",
        (BN, STAGES), Grid::PersistentSplit)
        .with_tma(TensorMaps::packed((BM, BN, BK), Pack { name: "pack_16_split", parts: 1, width: 2 }))
        .with_ptx(FACTS);
    /// The main launch: the packed operands through their tensor maps.
    fn wgmma_packed_split<T: Half>(Gemm<T>) = warp_specialised::<T, true, true, [f32; 128], STAGES>;
    strided entries wgmma_packed_split_f16: f16, wgmma_packed_split_bf16: Bf16, wgmma_packed_split_f16_f16: Narrow<f16>, wgmma_packed_split_bf16_bf16: Narrow<Bf16>;
}

/// The pack launch, as `wgmma_packed`'s: block `(x, y, z)` copies a 64 x 64 square of product
/// `z`'s B^T (the first `ceil(n / 64)` rows of blocks) or A (the others, if launched) into
/// its workspace, which starts after the split's planes.
///
/// # Safety
/// See the entry points; 32 x 8 threads, [`PACK_SHARED`] bytes; the block is the caller's
/// problem, the workspace [`Packing::bytes`] long from where it starts.
#[inline(always)]
pub unsafe fn pack_16_split<T: Element>(gemm: Gemm<T>) {
    // SAFETY: `pack::<T, AsStored>` needs the pack launch of 32 x 8 threads with PACK_SHARED
    // bytes (one part), the caller's problem and a `Packing::bytes` workspace: this fn's
    // contract.
    unsafe { pack::<T, AsStored>(gemm) }
}
entry_points!(strided pack_16_split; pack_16_split_f16: f16, pack_16_split_bf16: Bf16, pack_16_split_f16_f16: Narrow<f16>, pack_16_split_bf16_bf16: Narrow<Bf16>);
