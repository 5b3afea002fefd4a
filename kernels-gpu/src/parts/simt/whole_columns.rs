//! Whole columns of C per thread against every row of a strip, B stored `n x k`: the body of
//! the few-rows kernels (`few_rows`, `few_rows_64`), `whole_rows` turned over. Such a
//! product is bound by reading B once, and every element of B meets only m elements of A,
//! so a thread can own whole columns of C and needs no partner lanes.
//!
//! B's rows (C's columns, K contiguous) reach shared memory by `cp.async` as 16-byte chunks,
//! and each thread reads its own columns of them as 16-byte runs of 4 K steps, while the
//! lanes of a row group read the same run of A (a broadcast). A block of [`THREADS`] owns
//! a strip of rows and [`COLS`] columns of C and a slice of K; the threads left over after
//! the row and column groups split the stage's runs of K (K groups) and meet in shared
//! memory at the end. Slices of K (the grid's y) fill the SMs; the last block of a strip to
//! finish adds them in K order (`split_k_strips::finish`), so the result does not depend on
//! timing, in one launch.
//!
//! A thread's columns are `cg, cg + column_groups, ...`, so that the 8 lanes of a 16-byte
//! shared access read 8 consecutive rows of B, each padded by 16 bytes: distinct banks. B as
//! stored (`k x n`) is read too, for the plain product: its stage is `KC x COLS`, read an
//! element at a time.
use crate::device::async_copy::{commit_group, pipeline, wait_group};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_dim_x, sync_threads, thread_idx_x};
use crate::device::vector::rows_in_chunks;
use crate::element::{Accumulator, Element};
use crate::parts::schedule::split_k_strips::strip_elements;

/// Threads of a block.
pub const THREADS: u32 = 128;
/// Columns of C per block.
pub const COLS: u32 = 128;
/// K steps per stage, and stages: one in flight while one is read.
pub const KC: u32 = 32;
pub const STAGES: u32 = 2;
/// Row lengths in shared memory, at most: 16 bytes of padding (4 f32, 2 f64) put 8
/// consecutive rows' 16-byte runs in distinct banks. B as stored: `KC` rows of `COLS` and
/// the padding, in the same bytes.
const A_LEN: u32 = KC + 4;
const B_LEN: u32 = KC + 4;
const B_STORED_LEN: u32 = COLS + 4;
const B_STAGE: u32 = COLS * B_LEN;
const _: () = assert!(KC * B_STORED_LEN <= B_STAGE);

/// Elements of a stage for strips of `rows` rows: A's `rows x KC` and B's `COLS x KC` (or
/// `KC x COLS`), rows padded.
pub const fn stage(rows: u32) -> u32 {
    rows * A_LEN + B_STAGE
}

/// Shared accumulators for strips of `rows` rows: the stages, whose bytes later hold the K
/// groups' sums (each thread 64 f32 or 32 f64, that is 256 bytes), and 4 for the last-block
/// flag.
pub const fn shared(rows: u32) -> u32 {
    STAGES * stage(rows) + 4
}

/// Half of a thread's share of a strip's elements (the last block's adds).
pub const fn half(rows: u32) -> usize {
    strip_elements((rows, COLS)) / THREADS as usize / 2
}

/// The stages of A and B in the launch's shared memory for strips of `rows` rows, B's as
/// stored `n x k` where `b_t`, else `k x n`.
///
/// # Safety
/// The launch provides [`shared`]`(rows)` accumulators (at least as many elements of T).
#[inline(always)]
pub unsafe fn stages<T: Element>(rows: u32, b_t: bool) -> (SharedTile<T>, SharedTile<T>) {
    // SAFETY: the caller's launch provides the region.
    let mut inputs = unsafe { SharedArena::<T>::launch_sized() };
    let pad = (16 / size_of::<T>()) as u32;
    let a_stages = inputs.tile(STAGES * rows, KC + pad);
    let b_stages = match b_t {
        true => inputs.tile(STAGES * COLS, KC + pad),
        false => inputs.tile(STAGES * KC, COLS + pad),
    };
    (a_stages, b_stages)
}

