//! Whole rows of C per thread against every column of a strip: the body of the few-columns
//! kernels (`few_columns`, `few_columns_64`). A product with few columns reads A once and
//! meets each element of it with n elements of B, so a thread can own whole rows of C and
//! needs no partner lanes.
//!
//! A block of [`THREADS`] owns [`ROWS`] rows and a strip of columns of C, and a slice of K.
//! A reaches shared memory by `cp.async` (16-byte chunks, 8 lanes per 128-byte row
//! segment), and each thread reads its own rows of it as 16-byte runs of 4 K steps, while
//! the lanes of a column group read the same B row (a broadcast). The threads left over
//! after the rows and column groups split the stage's runs of K (K groups) and meet in
//! shared memory at the end. Slices of K (the grid's y) fill the SMs; each block writes
//! its slice's sums to the workspace, and the last of a strip to finish adds them in K
//! order (as `decode_async`), so the result does not depend on timing.
//!
//! A thread's rows are `rg, rg + row_groups, ...`, so that the 8 lanes of a 16-byte shared
//! access read 8 consecutive rows, 36 elements apart: distinct banks.
use crate::device::async_copy::{commit_group, pipeline, wait_group};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_dim_x, sync_threads, thread_idx_x};
use crate::device::vector::rows_in_chunks;
use crate::element::{Accumulator, Element};
use crate::parts::schedule::split_k_strips::strip_elements;

/// Threads of a block.
pub const THREADS: u32 = 128;
/// Rows of C per block.
pub const ROWS: u32 = 128;
/// K steps per stage, and stages: one in flight while one is read.
pub const KC: u32 = 32;
pub const STAGES: u32 = 2;
/// A's row length in shared memory: 4 elements of padding put 8 consecutive rows' 16-byte
/// runs in distinct banks (f32).
const A_LEN: u32 = KC + 4;

/// B's row length in shared memory for strips of `cols` columns (4 elements of padding).
pub const fn b_len(cols: u32) -> u32 {
    cols + 4
}

/// Elements of a stage: A's `ROWS x KC` and B's `KC x cols`, rows padded.
pub const fn stage(cols: u32) -> u32 {
    ROWS * A_LEN + KC * b_len(cols)
}

/// Shared accumulators for strips of `cols` columns: the stages, whose bytes later hold the
/// K groups' sums (each thread 64 f32 or 32 f64, that is 256 bytes), and 4 for the
/// last-block flag.
pub const fn shared(cols: u32) -> u32 {
    STAGES * stage(cols) + 4
}

/// Half of a thread's share of a strip's elements (the last block's adds).
pub const fn half(cols: u32) -> usize {
    strip_elements((ROWS, cols)) / THREADS as usize / 2
}

/// The first column of run `q` (4 columns) of column group `cg`'s `CT` columns: its own
/// `CT` columns in a row, or with `SPREAD` runs interleaved with the other groups', so that
/// the groups of a quarter warp read consecutive 16-byte runs of a B row (distinct banks,
/// where 16-column groups of a 64-column strip would meet 128 bytes apart).
#[inline(always)]
fn run_column<const CT: usize, const SPREAD: bool>(cg: u32, col_groups: u32, q: u32) -> u32 {
    match SPREAD {
        true => 4 * cg + 4 * col_groups * q,
        false => cg * CT as u32 + 4 * q,
    }
}

/// The stages of A and B in the launch's shared memory for strips of `cols` columns.
///
/// # Safety
/// The launch provides [`shared`]`(cols)` accumulators (at least as many elements of T).
#[inline(always)]
pub unsafe fn stages<T: Element>(cols: u32) -> (SharedTile<T>, SharedTile<T>) {
    // SAFETY: the caller's launch provides the region.
    let mut inputs = unsafe { SharedArena::<T>::launch_sized() };
    let a_stages = inputs.tile(STAGES * ROWS, A_LEN);
    let b_stages = inputs.tile(STAGES * KC, b_len(cols));
    (a_stages, b_stages)
}

/// The last-block flag, after the stages in the same region.
///
/// # Safety
/// As [`stages`].
#[inline(always)]
pub unsafe fn last_flag<A: Accumulator>(cols: u32) -> SharedTile<A> {
    // SAFETY: the same launch-sized region as accumulators: the stages and the 4-element flag.
    let mut arena = unsafe { SharedArena::<A>::launch_sized() };
    let _stages = arena.tile(STAGES, stage(cols));
    arena.tile(1, 4)
}

/// One block's slice: rows `row0..` and columns `col0..col0 + NC` of C (those inside),
/// K steps `k0..k1`, through the `stages`; a thread's tile is `R x CT` (rows `rg, rg +
/// row_groups, ...`; columns `cg CT..`, or with `SPREAD` its column group's runs of 4
/// interleaved with the others', [`run_column`]), over alternate runs of 4 K steps by its
/// K group. Returns the K groups' sums, `k_groups` tiles of `ROWS x NC` in shared memory
/// (in the stages' bytes), all in, `k_groups` and `NC`.
///
/// # Safety
/// As the kernel; every thread of the block calls it with the same parameters.
#[inline(always)]
pub unsafe fn slice<
    T: Element,
    const NC: usize,
    const CT: usize,
    const R: usize,
    const SPREAD: bool,
