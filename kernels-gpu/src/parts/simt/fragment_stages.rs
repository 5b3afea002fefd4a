//! The fragment-buffered SIMT mainloop: two padded shared stages, the next phase's global
//! loads in flight (in registers, in `PARTS` parts) during the multiply-adds, and each K
//! step's shared reads (its fragment) issued one K step ahead, across the phase's barrier
//! too. `fragment_buffered`, `async_copy`'s checked path, `paired_lanes` and `stream_k` run it.
use crate::catalogue::Shared;
use crate::device::shared::SharedArena;
use crate::device::thread::{sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::parts::simt::block_tile::{
    AS_STORED, Block, Fetch, Fragment, Stage, ThreadMap, ThreadTile, fetch_as, fetch_part,
    stash_part,
};
use crate::problem::{TRANSPOSED_A, TRANSPOSED_B};
/// Padding of A^T's rows, in elements (a multiple of 4 keeps 16-byte reads aligned).
pub const PAD: u32 = 4;

/// Two stages of `bk` K steps, A^T's rows padded.
pub(crate) const fn padded_stages(bk: u32) -> Shared {
    Shared::Stages {
        stages: 2,
        bk,
        a_pad: PAD,
    }
}

/// The thread tile of block tile `blk` over phases `p0..p1` (of BK steps of K), handed to
/// `finish` (the epilogue): prologue and mainloop. Every thread of the block calls it; it
/// reads shared memory after its last barrier (see `phase_steps`), so a caller that runs
/// it again first waits at a barrier.
///
/// # Safety
/// As the entry points, the launch providing `padded_stages(BK)` of shared memory; an
/// unchecked `PATH` promises an interior block, K a multiple of BK, `p1 <= k / BK` and
/// `blk.layout() == PATH`.
#[inline(always)]
pub(crate) unsafe fn mainloop<
    T: Element,
    M: ThreadMap,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
    const PATH: u32,
>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    blk: Block,
    (p0, p1): (u32, u32),
    finish: impl FnOnce(&ThreadTile<T::Acc>),
) {
    // SAFETY: the launch provides `padded_stages(BK)` (the contract): the `2 * (BK * (BM +
    // PAD) + BK * BN)` accumulators `start` needs.
    let (tid, me, stages) = unsafe { start::<T::Acc, M, BM, BN, BK>() };
    let mut acc = [[T::Acc::ZERO; 8]; 8];
    if p0 >= p1 {
        // No phases (K = 0): zeros (uniform: no barrier is skipped by part of the block).
        // `finish` in each path: see `async_copy::mainloop`.
        finish(&acc);
        return;
    }

    // Prologue: the first stage, and the first K step's fragment.
    // SAFETY: `fetch_as`'s terms are this fn's (operands as `blk.s`; an unchecked PATH's
    // promise, with `p0 < p1 <= k / BK`); stage 0 is unread from the caller's last barrier
    // (or ever) to the barrier below, as `stash_part` needs.
    unsafe {
        let f = fetch_as::<T, BM, BN, BK, PATH>((a, b), (m, n, k), blk, p0 * BK, tid);
        stash_part::<_, BM, BN, BK, PATH>(&stages.phase::<BK>(0), &f, (blk, tid), (0, 1, true));
    }
    sync_threads();
    // SAFETY: stage 0 is complete (every thread stored its share before the barrier above)
    // and nobody writes it before the next; `me` is in the thread grid.
    let mut frag = unsafe { Fragment::load::<BM, BN>(&stages.phase::<BK>(0), 0, me) };
    // Mainloop: global loads one phase ahead, fragments one K step ahead.
    for phase in p0..p1 {
        let next = phase + 1 < p1;
        let (here, there) = (
            stages.phase::<BK>((phase - p0) % 2),
            stages.phase::<BK>((phase - p0 + 1) % 2),
        );
        let loads = Loads::<T, PATH> {
            ab: (a, b),
            mnk: (m, n, k),
            blk,
            k0: (phase + 1) * BK,
            tid,
            with_b: true,
        };
        // SAFETY: `here` is complete (the prologue's barrier, or the last phase's) and
        // unwritten, `there` last read before that barrier; the loads under this fn's terms
        // (`next`: phase + 1 < p1); every thread runs the same phases.
        frag = unsafe {
            phase_steps::<T, BM, BN, BK, PARTS, PATH>(
                (&here, &there),
                &mut acc,
                frag,
                me,
                (next, loads),
                || {},
            )
        };
    }
    finish(&acc);
}

/// [`mainloop`] unchecked, compiled for each layout of A and B and run for this block's.
///
/// # Safety
/// As [`mainloop`] with an unchecked path: an interior block, K a multiple of BK.
#[inline(always)]
pub(crate) unsafe fn unchecked<
    T: Element,
    M: ThreadMap,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
>(
    ab: (*const T, *const T),
    mnk: (u32, u32, u32),
    blk: Block,
    phases: (u32, u32),
    finish: impl FnOnce(&ThreadTile<T::Acc>),
) {
    // SAFETY: this fn's terms (interior, K a multiple of BK, phases inside K), and each
    // PATH is `blk.layout()` as matched; a transposed B goes to `transposed_b`.
    unsafe {
        match blk.layout() {
            AS_STORED => {
                mainloop::<T, M, BM, BN, BK, PARTS, AS_STORED>(ab, mnk, blk, phases, finish)
            }
            TRANSPOSED_A => {
                mainloop::<T, M, BM, BN, BK, PARTS, TRANSPOSED_A>(ab, mnk, blk, phases, finish)
            }
            _ => transposed_b::<T, M, BM, BN, BK, PARTS>(ab, mnk, blk, phases, finish),
        }
    }
}

