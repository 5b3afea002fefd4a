//! The double-buffered SIMT mainloop: two shared stages; while the block multiplies out of
//! one, each thread has the next phase's global loads in flight in registers and stores them
//! into the other afterwards, one barrier per phase. `double_buffered` and the `warp_tiled`
//! kernels run it.
use crate::device::shared::SharedArena;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::parts::simt::block_tile::{
    AS_STORED, Block, CHECKED, Stage, ThreadMap, epilogue, fetch_as, multiply, stash_part,
};
use crate::problem::{COut, Gemm};
/// The double-buffered kernel for a `BM x BN` block tile stepping `BK`, with thread mapping
/// `M` (also used by the `warp_tiled` kernels). With `SPECIALISE`, interior blocks whose K is
/// a whole number of phases run a second mainloop compiled without any bounds check (the
/// others the checked one; per block, so both keep their barriers in uniform control flow).
/// Measured on an H200 it pays for BK = 16 and 64 x 64 tiles and costs for 128 x 128 x 8,
/// so each kernel states its choice.
///
/// # Safety
/// See the entry points; `(BM / 8) * (BN / 8)` threads per block.
#[inline(always)]
pub unsafe fn pipelined<
    T: Element,
    M: ThreadMap,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const SPECIALISE: bool,
>(
    g: Gemm<T>,
) {
    let (a, b, _, m, n, k) = g.plain();
    let out = g.c_out();
    let blk = Block::new::<T, BM, BN>(&g, (block_idx_y(), block_idx_x()));
    if SPECIALISE && blk.interior && blk.as_stored() && k.is_multiple_of(BK) {
        // SAFETY: `mainloop`'s AS_STORED terms: an interior block read as stored with K a
        // multiple of BK (tested above); the rest is the entry points' (this fn's contract).
        unsafe { mainloop::<T, M, BM, BN, BK, AS_STORED>(a, b, out, m, n, k, blk) }
    } else {
        // SAFETY: the CHECKED path asks only the entry points' terms (this fn's contract):
        // its loads are bounds-checked.
        unsafe { mainloop::<T, M, BM, BN, BK, CHECKED>(a, b, out, m, n, k, blk) }
    }
}

/// The double-buffered mainloop and epilogue of block tile `blk`, on path `PATH`.
///
/// # Safety
/// As the entry points: A and B as `blk.s` says, C `m x n` with rows `out.ldc` apart, two
/// unpadded stages of shared memory (the spec's `Shared::Stages`) and `(BM / 8) * (BN / 8)`
/// threads, every one calling it; an unchecked `PATH` only for an interior block of that
/// layout with K a multiple of BK.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn mainloop<
    T: Element,
    M: ThreadMap,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PATH: u32,
>(
    a: *const T,
    b: *const T,
    out: COut<T::Acc, T::Out>,
    m: u32,
    n: u32,
    k: u32,
    blk: Block,
) {
    let tid = thread_idx_x();
    let me = M::coords::<BM, BN>(tid);
    // SAFETY: the launch provides two unpadded stages of BK steps (the spec's
    // `Shared::Stages`, the contract): what the two `carve`s below take.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let stages = (
        Stage::carve::<BM, BN, BK>(&mut arena),
        Stage::carve::<BM, BN, BK>(&mut arena),
    );
    // Chosen by parity with a select, not an array index: an indexed array of stages would
    // live in local memory and lose the shared address space of its pointers.
    let stage = |p: u32| {
        if p.is_multiple_of(2) {
            stages.0
        } else {
            stages.1
        }
    };
    let mut acc = [[T::Acc::ZERO; 8]; 8];
    let phases = k.div_ceil(BK);

    // Prologue: the first stage.
    if phases > 0 {
        // SAFETY: `fetch_as`'s terms are this fn's (operands as `blk.s`; on an unchecked PATH
        // interior, K a multiple of BK: every phase whole); stage 0 is unread before the
        // barrier below, as `stash_part` needs.
        unsafe {
            let f = fetch_as::<T, BM, BN, BK, PATH>((a, b), (m, n, k), blk, 0, tid);
            stash_part::<_, BM, BN, BK, PATH>(&stages.0, &f, (blk, tid), (0, 1, true));
        }
    }
    sync_threads();
    // Mainloop: fetch phase p + 1 while multiplying phase p.
    for phase in 0..phases {
        let next = phase + 1 < phases;
        let prefetch = if next {
            // SAFETY: as the prologue's, for phase `phase + 1 < phases`.
            Some(unsafe {
                fetch_as::<T, BM, BN, BK, PATH>((a, b), (m, n, k), blk, (phase + 1) * BK, tid)
            })
        } else {
            None
        };
        // SAFETY: `stage(phase)` is complete (stored before the last barrier) and unwritten
        // before the next (this phase stores into the other); `me` is in the thread grid
        // (`M::coords` of one of the contract's `(BM / 8) * (BN / 8)` threads).
        unsafe { multiply::<_, BM, BN, BK>(&stage(phase), &mut acc, me) };
        if let Some(f) = prefetch {
            // SAFETY: the other stage was last read in phase - 1, before the previous barrier,
            // and is read next after the barrier below: no reader, as `stash_part` needs.
            unsafe {
                stash_part::<_, BM, BN, BK, PATH>(&stage(phase + 1), &f, (blk, tid), (0, 1, true))
            };
        }
        sync_threads();
    }
    // Epilogue.
    // SAFETY: `epilogue`'s terms: C `m x n`, rows `out.ldc` apart (the contract); the grid
    // gives tile `blk` to this block alone and `me` (in the thread grid) its thread tile.
    unsafe { epilogue::<_, _, BM, BN>(&out, &acc, (m, n), blk, me) };
}
