//! Paired lanes: `async_copy` with the lanes of each warp placed so that shared memory
//! returns every fragment read in half the cycles. Shared memory hands back 128 bytes per
//! cycle, a quarter of a warp's LDS.128; it packs the return twice as tight when lanes `n`
//! and `n ^ 1` all read one address, or lanes `n` and `n ^ 2` all do (`block_tile::
//! PairedLanes`). `WarpTiled` meets the first rule for A's reads (2 wavefronts) but neither
//! for B's (4); `PairedLanes` puts a row bit on lane bit 1 and a column bit on lane bit 0,
//! so both take 2: per K step a warp's 8 reads cost 16 wavefronts instead of 24 (f64; f32:
//! 4 reads, 8 instead of 12). Nothing else changes.
//!
//! Measured on an H200 (Nsight): 3.0 -> 2.0 wavefronts per f64 fragment read, yet only
//! +0.3-1.5% for f64 and no change for f32: neither was bound by shared memory. What bounds
//! f64 is in `docs/worklog/simt.md` ("The f64 SIMT ceiling").
//!
//! Launch rules ([`SPEC`]): as `async_copy`: 256 threads, block tile 128 x 128
//! stepping BK = 16, grid `ceil(n / 128) x ceil(m / 128)`, shared bytes `2 * (BK * (BM + 4) +
//! BK * BN) * size_of(Acc)`; only in the sm_80 PTX module.
use crate::catalogue::Arch;
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT, WIDE};
use crate::element::Element;
use crate::element::{Bf16, Narrow};
use crate::parts::simt::async_stages::COPIES;
use crate::parts::simt::async_stages::async_pipelined;
use crate::parts::simt::block_tile;
use crate::parts::simt::block_tile::PairedLanes;
use crate::parts::simt::block_tile::{VECTORS_F32, VECTORS_F64};
use crate::parts::simt::fragment_stages::padded_stages;
use crate::problem::{Gemm, kernel};

// Launch: `block_tile::spec`'s: the two padded stages `async_pipelined` (and its checked fallback) needs.
kernel! {
    SPEC = block_tile::spec(("paired_lanes", file!()), "`async_copy` with lanes `n`, `n ^ 1` sharing A's reads and `n`, `n ^ 2` B's: 2 shared wavefronts per 16-byte fragment read instead of 3",
        Arch::Sm80, (128, 128), padded_stages(16), Some(2))
        .with_ptx(&[PtxFacts::only(WIDE, &[Barriers(18), AtLeast("fma.rn.f", 1024)]), PtxFacts::only(SIXTEEN_BIT, &[Barriers(2), AtLeast("fma.rn.f", 64)]), COPIES, VECTORS_F32, VECTORS_F64]);
    fn paired_lanes<T: Element>(Gemm<T>) = async_pipelined::<T, PairedLanes, { SPEC.rows() }, { SPEC.cols() }, { SPEC.bk() }, 2, true>;
    entries paired_lanes_f32: f32, paired_lanes_f64: f64, paired_lanes_f16: f16, paired_lanes_bf16: Bf16, paired_lanes_f16_f16: Narrow<f16>, paired_lanes_bf16_bf16: Narrow<Bf16>;
}
