//! `stream_k` on short block tiles, 64 x 128 and 32 x 128, for products with few rows:
//! 128-row tiles leave most of each tile outside C and most of the GPU idle there. Measured
//! on an H200 before them (f32 x 4096 x 4096, `stream_k`, % of cuBLAS): 64 rows at 57%, 32
//! rows at 45%, 16 rows at 83%.
//!
//! And on narrow ones, 128 x 64 and 128 x 32, for products with few columns: with 8 to 64
//! columns a 128 x 128 tile computes 2 to 16 times the columns of C, and `stream_k` ran
//! 4096 x N x 4096 in the same 0.12 ms for every N from 8 to 64 (f32, H200: 47-62% of
//! cuBLAS). 32 columns take `PairedLanes`' 8 x 4 warp patch. A 256 x 32 tile (128 threads)
//! does not split its phase's B groups in two (one per thread), so it was not kept.
//!
//! The same 8 x 8 thread tiles in `PairedLanes` warp patches, fewer of them: 128 threads
//! (64 rows, 64 columns) or 64 threads (32 rows, 32 columns), and a launch bound that
//! leaves the registers uncapped (two and four blocks per SM: 255 registers, no spills in
//! f32). At four and eight blocks per SM (128 registers) the short ones spilled 272 and
//! 576 bytes and ran 64 rows at 83% and 32 rows at 80% of cuBLAS; uncapped, 94% and 103%:
//! a few long shares of K beat many short ones here. The edge blocks whose groups of 4 are
//! whole take the unchecked `EDGE` path, as in `stream_k`.
//!
//! Launch rules ([`SPEC_64`], [`SPEC_32`], [`SPEC_NARROW`], [`SPEC_NARROW_32`]): as
//! `stream_k`, with `(BM / 8) * (BN / 8)` threads and `ctas` = SMs x the launch bound's
//! blocks per SM (2, 4, 2 and 4); the fix-ups (`stream_k_64_fixup_*`, `stream_k_32_fixup_*`,
//! `stream_k_narrow_fixup_*`, `stream_k_narrow_32_fixup_*`) take
//! `split * fixup_chunks((BM, BN))` blocks of 256 threads. Only in the sm_80 PTX module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::{Arch, Grid, KernelSpec, PerAcc};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT, WIDE};
use crate::element::Element;
use crate::element::{Bf16, Narrow};
use crate::parts::schedule::stream_k::{fixup_tiled, stream_k_tiled};
use crate::parts::simt::block_tile;
use crate::parts::simt::fragment_stages::padded_stages;
use crate::problem::{Gemm, entry_points, kernel};

/// `stream_k`'s barriers: twice its mainloops (whole tiles, shares) and one before each piece.
const PTX: &[PtxFacts] = &[
    PtxFacts::only(WIDE, &[Barriers(21)]),
    PtxFacts::only(SIXTEEN_BIT, &[Barriers(5)]),
];

/// `stream_k` on `rows x cols` tiles, `blocks` per SM for every accumulator type: with
/// `(rows / 8) * (cols / 8)` threads, a bound that leaves the registers uncapped.
const fn short_spec(
    (name, fixup): (&'static str, &'static str),
    idea: &'static str,
    (rows, cols): (u32, u32),
    blocks: u32,
) -> KernelSpec {
    let tile = block_tile::spec(
        (name, file!()),
        idea,
        Arch::Sm80,
        (rows, cols),
        padded_stages(16),
        Some(blocks),
    );
    tile.with_grid(Grid::StreamK { fixup })
        .with_blocks_per_sm(PerAcc {
            f32: Some(blocks),
            f64: Some(blocks),
        })
        .with_ptx(PTX)
}

/// A kernel on a spec's tile, `stream_k::stream_k_tiled`, and its fix-up, `stream_k::fixup_tiled`,
/// with their entry points.
macro_rules! on_tile {
    ($spec:ident = $value:expr; $kernel:ident [$($entries:tt)+]; $fixup:ident [$($fixups:tt)+];) => {
        kernel! {
            $spec = $value;
            fn $kernel<T: Element>(Gemm<T>) = stream_k_tiled::<T, { $spec.rows() }, { $spec.cols() }, true>;
            entries $($entries)+;
        }

        /// # Safety
        /// As `stream_k::fixup_tiled` on this kernel's tile.
        #[inline(always)]
        pub unsafe fn $fixup<T: Element>(g: Gemm<T>) {
            // SAFETY: the fix-up launch for `$spec`'s tiles (FIXUP_THREADS threads a block) comes
            // after its stream-K launch with the same problem and `ctas`: `fixup_tiled`'s contract.
            unsafe { fixup_tiled::<T, { $spec.rows() }, { $spec.cols() }>(g) }
        }

        entry_points!($fixup; $($fixups)+);
    };
}