>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0, k0, k1): (u32, u32, u32, u32),
    (a_stages, b_stages): (&SharedTile<T>, &SharedTile<T>),
) -> (SharedTile<T::Acc>, u32, u32) {
    let (col_groups, row_groups) = ((NC / CT) as u32, ROWS / R as u32);
    let k_groups = THREADS / (col_groups * row_groups);
    let tid = thread_idx_x();
    let (cg, rg, kg) = (
        tid % col_groups,
        (tid / col_groups) % row_groups,
        tid / (col_groups * row_groups),
    );
    // Elements per 16-byte chunk, and whether A's and B's rows come in whole chunks.
    let per16 = (16 / size_of::<T>()) as u32;
    let (a_chunks, b_chunks) = (rows_in_chunks(a, k, k), rows_in_chunks(b, n, n));
    // Stage `s`: K steps `k0 + s KC..`, zeros past k1, m and n. The copies step by the
    // block's size as the launch has it: a loop, where unrolled copies each kept their own
    // address in registers through the mainloop.
    let stride = block_dim_x();
    let nc = NC as u32;
    let fill = |s: u32| {
        let slot = s % STAGES;
        let (a_s, b_s) = (
            a_stages.window(slot * ROWS, ROWS),
            b_stages.window(slot * KC, KC),
        );
        let kk = k0 + s * KC;
        // A's element `(r, c)` of the stage: whether inside, and where.
        let a_at = |r: u32, c: u32| {
            let (row, kc) = (row0 + r, kk + c);
            let inside = row < m && kc < k1;
            let at = row as usize * k as usize + kc as usize;
            (inside, if inside { a.wrapping_add(at) } else { a })
        };
        let b_at = |r: u32, c: u32| {
            let (kr, col) = (kk + r, col0 + c);
            let inside = kr < k1 && col < n;
            let at = kr as usize * n as usize + col as usize;
            (inside, if inside { b.wrapping_add(at) } else { b })
        };
        // Stages wholly inside K (all but a slice's last, at most), A's also inside M: one
        // pointer per operand (the checked copies' index arithmetic and predicates were a
        // third of the issue slots: Nsight Compute, f32 4096 x 63 x 4096, H200).
        let whole_k = kk + KC <= k1;
        let me = (tid, THREADS);
        // SAFETY: slot `s % STAGES` was last read before step s - 1's barrier and is read after
        // step s's wait and barrier (`pipeline`); the copies stay in the slot's windows and read A
        // and B only inside rows, `k0..k1` and columns, 16-byte aligned where chunked (K, N whole
        // chunks, `kk` a multiple of KC, buffers aligned: `rows_in_chunks`).
        unsafe {
            if whole_k && a_chunks && row0 + ROWS <= m {
                let from = a.wrapping_add(row0 as usize * k as usize + kk as usize);
                a_s.copy_rows(from, (ROWS, KC), (k as usize, KC), per16, me);
            } else {
                a_s.copy_each_or_zero((ROWS, KC), a_chunks, (tid, stride), a_at);
            }
            if whole_k {
                let from = b.wrapping_add(kk as usize * n as usize + col0 as usize);
                let per = if b_chunks { per16 } else { 1 };
                b_s.copy_rows(from, (KC, nc), (n as usize, n - col0), per, me);
            } else {
                b_s.copy_each_or_zero((KC, nc), b_chunks, (tid, stride), b_at);
            }
        }
        commit_group();
    };
    let steps = (k1 - k0).div_ceil(KC);
    let mut acc = [[T::Acc::ZERO; CT]; R];
    // The block's threads share the stages: they meet at each step.
    pipeline::<STAGES, { STAGES - 2 }>(steps, fill, sync_threads, |s| {
        let slot = s % STAGES;
        let (a_s, b_s) = (
            a_stages.window(slot * ROWS, ROWS),
            b_stages.window(slot * KC, KC),
        );
        let mut run = 4 * kg;
        while run < KC {
            let mut x = [[T::ZERO; 4]; R];
            for r in 0..R {
                // SAFETY: row `rg + row_groups r` < ROWS and columns `run..run + 4` <= KC < A_LEN,
                // 4-aligned; the slot has landed (wait and barrier) and is refilled only after the
                // next barrier.
                x[r] = unsafe { a_s.get4(rg + row_groups * r as u32, run) };
            }
            for u in 0..4 {
                for q in 0..CT / 4 {
                    let col = run_column::<CT, SPREAD>(cg, col_groups, q as u32);
                    // SAFETY: row `run + u` < KC and columns `col..col + 4` <= NC <= the strip's
                    // columns < B's row length, 4-aligned; as for A.
                    let w = unsafe { b_s.get4(run + u as u32, col) };
                    for r in 0..R {
                        for j in 0..4 {
                            acc[r][4 * q + j] =
                                acc[r][4 * q + j].mul_add(x[r][u].widen(), w[j].widen());
                        }
                    }
                }
            }
            run += 4 * k_groups;
        }
    });
    wait_group::<0>();
    sync_threads(); // every thread is done with the stages: the sums take their bytes
    // SAFETY: k_groups x ROWS x NC = THREADS x R CT accumulators, inside the stages.
    let sums = unsafe { SharedArena::<T::Acc>::launch_sized() }.tile(k_groups * ROWS, NC as u32);
    for r in 0..R {
        for q in 0..CT / 4 {
            let v = [0, 1, 2, 3].map(|j| acc[r][4 * q + j]);
            let (row, col) = (
                rg + row_groups * r as u32,
                run_column::<CT, SPREAD>(cg, col_groups, q as u32),
            );
            // SAFETY: the sums (`k_groups ROWS x NC` = THREADS R CT) fit in the stages, which
            // nobody reads any more (wait and barrier above); the 4-aligned run is this thread's
            // own, read only after the barrier below.
            unsafe { sums.set4(kg * ROWS + row, col, v) };
        }
    }
    sync_threads(); // every K group's sums are in
    (sums, k_groups, NC as u32)
}
