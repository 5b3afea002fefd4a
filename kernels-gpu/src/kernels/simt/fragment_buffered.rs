//! Fragment double buffering: the warp-tiled, double-buffered kernel, with each K step's
//! shared-memory reads (its fragment) issued one K step ahead, into a second set of
//! registers. Across the phase boundary too: the last K step's multiply-adds wait until
//! after the barrier and the first reads of the next stage, so the shared-memory latency
//! after every barrier hides behind 64 multiply-adds instead of stalling every warp of the
//! block at once. A^T's rows are padded by 4 elements, so the transposed stores of A hit 32
//! banks (they hit 16 in `double_buffered`).
//!
//! Launch rules ([`FRAGMENT_BUFFERED`], [`FRAGMENT_BUFFERED_K16`]): `(BM / 8) * (BN / 8)` threads in a 1D block, grid
//! `ceil(n / BN) x ceil(m / BM)`, shared bytes `2 * (BK * (BM + 4) + BK * BN) *
//! size_of(Acc)`.
use crate::catalogue::Arch;
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::PtxFacts;
use crate::device::thread::{block_idx_x, block_idx_y, thread_idx_x};
use crate::element::Element;
use crate::element::{Bf16, Narrow};
use crate::parts::simt::block_tile;
use crate::parts::simt::block_tile::{
    Block, CHECKED, ThreadMap, ThreadTile, WarpTiled, epilogue, splits_into,
};
use crate::parts::simt::block_tile::{VECTORS_F32, VECTORS_F64};
use crate::parts::simt::fragment_stages::{mainloop, padded_stages, unchecked};
use crate::problem::{Gemm, kernel};

// Launch: `block_tile::spec`'s: the two padded stages `fragment_pipelined`'s mainloops carve.
kernel! {
    FRAGMENT_BUFFERED = block_tile::spec(("fragment_buffered", file!()), "fragment double buffering: each K step's shared reads one step ahead, across the barrier too; f64 thread tiles in 16-byte runs; A^T rows padded",
        Arch::Sm70, (128, 128), padded_stages(8), Some(2)).with_ptx(&[PtxFacts::all(&[Barriers(2), AtLeast("fma.rn.f", 512)]), VECTORS_F32, VECTORS_F64]);
    fn fragment_buffered<T: Element>(Gemm<T>) = fragment_pipelined::<T, { FRAGMENT_BUFFERED.rows() }, { FRAGMENT_BUFFERED.cols() }, { FRAGMENT_BUFFERED.bk() }, 1, false>;
    entries fragment_buffered_f32: f32, fragment_buffered_f64: f64, fragment_buffered_f16: f16, fragment_buffered_bf16: Bf16, fragment_buffered_f16_f16: Narrow<f16>, fragment_buffered_bf16_bf16: Narrow<Bf16>;
}

kernel! {
    FRAGMENT_BUFFERED_K16 = block_tile::spec(("fragment_buffered_k16", file!()), "BK = 16, the next phase's loads in two parts (half the staging registers), unchecked interior mainloop",
        Arch::Sm70, (128, 128), padded_stages(16), Some(2)).with_ptx(&[PtxFacts::all(&[Barriers(10), AtLeast("fma.rn.f", 1024)]), VECTORS_F32, VECTORS_F64]);
    fn fragment_buffered_k16<T: Element>(Gemm<T>) = fragment_pipelined::<T, { FRAGMENT_BUFFERED_K16.rows() }, { FRAGMENT_BUFFERED_K16.cols() }, { FRAGMENT_BUFFERED_K16.bk() }, 2, true>;
    entries fragment_buffered_k16_f32: f32, fragment_buffered_k16_f64: f64, fragment_buffered_k16_f16: f16, fragment_buffered_k16_bf16: Bf16, fragment_buffered_k16_f16_f16: Narrow<f16>, fragment_buffered_k16_bf16_bf16: Narrow<Bf16>;
}

/// The kernel for a `BM x BN` block tile stepping `BK`; `SPECIALISE` as in
/// `double_buffered::pipelined` (a second, unchecked mainloop for interior blocks). The next
/// phase's global loads come in `PARTS` parts, each stored `BK / PARTS` K steps after it is
/// issued, so only one part's registers are live at a time (BK = 16 in one part spills at
/// 128 registers).
///
/// # Safety
/// See the entry points; `(BM / 8) * (BN / 8)` threads per block.
#[inline(always)]
pub unsafe fn fragment_pipelined<
    T: Element,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
    const SPECIALISE: bool,
>(
    g: Gemm<T>,
) {
    const {
        assert!(
            splits_into(BM, BN, BK, PARTS),
            "PARTS must split the phase evenly"
        )
    };
    let (a, b, _, m, n, k) = g.plain();
    let out = g.c_out();
    let blk = Block::new::<T, BM, BN>(&g, (block_idx_y(), block_idx_x()));
    let phases = (0, k.div_ceil(BK));
    let me = WarpTiled::coords::<BM, BN>(thread_idx_x());
    // SAFETY: C is `m x n` at `ldc` (the entry point's contract); `me`'s 8 x 8 thread tile of this
    // block's tile is written by this thread only.
    let write_c =
        |acc: &ThreadTile<T::Acc>| unsafe { epilogue::<_, _, BM, BN>(&out, acc, (m, n), blk, me) };
    let ab = (a, b);
    if SPECIALISE && blk.interior && k.is_multiple_of(BK) {
        // SAFETY: the block is interior and K a multiple of BK, checked just above (`unchecked`
        // matches the layout itself); the branch depends only on block-uniform values, and the
        // launch provides the two padded stages (SPEC).
        unsafe { unchecked::<T, WarpTiled, BM, BN, BK, PARTS>(ab, (m, n, k), blk, phases, write_c) }
    } else {
        // SAFETY: the checked path promises nothing more than the entry point's contract and the
        // padded stages, as above; the branch is block-uniform.
        unsafe {
            mainloop::<T, WarpTiled, BM, BN, BK, PARTS, CHECKED>(
                ab,
                (m, n, k),
                blk,
                phases,
                write_c,
            )
        }
    }
}