// Launch: each spec's `Grid::StreamK`: (rows / 8) (cols / 8) threads of its tile, a 1D grid of
// `whole + ctas` blocks once the host checked `Schedule::fits`, `padded_stages(16)` and
// SLOTS_PER_CTA x ctas tiles of workspace: `stream_k_tiled`'s contract.
on_tile! {
    SPEC_64 = short_spec(("stream_k_64", "stream_k_64_fixup"), "`stream_k` on 64 x 128 tiles (128 threads, two blocks per SM) for C with few rows", (64, 128), 2);
    stream_k_64 [stream_k_64_f32: f32, stream_k_64_f64: f64, stream_k_64_f16: f16, stream_k_64_bf16: Bf16, stream_k_64_f16_f16: Narrow<f16>, stream_k_64_bf16_bf16: Narrow<Bf16>];
    stream_k_64_fixup [stream_k_64_fixup_f32: f32, stream_k_64_fixup_f64: f64, stream_k_64_fixup_f16_f16: Narrow<f16>, stream_k_64_fixup_bf16_bf16: Narrow<Bf16>];
}

on_tile! {
    SPEC_32 = short_spec(("stream_k_32", "stream_k_32_fixup"), "`stream_k` on 32 x 128 tiles (64 threads, four blocks per SM) for C with fewer rows", (32, 128), 4);
    stream_k_32 [stream_k_32_f32: f32, stream_k_32_f64: f64, stream_k_32_f16: f16, stream_k_32_bf16: Bf16, stream_k_32_f16_f16: Narrow<f16>, stream_k_32_bf16_bf16: Narrow<Bf16>];
    stream_k_32_fixup [stream_k_32_fixup_f32: f32, stream_k_32_fixup_f64: f64, stream_k_32_fixup_f16_f16: Narrow<f16>, stream_k_32_fixup_bf16_bf16: Narrow<Bf16>];
}

on_tile! {
    SPEC_NARROW = short_spec(("stream_k_narrow", "stream_k_narrow_fixup"), "`stream_k` on 128 x 64 tiles (128 threads, two blocks per SM) for C with few columns", (128, 64), 2);
    stream_k_narrow [stream_k_narrow_f32: f32, stream_k_narrow_f64: f64, stream_k_narrow_f16: f16, stream_k_narrow_bf16: Bf16, stream_k_narrow_f16_f16: Narrow<f16>, stream_k_narrow_bf16_bf16: Narrow<Bf16>];
    stream_k_narrow_fixup [stream_k_narrow_fixup_f32: f32, stream_k_narrow_fixup_f64: f64, stream_k_narrow_fixup_f16_f16: Narrow<f16>, stream_k_narrow_fixup_bf16_bf16: Narrow<Bf16>];
}

on_tile! {
    SPEC_NARROW_32 = short_spec(("stream_k_narrow_32", "stream_k_narrow_32_fixup"), "`stream_k` on 128 x 32 tiles (64 threads, four blocks per SM) for C with fewer columns", (128, 32), 4);
    stream_k_narrow_32 [stream_k_narrow_32_f32: f32, stream_k_narrow_32_f64: f64, stream_k_narrow_32_f16: f16, stream_k_narrow_32_bf16: Bf16, stream_k_narrow_32_f16_f16: Narrow<f16>, stream_k_narrow_32_bf16_bf16: Narrow<Bf16>];
    stream_k_narrow_32_fixup [stream_k_narrow_32_fixup_f32: f32, stream_k_narrow_32_fixup_f64: f64, stream_k_narrow_32_fixup_f16_f16: Narrow<f16>, stream_k_narrow_32_fixup_bf16_bf16: Narrow<Bf16>];
}