/// The last-block flag, after the stages in the same region.
///
/// # Safety
/// As [`stages`].
#[inline(always)]
pub unsafe fn last_flag<A: Accumulator>(rows: u32) -> SharedTile<A> {
    // SAFETY: the same launch-sized region as accumulators: the stages and the 4-element flag.
    let mut arena = unsafe { SharedArena::<A>::launch_sized() };
    let _stages = arena.tile(STAGES, stage(rows));
    arena.tile(1, 4)
}

/// One block's slice: rows `row0..` (those inside; `SR` rows a strip) and columns `col0..col0
/// + COLS` of C, K steps `k0..k1`, through the `stages`; a thread's tile is `R x CT` (rows `rg R..`,
/// columns `cg, cg + column_groups, ...`), over alternate runs of 4 K steps by its K group;
/// B stored `n x k` where `B_T`, else `k x n`. Returns the K groups' sums, `k_groups` tiles
/// of `NR x COLS` in shared memory (in the stages' bytes), all in, `k_groups` and `NR`.
///
/// # Safety
/// As the kernel; every thread of the block calls it with the same parameters.
#[inline(always)]
pub unsafe fn slice<
    T: Element,
    const SR: u32,
    const NR: usize,
    const R: usize,
    const CT: usize,
    const B_T: bool,
