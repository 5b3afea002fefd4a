//! Fragment double buffering: the warp-tiled, double-buffered kernel, with each K step's
//! shared-memory reads (its fragment) issued one K step ahead, into a second set of
//! registers. Across the phase boundary too: the last K step's multiply-adds wait until
//! after the barrier and the first reads of the next stage, so the shared-memory latency
//! after every barrier hides behind 64 multiply-adds instead of stalling every warp of the
//! block at once. A^T's rows are padded by 4 elements, so the transposed stores of A hit 32
//! banks (they hit 16 in `double_buffered`).
//!
//! Launch rules (host `kernels.rs`): `(BM / 8) * (BN / 8)` threads in a 1D block, grid
//! `ceil(n / BN) x ceil(m / BM)`, shared bytes `2 * (BK * (BM + 4) + BK * BN) *
//! size_of(Acc)`.
use crate::block_tile::{
    Block, Fetch, Fragment, Stage, ThreadMap, WarpTiled, epilogue, fetch_as, fetch_part,
    splits_into, stash, stash_part,
};
use crate::device::shared::SharedArena;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
#[cfg(target_arch = "nvptx64")]
use crate::element::Bf16;
use crate::element::{Accumulator, Element, gemm_entry_points};

/// Padding of A^T's rows, in elements (a multiple of 4 keeps 16-byte reads aligned).
pub const PAD: u32 = 4;

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
    a: *const T,
    b: *const T,
    c: *mut T::Acc,
    m: u32,
    n: u32,
    k: u32,
) {
    const {
        assert!(
            splits_into(BM, BN, BK, PARTS),
            "PARTS must split the phase evenly"
        )
    };
    let blk = Block::new::<T, BM, BN>((a, b, c), (m, n, k), (block_idx_y(), block_idx_x()));
    if SPECIALISE && blk.interior && k.is_multiple_of(BK) {
        unsafe { mainloop::<T, BM, BN, BK, PARTS, false>((a, b, c), (m, n, k), blk) }
    } else {
        unsafe { mainloop::<T, BM, BN, BK, PARTS, true>((a, b, c), (m, n, k), blk) }
    }
}

#[inline(always)]
pub(crate) unsafe fn mainloop<
    T: Element,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
    const CHECKED: bool,
>(
    (a, b, c): (*const T, *const T, *mut T::Acc),
    (m, n, k): (u32, u32, u32),
    blk: Block,
) {
    let tid = thread_idx_x();
    let me = WarpTiled::coords::<BM, BN>(tid);
    // SAFETY: the launch provides two padded stages of shared memory.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let stages = Stage::carve_stages::<BM, BN, BK>(&mut arena, 2, PAD);
    let mut acc = [[T::Acc::ZERO; 8]; 8];
    let phases = k.div_ceil(BK);
    if phases == 0 {
        // K = 0: C is zeros (uniform: no barrier is skipped by part of the block).
        unsafe { epilogue::<_, BM, BN>(c, &acc, (m, n), blk, me) };
        return;
    }

    // Prologue: the first stage, and the first K step's fragment.
    unsafe {
        let f = fetch_as::<T, BM, BN, BK, CHECKED>((a, b), (m, n, k), blk, 0, tid);
        stash::<_, BM, BN, BK>(&stages.phase::<BK>(0), &f, tid);
    }
    sync_threads();
    let mut frag = unsafe { Fragment::load::<BM, BN>(&stages.phase::<BK>(0), 0, me) };
    // Mainloop: global loads one phase ahead, fragments one K step ahead.
    for phase in 0..phases {
        let next = phase + 1 < phases;
        let (here, there) = (
            stages.phase::<BK>(phase % 2),
            stages.phase::<BK>((phase + 1) % 2),
        );
        let step = BK / PARTS;
        // A plain value, not an Option: an Option taken in the K loop stayed in local memory.
        let mut pending = Fetch::empty();
        for kk in 0..BK {
            let part = (kk / step, PARTS, true);
            if next && kk % step == 0 {
                let k0 = (phase + 1) * BK;
                pending = unsafe {
                    fetch_part::<T, BM, BN, BK, CHECKED>((a, b), (m, n, k), blk, k0, tid, part)
                };
            }
            if next && kk % step == step - 1 {
                // `there` was last read in phase - 1, before the previous barrier.
                unsafe { stash_part::<_, BM, BN, BK>(&there, &pending, tid, part) };
            }
            let following = if kk + 1 < BK {
                unsafe { Fragment::load::<BM, BN>(&here, kk + 1, me) }
            } else {
                sync_threads();
                // After the last phase this reads a stage nobody uses: harmless (inside the
                // tile, no writer), and cheaper than a predicated load.
                unsafe { Fragment::load::<BM, BN>(&there, 0, me) }
            };
            frag.multiply_into(&mut acc);
            frag = following;
        }
    }
    // Epilogue.
    unsafe { epilogue::<_, BM, BN>(c, &acc, (m, n), blk, me) };
}

/// # Safety
/// See the entry points; 256 threads per block.
#[inline(always)]
pub unsafe fn fragment_buffered<T: Element>(
    a: *const T,
    b: *const T,
    c: *mut T::Acc,
    m: u32,
    n: u32,
    k: u32,
) {
    unsafe { fragment_pipelined::<T, 128, 128, 8, 1, false>(a, b, c, m, n, k) }
}

/// # Safety
/// See the entry points; 256 threads per block.
#[inline(always)]
pub unsafe fn fragment_buffered_k16<T: Element>(
    a: *const T,
    b: *const T,
    c: *mut T::Acc,
    m: u32,
    n: u32,
    k: u32,
) {
    unsafe { fragment_pipelined::<T, 128, 128, 16, 2, true>(a, b, c, m, n, k) }
}

gemm_entry_points!(fragment_buffered;
    fragment_buffered_f32: f32, fragment_buffered_f64: f64, fragment_buffered_f16: f16, fragment_buffered_bf16: Bf16);
gemm_entry_points!(fragment_buffered_k16;
    fragment_buffered_k16_f32: f32, fragment_buffered_k16_f64: f64, fragment_buffered_k16_f16: f16, fragment_buffered_k16_bf16: Bf16);
