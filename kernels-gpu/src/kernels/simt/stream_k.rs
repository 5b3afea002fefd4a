//! Stream-K: `paired_lanes`' block tile, with the last, partial wave of tiles shared out by
//! K phases so no SM idles at the end. With 1024 tiles of 128 x 128 (4096^2) on 132 SMs at
//! one block each (f64), a grid of one block per tile runs 7.76 waves of work in 8 waves of
//! time; measured on an H200, 4096 x 4224 (8 whole waves) ran at 76.8-77.0% of the FP64 peak
//! where 4096^2 ran at 74.9%.
//!
//! The schedule ([`Schedule`](crate::parts::schedule::stream_k::Schedule)), for `ctas` = the blocks the GPU holds at once: the tiles of
//! the whole waves (`whole`, a multiple of `ctas`) each get a block of their own, as in
//! `paired_lanes`. The phases (BK steps of K) of the tiles left over (`split`, fewer than
//! `ctas`) are shared out evenly and in order among `ctas` more blocks, which the GPU runs
//! as the last wave: a share covers the end of one tile and the start of the next at most.
//! A block that covers a tile alone writes C; otherwise each block writes its part (partial
//! sums) to a workspace slot, and a second launch, [`stream_k_fixup()`], adds the parts in K
//! order and writes C. No block waits on another (no spinning, no assumption about which
//! blocks run at once), and the result does not depend on timing.
//!
//! The tile is a const parameter (`stream_k_tiled`, `fixup_tiled`): `stream_k_short.rs`
//! runs the same schedule on 64- and 32-row tiles. Aligned edge blocks and K tails take the
//! unchecked mainloop's `EDGE` path (`block_tile::EDGE`).
//!
//! Launch rules ([`SPEC`]): `stream_k_*`: 256 threads, a 1D grid of `whole + ctas`
//! blocks (`whole` if nothing is split), `ctas` = SMs x resident blocks per SM (1 for f64, 2
//! for the others, as `launch_bounds` sets), shared bytes as `async_copy`, a workspace of
//! `SLOTS_PER_CTA * ctas` tiles of `BM x BN` accumulators. `stream_k_fixup_*` (only when a
//! tile is shared): 256 threads, a 1D grid of `split * fixup_chunks` blocks, no shared
//! memory. Both only in the sm_80 PTX module.
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::{Arch, Grid};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT, WIDE};
use crate::element::Element;
use crate::element::{Bf16, Narrow};
use crate::parts::schedule::stream_k::{fixup_tiled, stream_k_tiled};
use crate::parts::simt::async_stages::COPIES;
use crate::parts::simt::block_tile;
use crate::parts::simt::block_tile::{VECTORS_F32, VECTORS_F64};
use crate::parts::simt::fragment_stages::padded_stages;
use crate::problem::{Gemm, entry_points, kernel};

// Launch: SPEC's `Grid::StreamK`: 256 threads = (128 / 8)^2, a 1D grid of `whole + ctas` blocks
// for `ctas = g.p.ctas` once the host checked `Schedule::fits`, `padded_stages(16)` and a 16-byte
// aligned workspace of SLOTS_PER_CTA x ctas 128 x 128 tiles: `stream_k_tiled`'s contract.
kernel! {
    /// `paired_lanes`' block tile, on a stream-K grid; the launch bound also sets `ctas`: one
    /// wave is `SMs x` its min blocks per SM (1 for f64).
    SPEC = block_tile::spec(("stream_k", file!()), "`paired_lanes`' tile with the last, partial wave of tiles shared out by K phases among one wave of blocks, their partial sums added in K order by a second launch (`stream_k_fixup_*`); no block waits on another",
        Arch::Sm80, (128, 128), padded_stages(16), Some(2)).with_grid(Grid::StreamK { fixup: "stream_k_fixup" })
        .with_ptx(&[PtxFacts::only(WIDE, &[Barriers(21), AtLeast("fma.rn.f", 1024)]), PtxFacts::only(SIXTEEN_BIT, &[Barriers(5), AtLeast("fma.rn.f", 64)]), COPIES, VECTORS_F32, VECTORS_F64]);
    fn stream_k<T: Element>(Gemm<T>) = stream_k_tiled::<T, BM, BN, true>;
    entries stream_k_f32: f32, stream_k_f64: f64, stream_k_f16: f16, stream_k_bf16: Bf16, stream_k_f16_f16: Narrow<f16>, stream_k_bf16_bf16: Narrow<Bf16>;
}

/// The block tile and K step of `stream_k` (those of `paired_lanes`).
pub const BM: u32 = SPEC.rows();
pub const BN: u32 = SPEC.cols();

/// # Safety
/// As `fixup_tiled`.
#[inline(always)]
pub unsafe fn stream_k_fixup<T: Element>(g: Gemm<T>) {
    // SAFETY: the fix-up launch of `Grid::StreamK` (FIXUP_THREADS threads a block) comes after
    // `stream_k` with the same problem and `ctas`: its workspace is complete and `c` is `m x n`,
    // `fixup_tiled`'s contract.
    unsafe { fixup_tiled::<T, BM, BN>(g) }
}

// One fix-up per accumulator type; f16 and bf16 products launch the f32 one.
entry_points!(stream_k_fixup; stream_k_fixup_f32: f32, stream_k_fixup_f64: f64, stream_k_fixup_f16_f16: Narrow<f16>, stream_k_fixup_bf16_bf16: Narrow<Bf16>);
