//! The decode mainloop on the tensor cores: a warp streams 16 K rows at a time of its block's
//! 256-column strip through three `cp.async` stages, `ldmatrix.trans` turns them into B
//! fragments for `mma.sync` m16n8k16 on up to 16 rows of C, A's fragments from global memory.
//! `decode_mma` runs it, and `decode_tma` where TMA cannot read the operands.
use crate::device::async_copy::{pipeline, wait_group};
use crate::device::global::{load, load4_or_zeros};
use crate::device::ldmatrix;
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, sync_warp, thread_idx_x};
use crate::device::vector::aligned16;
use crate::element::Half;
use crate::parts::decode::stream::fill_stage;
use crate::parts::schedule::decode_split::{STRIP, THREADS, WARPS, warp_share};
use crate::parts::schedule::split_k::{PASS_ROWS, Slices};
use crate::problem::Gemm;
/// K rows per stage: one `mma` K step.
const STAGE_ROWS: u32 = 16;
const STAGES: u32 = 3;
/// A stage's row in shared memory: the strip and 16 bytes of padding.
const ROW: u32 = STRIP + 8;
/// Rows of C per pass over B: one `mma` tile's.
pub const ROWS: u32 = PASS_ROWS;
/// Column tiles of 8 per warp.
const TILES: usize = (STRIP / 8) as usize;
/// Shared accumulators: the pipelines (`WARPS x STAGES x STAGE_ROWS x ROW` 16-bit
/// elements), whose bytes later hold the warps' sums (`WARPS x ROWS x STRIP`); 4 for the
/// last-block flag.
pub(crate) const PIPES: u32 = WARPS * STAGES * STAGE_ROWS * ROW / 2;
const _: () = assert!(WARPS * ROWS * STRIP <= PIPES);

/// A's fragment for the K step from `kq`: rows `row0 + g (+ 8)`, columns `kq + 2t (+ 1, + 8,
/// + 9)`, zero past `m` and `k1`.
///
/// # Safety
/// `a` holds `m x k` elements.
#[inline(always)]
unsafe fn a_fragment<T: Half>(
    a: *const T,
    (m, k): (u32, u32),
    (row0, kq, k1): (u32, u32, u32),
    lane: u32,
) -> [u32; 4] {
    let (g, t) = (lane / 4, lane % 4);
    let bits = |row: u32, col: u32| -> u32 {
        if row < m && col < k1 {
            // SAFETY: `load`'s point: row < m and col < k1 <= k (`product` clamps k1 to k; this
            // contract does not say so), so inside the m x k A that `a` holds.
            let x = unsafe { load(a, row as usize * k as usize + col as usize) };
            x.bits16() as u32
        } else {
            0
        }
    };
    let pair = |row: u32, col: u32| bits(row, col) | (bits(row, col + 1) << 16);
    let (r0, r1, c0) = (row0 + g, row0 + g + 8, kq + 2 * t);
    [
        pair(r0, c0),
        pair(r1, c0),
        pair(r0, c0 + 8),
        pair(r1, c0 + 8),
    ]
}

