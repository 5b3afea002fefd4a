//! The asynchronous SIMT mainloop: B's tiles copied by `cp.async` (no registers, no shared
//! stores), A's still through registers, fragments a K step ahead as in
//! [`super::fragment_stages`], whose checked mainloop takes the blocks this one does not.
//! `async_copy`, `paired_lanes` and `stream_k` run it.
use crate::catalogue::PtxFact::Has;
use crate::catalogue::{PtxFacts, WIDE};
use crate::device::async_copy::{commit_group, wait_group};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::parts::simt::block_tile::{
    AS_STORED, Block, CHECKED, EDGE, Fragment, Stage, ThreadMap, ThreadTile, b_group, epilogue_on,
    fetch_part, splits_into, stash_part, threads,
};
use crate::parts::simt::fragment_stages;
use crate::parts::simt::fragment_stages::{Loads, phase_steps};
use crate::problem::{Gemm, TRANSPOSED_A};
/// The asynchronous copies of B in the f32 and f64 entries: 16 bytes each, committed in
/// groups, all waited for before the last phase.
pub const COPIES: PtxFacts = PtxFacts::only(
    WIDE,
    &[
        Has("cp.async.cg.shared.global"),
        Has("cp.async.commit_group"),
        Has("cp.async.wait_group 0"),
    ],
);

/// Starts copying phase `k0`'s tile of B into `st`, 16 bytes per copy; on the [`EDGE`]
/// path the groups past column `n` or row `k` are zeros instead (stored, not copied: what
/// the barrier publishes either way).
///
/// # Safety
/// `b` is `k x n` of the accumulator type, not transposed; the block is interior, K a
/// multiple of BK and `k0 < k`, or the path is `EDGE` and the block aligned (`Block::new`
/// checked); `st` is a stage of the launch's shared memory, and nobody reads it until a
/// wait and a barrier.
#[inline(always)]
unsafe fn copy_b<A: Accumulator, const BM: u32, const BN: u32, const BK: u32, const PATH: u32>(
    st: &Stage<A>,
    b: *const A,
    (blk, k0, tid, (n, k)): (Block, u32, u32, (u32, u32)),
) {
    // Elements per 16-byte copy (4 for f32, 2 for f64); `b_group` counts groups of 4.
    let per = 16 / size_of::<A>() as u32;
    for i in 0..BK * BN / 4 / threads(BM, BN) {
        let (r, col) = b_group::<BM, BN, BK>(tid, i, (false, true));
        if PATH & EDGE != 0 && (blk.col0 + col >= n || k0 + r >= k) {
            for j in 0..4 {
                // SAFETY: `b_group` gives `r < BK` and `col` a multiple of 4 below BN: inside
                // the stage's B; this thread's own group, unread until a wait and a barrier
                // (the contract).
                unsafe { st.b.set(r, col + j, A::ZERO) };
            }
            continue;
        }
        for half in 0..4 / per {
            let col = col + half * per;
            // SAFETY: the group is inside B (`k x n`, as stored): on an unchecked path the
            // block is interior and `k0 + r < k` (K a multiple of BK, `k0 < k`: the contract),
            // on EDGE the test above passed; so the offset stays in B's buffer.
            let src = unsafe { b.add(blk.s.b(k0 + r, blk.col0 + col)) };
            // SAFETY: `copy16`'s terms: 16 bytes at `(r, col..)`, `col + per <= BN`, inside the
            // stage, 16-byte aligned (so are the arena and the tiles' offsets); `src` as above,
            // aligned (B 4-aligned, `ldb` a multiple of 4); `st` unread till waited for.
            unsafe { st.b.copy16_from(r, col, src) };
        }
    }
}

