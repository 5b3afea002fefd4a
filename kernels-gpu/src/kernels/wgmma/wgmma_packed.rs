//! Tensor cores on Hopper for 16-bit operands TMA cannot read: `wgmma_persistent` after a
//! pack launch that copies them into the workspace K-major, in rows of whole 128-byte lines.
//!
//! Why: TMA reads rows and planes 16 bytes apart from 16-byte aligned bases, and nothing
//! else; a leading dimension that is not a multiple of 8 elements (an LM head's 32001 or
//! 50257 columns, K = 4099, a view with an odd offset) leaves the TMA kernels their one-stage
//! `mma.sync` fallback, and before this kernel the rule sent such forms to the SIMT kernels
//! (15-33% of cuBLAS, H100). The pack reads each operand once and writes it once (the
//! TF32 kernels' pack, `pack`, with each element as stored), so that the main launch reads
//! aligned, K-major A and B^T through tensor maps, whatever the caller's layout, transposes,
//! leading dimensions and batch strides. A row-major A that TMA can read as it lies is read
//! in place ([`Packing::a_in_place`]).
//!
//! Launch rules ([`SPEC`]): the pack, grid `ceil(row / 64) x (ceil(n / 64) [+ ceil(m /
//! 64)]) x batch` blocks of 32 x 8 threads, 16,640 shared bytes; then as `wgmma_persistent`;
//! the workspace holds the two maps and the packed operands ([`Packing`]); f16 and bf16,
//! sm_90a.
use crate::catalogue::{Grid, Pack, PtxFacts, TensorMaps};
use crate::element::Half;
use crate::element::{Bf16, Element, Narrow};
use crate::parts::wgmma::pack::{AS_STORED_PACK, AsStored, pack};
#[cfg(doc)]
use crate::parts::wgmma::pack::{PACK_SHARED, Packing};
use crate::parts::wgmma::warp_specialised::{TILES_256, spec, stage_k, warp_specialised};
use crate::parts::wgmma::warpgroup::{BM, BN, STAGES};
use crate::problem::{Gemm, entry_points, kernel};

/// K elements of a stage: 64 16-bit elements, one 128-byte row.
const BK: u32 = stage_k::<Bf16>();

/// The main entries show `wgmma_persistent`'s facts; the pack's one barrier, no local memory
/// and no conversion (each element copied as stored).
const _: () = assert!(TILES_256.len() == 5, "FACTS takes every fact of TILES_256");
const FACTS: &[PtxFacts] = &[
    TILES_256[0],
    TILES_256[1],
    TILES_256[2],
    TILES_256[3],
    TILES_256[4],
    AS_STORED_PACK,
];

// Launch: `spec`'s 384 threads on a persistent grid with its stages' shared bytes, the
// workspace holding the maps and the operands `pack_16` wrote for this problem (the block is
// `Packing::problem`): `warp_specialised`'s contract, the maps always present.
kernel! {
    SPEC = spec(("wgmma_packed", file!()), "16-bit operands TMA cannot read (rows or bases off 16 bytes): copied K-major into aligned rows by a first launch (a row-major A TMA reads stays in place), then `wgmma_persistent`",
        (BN, STAGES), Grid::Persistent)
        .with_tma(TensorMaps::packed((BM, BN, BK), Pack { name: "pack_16", parts: 1, width: 2 }))
        .with_ptx(FACTS);
    /// The main launch: the packed operands through their tensor maps.
    fn wgmma_packed<T: Half>(Gemm<T>) = warp_specialised::<T, true, false, [f32; 128], STAGES>;
    strided entries wgmma_packed_f16: f16, wgmma_packed_bf16: Bf16, wgmma_packed_f16_f16: Narrow<f16>, wgmma_packed_bf16_bf16: Narrow<Bf16>;
}

/// The pack launch: block `(x, y, z)` copies a 64 x 64 square of product `z`'s B^T (the first
/// `ceil(n / 64)` rows of blocks) or A (the others, if launched) into the workspace, elements
/// `(r, q)` = `(row of A or column of B, K)`, zeros past K up to the packed row; each square
/// read along whichever index is contiguous in the caller's layout, written along K.
///
/// # Safety
/// See the entry points; 32 x 8 threads, [`PACK_SHARED`] bytes; the block is the caller's
/// problem, the workspace [`Packing::bytes`] long.
#[inline(always)]
pub unsafe fn pack_16<T: Element>(gemm: Gemm<T>) {
    // SAFETY: `pack::<T, AsStored>` needs the pack launch of 32 x 8 threads with PACK_SHARED
    // bytes (one part), the caller's problem and a `Packing::bytes` workspace: this fn's
    // contract.
    unsafe { pack::<T, AsStored>(gemm) }
}
entry_points!(strided pack_16; pack_16_f16: f16, pack_16_bf16: Bf16, pack_16_f16_f16: Narrow<f16>, pack_16_bf16_bf16: Narrow<Bf16>);