/// This warp's share of one pass: rows `row0..row0 + 16` of C (zeros past `m`), the
/// strip's 256 columns from `col0`, K rows `k0..k1`, through the warp's `pipe`; the sums go
/// to rows `ROWS warp..` of `sums`, which shares the pipelines' bytes (hence the barrier).
///
/// # Safety
/// As the kernel; every thread of the block calls it.
#[inline(always)]
unsafe fn pass<T: Half>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0, k0, k1): (u32, u32, u32, u32),
    (pipe, lane): (&SharedTile<T>, u32),
    (sums, warp): (&SharedTile<T::Acc>, u32),
) {
    let mut acc = [[0.0; 4]; TILES];
    // One K step of 16 from the stage at row `slot` of the pipe.
    let mut step = |slot: u32, kq: u32| {
        // SAFETY: `a_fragment`'s point: `a` is the product's m x k A (the kernel's contract), and
        // k1 <= k as `product` computes it.
        let af = unsafe { a_fragment(a, (m, k), (row0, kq, k1), lane) };
        // Matrices (K 0-7, tile j), (K 8-15, tile j), (K 0-7, tile j + 1), (K 8-15, tile
        // j + 1), transposed: B's fragments of tiles j and j + 1.
        let (r8, half) = (lane % 8 + 8 * ((lane / 8) % 2), 8 * (lane / 16));
        for j in (0..TILES).step_by(2) {
            let row = pipe.row16(slot + r8, 8 * j as u32 + half);
            // SAFETY: `x4_trans`'s points: `row16` puts the 16 bytes in the warp's pipe (rows slot
            // + r8, 16-aligned: 528-byte rows, column 8 j + half), landed and met at `sync_warp`
            // before this step; constant `j` steps: the whole warp.
            let r = unsafe { ldmatrix::x4_trans(row) };
            acc[j] = T::mma_m16n8k16(af, [r[0], r[1]], acc[j]);
            acc[j + 1] = T::mma_m16n8k16(af, [r[2], r[3]], acc[j + 1]);
        }
    };
    let steps = (k1 - k0).div_ceil(STAGE_ROWS);
    let col = col0 + lane * 8;
    if n.is_multiple_of(8) && aligned16(b) {
        // One stage: this lane's 16-byte chunk of 16 K rows, zeros past `k1` and `n`.
        // SAFETY: n % 8 == 0 and B 16-aligned (the branch); the slot's readers met at
        // `sync_warp` before `pipeline` refills it.
        let fill = |s| unsafe {
            fill_stage::<T, STAGES, STAGE_ROWS>(pipe, b, (k0, k1, n), (col, lane), s)
        };
        // The warp's lanes share the stages: they meet at each step.
        pipeline::<STAGES, { STAGES - 2 }>(steps, fill, sync_warp, |s| {
            step((s % STAGES) * STAGE_ROWS, k0 + s * STAGE_ROWS)
        });
        wait_group::<0>();
    } else {
        // B's rows are not whole 16-byte chunks (N not a multiple of 8, or B misaligned):
        // one stage at a time, filled by plain loads (zeros outside B).
        for s in 0..steps {
            let kk = k0 + s * STAGE_ROWS;
            sync_warp(); // every lane is done with the last step's rows
            let mut r = 0;
            while r < STAGE_ROWS {
                for h in 0..2 {
                    // SAFETY: `load4_or_zeros` without `vector`: b holds k x n >= k1 x n elements
                    // (k1 <= k), and each element is checked inside.
                    let four = unsafe { load4_or_zeros(b, (kk + r, col + 4 * h), (k1, n), false) };
                    // SAFETY: `set4`'s points: (r < 16, lane 8 + 4 h + 4 <= 256) in the pipe's
                    // 264-wide rows, this lane's own; the warp-private pipe is unread until the
                    // `sync_warp` below.
                    unsafe { pipe.set4(r, lane * 8 + 4 * h, four) };
                }
                r += 1;
            }
            sync_warp(); // every lane's rows are in
            step(0, kk);
        }
    }
    sync_threads(); // every warp is done with its pipeline: the sums take its bytes
    let (g, t) = (lane / 4, lane % 4);
    for j in 0..TILES {
        for h in 0..2 {
            let row = warp * ROWS + g + 8 * h as u32;
            let col = 8 * j as u32 + 2 * t;
            // SAFETY: `set`'s points: row < WARPS ROWS and col < STRIP in `sums`, this lane's
            // element; the barrier above ended every read of these bytes as pipes.
            unsafe { sums.set(row, col, acc[j][2 * h]) };
            // SAFETY: as above, column col + 1 < STRIP.
            unsafe { sums.set(row, col + 1, acc[j][2 * h + 1]) };
        }
    }
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn product<T: Half>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let splits = g.p.ctas.max(1);
    let (strip, split) = (block_idx_x(), block_idx_y());
    let tid = thread_idx_x();
    let (warp, lane) = (tid / 32, tid % 32);
    let (k0, k1) = warp_share(k, (splits, split), warp, STAGE_ROWS);
    // SAFETY: the launch provides PIPES + 4 accumulators; the sums fit in the pipelines'
    // bytes (checked above), which they use at other times (barriers between).
    let pipes = unsafe { SharedArena::<T>::launch_sized() }.tile(WARPS * STAGES * STAGE_ROWS, ROW);
    // SAFETY: as above: `sums`, the rest of the pipes' words and the flag carved below make PIPES +
    // 4 accumulators; `sums` aliases `pipes` only between barriers.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let sums = arena.tile(WARPS * ROWS, STRIP);
    let _pipes = arena.tile(PIPES / STRIP - WARPS * ROWS, STRIP);
    let last_flag = arena.tile(1, 4);
    let pipe = pipes.window(warp * STAGES * STAGE_ROWS, STAGES * STAGE_ROWS);
    let mut row0 = 0;
    while row0 < m {
        let here = (row0, strip * STRIP, k0, k1);
        // SAFETY: `pass`'s points: the kernel's contract, and every thread of the block runs this
        // loop (its bounds are the launch's).
        unsafe { pass::<T>((a, b), (m, n, k), here, (&pipe, lane), (&sums, warp)) };
        let slices = Slices::of(&g, ROWS); // made here: held across the pass, it spilled
        // SAFETY: `finish`'s points: the kernel's launch rules (this contract); every thread calls
        // it, after `pass` wrote `sums`.
        unsafe {
            slices.finish::<ROWS, WARPS, THREADS>((row0, (m - row0).min(ROWS)), &sums, &last_flag)
        };
        row0 += ROWS;
    }
}