/// The kernel for a `BM x BN` block tile stepping `BK`, A's loads in `PARTS` parts, threads
/// placed by `M`.
///
/// # Safety
/// See the entry points; `(BM / 8) * (BN / 8)` threads per block.
#[inline(always)]
pub unsafe fn async_pipelined<
    T: Element,
    M: ThreadMap,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
    const EDGES: bool,
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
    let me = M::coords::<BM, BN>(thread_idx_x());
    // Epilogue (in each path: one shared epilogue made ptxas allocate both loops' tiles
    // alike, which cost spills).
    // SAFETY: `epilogue_on`'s terms: C is `m x n`, rows `ldc` apart (the entry points'); the
    // grid gives tile `blk` to this block alone, and `me` (in the thread grid: the launch's
    // `(BM / 8) * (BN / 8)` threads) this thread's own thread tile.
    let write_c = |acc: &ThreadTile<T::Acc>| unsafe {
        epilogue_on::<_, _, BM, BN, EDGES>(&out, acc, (m, n), blk, me)
    };
    let mnk = (m, n, k);
    // SAFETY: `tile_product`'s terms: the entry points' (this fn's contract), all of K
    // (`None`), and the same arguments in every thread (from `g` and the block index).
    unsafe {
        tile_product::<T, M, BM, BN, BK, PARTS, true, EDGES>((a, b), mnk, blk, None, write_c)
    };
}

/// The thread tile of block tile `blk` over phases `p0..p1` (all of K if `None`), handed to
/// `finish`: the asynchronous mainloop for interior blocks of f32/f64 with K a multiple of
/// BK, `fragment_buffered`'s checked one otherwise. Reads shared memory after its last
/// barrier (see `phase_steps`): a caller that runs it again first waits at a barrier.
///
/// With `EVERY_LAYOUT`, an unchecked mainloop is compiled for each layout of A and B (a
/// transposed A in the asynchronous one, a transposed B through registers); without, only
/// for A and B as stored, and transposed operands take the checked one: `stream_k`, which
/// runs this twice, spilled 248 bytes with every layout (44 without) and lost 4.5% at
/// 8192^3 (H200). Without, the code is written as it was before layouts existed, test
/// order included: one reordered condition gave `stream_k_f32` other PTX, 124 bytes of
/// spills and 3% less at 8192^3.
///
/// With `EDGES`, an aligned block ([`Block::aligned`]) of operands as stored that the
/// unchecked path does not take (an edge block, K not a multiple of BK) runs the
/// asynchronous mainloop on the [`EDGE`] path. (It took `stream_k_f32` from 44 to 112
/// bytes of spills; its speed at 4096^3 and 8192^3 did not move.)
///
/// # Safety
/// As the entry points, the launch providing `padded_stages(BK)` of shared memory; every
/// thread of the block calls it with the same arguments; `phases`, if given, lie within
/// `0..k.div_ceil(BK)`.
#[inline(always)]
pub(crate) unsafe fn tile_product<
    T: Element,
    M: ThreadMap,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
    const EVERY_LAYOUT: bool,
    const EDGES: bool,