/// [`mainloop`] unchecked for a transposed B, A as stored or transposed: the layouts that
/// `async_copy`'s pipeline hands here too, as `cp.async` copies B's rows as they are.
///
/// # Safety
/// As [`unchecked`], and B is transposed.
#[inline(always)]
pub(crate) unsafe fn transposed_b<
    T: Element,
    M: ThreadMap,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
>(
    ab: (*const T, *const T),
    mnk: (u32, u32, u32),
    blk: Block,
    phases: (u32, u32),
    finish: impl FnOnce(&ThreadTile<T::Acc>),
) {
    // SAFETY: this fn's terms, and PATH is `blk.layout()`: TRANSPOSED_B as matched, else
    // both (B is transposed: the contract).
    unsafe {
        match blk.layout() {
            TRANSPOSED_B => {
                mainloop::<T, M, BM, BN, BK, PARTS, TRANSPOSED_B>(ab, mnk, blk, phases, finish)
            }
            _ => mainloop::<T, M, BM, BN, BK, PARTS, BOTH>(ab, mnk, blk, phases, finish),
        }
    }
}

/// Both operands transposed.
const BOTH: u32 = TRANSPOSED_A | TRANSPOSED_B;

/// What every fragment-buffered mainloop starts from: this thread's index, its place in the
/// thread map `M`, and the two padded stages.
///
/// # Safety
/// The launch provides `2 * (BK * (BM + PAD) + BK * BN)` accumulators of shared memory.
#[inline(always)]
pub(crate) unsafe fn start<
    A: Accumulator,
    M: ThreadMap,
    const BM: u32,
    const BN: u32,
    const BK: u32,
>() -> (u32, (u32, u32), Stage<A>) {
    let tid = thread_idx_x();
    let me = M::coords::<BM, BN>(tid);
    // SAFETY: the contract: the launch provides what `carve_stages` takes below, two stages
    // of BK rows of `BM + PAD` and of BN accumulators.
    let mut arena = unsafe { SharedArena::<A>::launch_sized() };
    (
        tid,
        me,
        Stage::carve_stages::<BM, BN, BK>(&mut arena, 2, PAD),
    )
}

/// Where the next phase's global loads come from (see `block_tile::fetch_part`).
#[derive(Clone, Copy)]
pub(crate) struct Loads<T: Element, const PATH: u32> {
    pub ab: (*const T, *const T),
    pub mnk: (u32, u32, u32),
    pub blk: Block,
    pub k0: u32,
    pub tid: u32,
    /// B too, or only A (B then arrives by other means).
    pub with_b: bool,
}

/// One phase's K steps out of `here`, each K step's fragment read one step ahead; the next
/// phase's loads (if any) issued in `PARTS` parts, each stored into `there` `BK / PARTS` K
/// steps later (when `next`). Ends with `before_barrier()`, the phase's barrier and the first fragment of
/// `there`, which it returns: the last K step's multiply-adds come after that read, so its
/// latency hides behind them. After the last phase `there` holds nothing of use: reading it
/// is harmless (inside the tile, no writer) and cheaper than a predicated read.
///
/// # Safety
/// `here` is complete and nobody writes it; `there` was last read before the previous
/// barrier; as `fetch_part` for the loads; `me` is in the `BM / 8 x BN / 8` thread grid;
/// called by every thread of the block.
#[inline(always)]
pub(crate) unsafe fn phase_steps<
    T: Element,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
    const PATH: u32,
>(
    (here, there): (&Stage<T::Acc>, &Stage<T::Acc>),
    acc: &mut ThreadTile<T::Acc>,
    mut frag: Fragment<T::Acc>,
    me: (u32, u32),
    (next, l): (bool, Loads<T, PATH>),
    before_barrier: impl Fn(),
) -> Fragment<T::Acc> {
    let step = BK / PARTS;
    // A plain value, not an Option: an Option taken in the K loop stayed in local memory.
    let mut pending = Fetch::empty();
    for kk in 0..BK {
        let part = (kk / step, PARTS, l.with_b);
        if next && kk % step == 0 {
            // SAFETY: `fetch_part`'s terms are this fn's contract for the loads (`l`).
            pending =
                unsafe { fetch_part::<T, BM, BN, BK, PATH>(l.ab, l.mnk, l.blk, l.k0, l.tid, part) };
        }
        if next && kk % step == step - 1 {
            // SAFETY: `there` was last read before the previous barrier and is next read after
            // the one below (the contract), so nobody reads it now; the path is the fetch's.
            unsafe { stash_part::<_, BM, BN, BK, PATH>(there, &pending, (l.blk, l.tid), part) };
        }
        let following = if kk + 1 < BK {
            // SAFETY: `kk + 1 < BK`; `here` is complete and nobody writes it (the contract).
            unsafe { Fragment::load::<BM, BN>(here, kk + 1, me) }
        } else {
            before_barrier();
            sync_threads();
            // SAFETY: past the barrier `there` is complete (every thread stored its parts, and
            // `before_barrier` waited for any copies) and unwritten till the next; after the
            // last phase it holds stale data, inside the tile, read and discarded.
            unsafe { Fragment::load::<BM, BN>(there, 0, me) }
        };
        frag.multiply_into(acc);
        frag = following;
    }
    frag
}