>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0, k0, k1): (u32, u32, u32, u32),
    (a_stages, b_stages): (&SharedTile<T>, &SharedTile<T>),
) -> (SharedTile<T::Acc>, u32, u32) {
    let (row_groups, col_groups) = ((NR / R) as u32, COLS / CT as u32);
    let k_groups = THREADS / (col_groups * row_groups);
    let tid = thread_idx_x();
    let (cg, rg, kg) = (
        tid % col_groups,
        (tid / col_groups) % row_groups,
        tid / (col_groups * row_groups),
    );
    // Elements per 16-byte chunk, and whether A's and B's rows come in whole chunks.
    let per16 = (16 / size_of::<T>()) as u32;
    let a_chunks = rows_in_chunks(a, k, k);
    let b_chunks = match B_T {
        true => rows_in_chunks(b, k, k),
        false => rows_in_chunks(b, n, n),
    };
    // Stage `s`: K steps `k0 + s KC..`, zeros past k1, m and n. The copies step by the
    // block's size as the launch has it: a loop, where unrolled copies each kept their own
    // address in registers through the mainloop.
    let stride = block_dim_x();
    let fill = |s: u32| {
        let slot = s % STAGES;
        let a_s = a_stages.window(slot * SR, SR);
        let kk = k0 + s * KC;
        // A's element `(r, c)` of the stage: whether inside, and where.
        let a_at = |r: u32, c: u32| {
            let (row, kc) = (row0 + r, kk + c);
            let inside = row < m && kc < k1;
            let at = row as usize * k as usize + kc as usize;
            (inside, if inside { a.wrapping_add(at) } else { a })
        };
        // Stages wholly inside K (all but a slice's last, at most), B's also inside N: one
        // pointer per operand, as `few_columns` (per-copy index arithmetic is issue slots).
        let whole_k = kk + KC <= k1;
        let me = (tid, THREADS);
        // SAFETY: slot `s % STAGES` was last read before step s - 1's barrier and is read after
        // step s's wait and barrier (`pipeline`); the copies stay in the slot's windows and read A
        // and B only inside rows, `k0..k1` and columns, 16-byte aligned where chunked (K, N whole
        // chunks, `kk` a multiple of KC, buffers aligned: `rows_in_chunks`).
        unsafe {
            a_s.copy_each_or_zero((NR as u32, KC), a_chunks, (tid, stride), a_at);
            if B_T {
                let b_s = b_stages.window(slot * COLS, COLS);
                if whole_k && b_chunks && col0 + COLS <= n {
                    let from = b.wrapping_add(col0 as usize * k as usize + kk as usize);
                    b_s.copy_rows(from, (COLS, KC), (k as usize, KC), per16, me);
                } else {
                    // B's row `col0 + r` (C's column), K step `kk + c`.
                    let b_at = |r: u32, c: u32| {
                        let (col, kc) = (col0 + r, kk + c);
                        let inside = col < n && kc < k1;
                        let at = col as usize * k as usize + kc as usize;
                        (inside, if inside { b.wrapping_add(at) } else { b })
                    };
                    b_s.copy_each_or_zero((COLS, KC), b_chunks, (tid, stride), b_at);
                }
            } else {
                let b_s = b_stages.window(slot * KC, KC);
                let b_at = |r: u32, c: u32| {
                    let (kr, col) = (kk + r, col0 + c);
                    let inside = kr < k1 && col < n;
                    let at = kr as usize * n as usize + col as usize;
                    (inside, if inside { b.wrapping_add(at) } else { b })
                };
                b_s.copy_each_or_zero((KC, COLS), b_chunks, (tid, stride), b_at);
            }
        }
        commit_group();
    };
    let steps = (k1 - k0).div_ceil(KC);
    let mut acc = [[T::Acc::ZERO; CT]; R];
    // The block's threads share the stages: they meet at each step.
    pipeline::<STAGES, { STAGES - 2 }>(steps, fill, sync_threads, |s| {
        let slot = s % STAGES;
        let a_s = a_stages.window(slot * SR, SR);
        let mut run = 4 * kg;
        while run < KC {
            // This thread's columns of B: 4 K steps each.
            let mut w = [[T::ZERO; 4]; CT];
            for j in 0..CT {
                let col = cg + col_groups * j as u32;
                // SAFETY: `col` < COLS and K steps `run..run + 4` <= KC inside the slot's B
                // (`COLS x KC` and padding, or `KC x COLS` as stored), 4-aligned where read as a
                // run; the slot has landed (wait and barrier) and is refilled only after the
                // next barrier.
                w[j] = unsafe {
                    match B_T {
                        true => b_stages.window(slot * COLS, COLS).get4(col, run),
                        false => {
                            let b_s = b_stages.window(slot * KC, KC);
                            [0, 1, 2, 3].map(|u| b_s.get(run + u, col))
                        }
                    }
                };
            }
            for r in 0..R {
                // SAFETY: row `rg R + r` < NR <= SR and K steps `run..run + 4` <= KC,
                // 4-aligned; as for B. Every lane of the row group reads it: a broadcast.
                let x = unsafe { a_s.get4(rg * R as u32 + r as u32, run) };
                for u in 0..4 {
                    for j in 0..CT {
                        acc[r][j] = acc[r][j].mul_add(x[u].widen(), w[j][u].widen());
                    }
                }
            }
            run += 4 * k_groups;
        }
    });
    wait_group::<0>();
    sync_threads(); // every thread is done with the stages: the sums take their bytes
    // SAFETY: k_groups x NR x COLS = THREADS x R CT accumulators, inside the stages.
    let sums = unsafe { SharedArena::<T::Acc>::launch_sized() }.tile(k_groups * NR as u32, COLS);
    for r in 0..R {
        for j in 0..CT {
            let (row, col) = (rg * R as u32 + r as u32, cg + col_groups * j as u32);
            // SAFETY: the sums (`k_groups NR x COLS` = THREADS R CT) fit in the stages, which
            // nobody reads any more (wait and barrier above); the element is this thread's
            // own, read only after the barrier below.
            unsafe { sums.set(kg * NR as u32 + row, col, acc[r][j]) };
        }
    }
    sync_threads(); // every K group's sums are in
    (sums, k_groups, NR as u32)
}