>(
    ab: (*const T, *const T),
    mnk: (u32, u32, u32),
    blk: Block,
    phases: Option<(u32, u32)>,
    finish: impl FnOnce(&ThreadTile<T::Acc>),
) {
    const {
        assert!(
            splits_into(BM, BN, BK, PARTS),
            "PARTS must split the phase evenly"
        )
    };
    let k = mnk.2;
    if !EVERY_LAYOUT {
        // Transposed operands take the checked mainloop (`Block::as_stored`).
        if T::IS_ACC && blk.interior && blk.as_stored() && k.is_multiple_of(BK) {
            // `k / BK`, not `div_ceil`: the same here, but LLVM does not see it, and the
            // loop then compiled to more address arithmetic (27 more instructions per two
            // phases).
            let phases = phases.unwrap_or((0, k / BK));
            // SAFETY: `mainloop`'s AS_STORED terms: `T::IS_ACC`, an interior block read as
            // stored, K a multiple of BK (all tested above), phases within `0..k / BK` (this
            // fn's contract, or the default); the same arguments in every thread.
            unsafe { mainloop::<T, M, BM, BN, BK, PARTS, AS_STORED>(ab, mnk, blk, phases, finish) };
            return;
        }
    } else if T::IS_ACC && blk.interior && k.is_multiple_of(BK) {
        let phases = phases.unwrap_or((0, k / BK));
        // `cp.async` copies B's rows as they are stored: a transposed B goes through
        // registers (`fragment_buffered`'s unchecked mainloop, compiled for its layout).
        // SAFETY: as above (`T::IS_ACC`, interior, K a multiple of BK, phases inside K), each
        // PATH the block's layout as matched; a transposed B meets `transposed_b`'s terms.
        unsafe {
            match blk.layout() {
                AS_STORED => {
                    mainloop::<T, M, BM, BN, BK, PARTS, AS_STORED>(ab, mnk, blk, phases, finish)
                }
                TRANSPOSED_A => {
                    mainloop::<T, M, BM, BN, BK, PARTS, TRANSPOSED_A>(ab, mnk, blk, phases, finish)
                }
                _ => fragment_stages::transposed_b::<T, M, BM, BN, BK, PARTS>(
                    ab, mnk, blk, phases, finish,
                ),
            }
        };
        return;
    }
    if EDGES && T::IS_ACC && blk.aligned && blk.as_stored() {
        let phases = phases.unwrap_or((0, k.div_ceil(BK)));
        // SAFETY: `mainloop`'s EDGE terms: `T::IS_ACC`, an aligned block (`Block::aligned`) of
        // operands as stored (tested above); EDGE tests each group against m, n and k.
        unsafe { mainloop::<T, M, BM, BN, BK, PARTS, EDGE>(ab, mnk, blk, phases, finish) };
        return;
    }
    {
        let phases = phases.unwrap_or((0, k.div_ceil(BK)));
        // SAFETY: the CHECKED path asks only the entry points' terms (its loads are
        // bounds-checked); every thread calls it with the same arguments.
        unsafe {
            fragment_stages::mainloop::<T, M, BM, BN, BK, PARTS, CHECKED>(
                ab, mnk, blk, phases, finish,
            )
        };
    }
}

/// The asynchronous mainloop on unchecked path `PATH` (B as stored: [`AS_STORED`],
/// `TRANSPOSED_A` or [`EDGE`]).
///
/// # Safety
/// As the entry points, the launch providing `padded_stages(BK)` of shared memory; every
/// thread of the block calls it with the same arguments; `T::IS_ACC` (B is copied as
/// accumulators); on `AS_STORED` or `TRANSPOSED_A` an interior block of that layout, K a
/// multiple of BK and `p1 <= k / BK`; on `EDGE` an aligned block of operands as stored.
#[inline(always)]
unsafe fn mainloop<
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
    // SAFETY: the launch provides two padded stages of BK steps (`padded_stages(BK)`, the
    // contract), the `2 * (BK * (BM + PAD) + BK * BN)` accumulators `start` carves.
    let (tid, me, stages) = unsafe { fragment_stages::start::<T::Acc, M, BM, BN, BK>() };
    // B is of the accumulator type here (T::IS_ACC).
    let b_acc = b.cast::<T::Acc>();
    let mut acc = [[T::Acc::ZERO; 8]; 8];
    if p0 >= p1 {
        // No phases (K = 0): zeros (uniform: no barrier is skipped by part of the block).
        // `finish` in each path, as the epilogue was before stream-K shared this loop: with
        // one call after a merge, ptxas scheduled the f64 loop differently (more DFMAs reading
        // three fresh registers) and the f32 loop spilled more.
        finish(&acc);
        return;
    }

    // Prologue: the first stage (B asynchronously, A through registers), its first fragment.
    let first = stages.phase::<BK>(0);
    let k0 = p0 * BK;
    // SAFETY: `copy_b`'s and `fetch_part`'s terms are this fn's for the path (`k0 < k` on an
    // unchecked one: `p0 < p1 <= k / BK`); `first` is unread since the caller's last barrier
    // (or ever) until the wait and barrier below, as `copy_b` and `stash_part` need.
    unsafe {
        copy_b::<_, BM, BN, BK, PATH>(&first, b_acc, (blk, k0, tid, (n, k)));
        commit_group();
        let f = fetch_part::<T, BM, BN, BK, PATH>((a, b), (m, n, k), blk, k0, tid, (0, 1, false));
        stash_part::<_, BM, BN, BK, PATH>(&first, &f, (blk, tid), (0, 1, false));
    }
    wait_group::<0>();
    sync_threads();
    // SAFETY: `first` is complete: every thread's copies waited for and stores made before
    // the barrier above; nobody writes it before the next; `me` is in the thread grid.
    let mut frag = unsafe { Fragment::load::<BM, BN>(&first, 0, me) };
    // Mainloop: B copied and A loaded one phase ahead, fragments one K step ahead; two
    // phases per iteration, so which stage is which is a constant (no stage arithmetic, no
    // register moves at the back edge).
    let (s0, s1) = (stages.phase::<BK>(0), stages.phase::<BK>(1));
    let from = Loads::<T, PATH> {
        ab: (a, b),
        mnk: (m, n, k),
        blk,
        k0: 0,
        tid,
        with_b: false,
    };
    let mut phase = p0;
    while phase + 1 < p1 {
        // Two calls, not a loop over an array of stages: that array went to local memory.
        let (this, that) = ((phase, p1), (phase + 1, p1));
        // SAFETY: `one_phase`'s terms: this fn's path terms, every thread; `s0` complete (the
        // prologue's barrier or the last phase's) and unwritten, `s1` last read before it.
        frag = unsafe {
            one_phase::<T, BM, BN, BK, PARTS, PATH>(from, (&s0, &s1), &mut acc, frag, me, this)
        };
        // SAFETY: as above, the stages swapped: `s1` complete since the barrier that ended
        // the phase before, `s0` last read before that barrier.
        frag = unsafe {
            one_phase::<T, BM, BN, BK, PARTS, PATH>(from, (&s1, &s0), &mut acc, frag, me, that)
        };
        phase += 2;
    }
    if phase < p1 {
        let last = (phase, p1);
        // SAFETY: as above: an even number of phases done, so `s0` is the complete stage and
        // `s1` the one last read before the last barrier.
        frag = unsafe {
            one_phase::<T, BM, BN, BK, PARTS, PATH>(from, (&s0, &s1), &mut acc, frag, me, last)
        };
    }
    let _ = frag; // the read after the last barrier: of no use
    finish(&acc);
}

/// Phase `phase` of `phases`: starts the copy of B and the loads of A for the next phase
/// (if any) into `there`, multiplies out of `here`; returns the next phase's first fragment.
///
/// # Safety
/// As `mainloop` (its path's terms); `here` is complete and nobody writes it, `there` was
/// last read before the previous barrier; `me` is in the thread grid; every thread of the
/// block calls it.
#[inline(always)]
unsafe fn one_phase<
    T: Element,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PARTS: u32,
    const PATH: u32,
>(
    from: Loads<T, PATH>,
    (here, there): (&Stage<T::Acc>, &Stage<T::Acc>),
    acc: &mut ThreadTile<T::Acc>,
    frag: Fragment<T::Acc>,
    me: (u32, u32),
    (phase, phases): (u32, u32),
) -> Fragment<T::Acc> {
    let next = phase + 1 < phases;
    let loads = Loads {
        k0: (phase + 1) * BK,
        ..from
    };
    if next {
        // `there` was last read in phase - 1, before the previous barrier. B is of the
        // accumulator type here (T::IS_ACC).
        let b = from.ab.1.cast::<T::Acc>();
        let nk = (from.mnk.1, from.mnk.2);
        // SAFETY: `copy_b`'s terms from `mainloop`'s (B as stored, accumulators, the path's
        // block terms; `next`: phase + 1 < p1, so `loads.k0 < k`); `there` last read before
        // the previous barrier, read again only after `phase_steps`' wait and barrier.
        unsafe { copy_b::<_, BM, BN, BK, PATH>(there, b, (from.blk, loads.k0, from.tid, nk)) };
    }
    commit_group();
    // SAFETY: `phase_steps`' terms: `here` complete and unwritten, `there` last read before
    // the previous barrier (the contract); A's loads under `mainloop`'s path terms; every
    // thread calls it; the copies into `there` are waited for before its barrier.
    unsafe {
        phase_steps::<T, BM, BN, BK, PARTS, PATH>(
            (here, there),
            acc,
            frag,
            me,
            (next, loads),
            // This thread's copies of B have landed; the barrier then says everyone's have.
            wait_group::<0>,
        )
    }
}
