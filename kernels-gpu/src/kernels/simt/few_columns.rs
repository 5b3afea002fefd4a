//! Products with few columns (C `m x n`, n up to 32 per strip, m large): a matrix times a
//! few vectors. Such a product is bound by reading A once (`m x k`), and every element of A
//! meets only n elements of B: the tiled kernels' 128-column tiles are mostly padding, and
//! `stream_k_narrow_32`'s register tiles leave two warps per scheduler (latency-bound).
//!
//! Here a thread owns whole rows of C against all (up to 32) columns, so it needs no
//! partner lanes: A reaches shared memory by `cp.async` (16-byte chunks, 8 lanes per
//! 128-byte row segment), and each thread reads its own rows of it as 16-byte runs of 4 K
//! steps, while every lane of a warp reads the same B row (a broadcast). A block of 128
//! threads owns a strip of 128 rows and 32 columns of C and a slice of K; its threads split
//! into `KG` groups that take alternate runs of 4 K steps and meet in shared memory at the
//! end, so that each thread keeps 64 accumulators (f32; 32 in f64) whatever n. Slices of K
//! (the grid's y) fill the SMs; each block writes its slice's sums to the workspace, and the
//! last of a strip to finish adds them in K order (as `decode_async`), so the result does
//! not depend on timing and there is no second launch.
//!
//! How a thread's 64 accumulators cover the strip, by the columns the strip holds:
//!
//! | columns | thread tile | column groups | row groups | K groups |
//! |---------|-------------|---------------|------------|----------|
//! | 17-32   | 4 x 16      | 2             | 32         | 2        |
//! | 9-16    | 4 x 16      | 1             | 32         | 4        |
//! | 1-8     | 8 x 8       | 1             | 16         | 8        |
//!
//! (f64: half the rows per thread, twice the row groups, half the K groups.) A thread's
//! rows are `rg, rg + row_groups, ...`, so that the 8 lanes of a 16-byte shared access
//! read 8 consecutive rows, 36 elements apart: distinct banks.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 128) ceil(n / 32) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)); shared
//! [`SHARED`] accumulators; workspace (accumulator units) [`counters`] counters, zero at
//! launch, then `splits` planes of a strip's elements per strip where `splits > 1`; f32, f64
//! (compute capability 8.0+: `cp.async`).
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::device::async_copy::{commit_group, pipeline, wait_group};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_dim_x, sync_threads, thread_idx_x};
use crate::device::vector::rows_in_chunks;
use crate::element::{Accumulator, Element};
use crate::parts::schedule::split_k_strips::{StripBlock, StripSums, finish, strip_elements};
use crate::problem::{Gemm, kernel};

pub const THREADS: u32 = 128;
/// Rows and columns of C per block.
pub const ROWS: u32 = 128;
pub const COLS: u32 = 32;
/// Half of a thread's share of a strip's elements.
const HALF: usize = strip_elements((ROWS, COLS)) / THREADS as usize / 2;
/// K steps per stage, and stages: one in flight while one is read. Two stages of 23 KiB
/// (f32) let four blocks share an SM, as many as the registers allow (ptxas, sm_90a: 122 at
/// 4 blocks, no spill; uncapped an earlier build took 129); f64's 46 KiB stages leave two.
const KC: u32 = 32;
const STAGES: u32 = 2;
/// Row lengths in shared memory: 4 elements of padding put 8 consecutive rows' 16-byte
/// runs in distinct banks (f32).
const A_LEN: u32 = KC + 4;
const B_LEN: u32 = COLS + 4;
const STAGE: u32 = ROWS * A_LEN + KC * B_LEN;
/// Shared accumulators: the stages, whose bytes later hold the K groups' sums (each thread
/// 64 f32 or 32 f64, that is 256 bytes), and 4 for the last-block flag.
pub const SHARED: u32 = STAGES * STAGE + 4;
const _: () = assert!(THREADS * 64 <= STAGES * STAGE);

// The launch bounds: what the shared memory allows (see STAGES).
kernel! {
    SPEC = KernelSpec::new(("few_columns", file!()), "few columns (strips of 32): a thread owns whole rows of C against every column of its strip, A through shared memory by `cp.async` read as 16-byte runs, B rows broadcast; K split over thread groups and over blocks, the last block of a strip adding the slices in order",
        Arch::Sm80, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: COLS })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(4), f64: Some(2) })
        .with_elements(&[Elem::F32, Elem::F64]).with_candidate(Candidate::WhenColumnsAtMost(2 * COLS)).with_ptx(&[PtxFacts::all(&[Barriers(11)])]);
    fn few_columns;
    entries few_columns_f32: f32, few_columns_f64: f64;
}

/// One block's slice: rows `row0..` and columns `col0..col0 + NC` of C (those inside),
/// K steps `k0..k1`, through the `stages`; a thread's tile is `R x CT` (rows `rg, rg +
/// row_groups, ...`, columns `cg CT..`), over alternate runs of 4 K steps by its K group.
/// Returns the K groups' sums, `k_groups` tiles of `ROWS x NC` in shared memory (in the
/// stages' bytes), all in, `k_groups` and `NC`.
///
/// # Safety
/// As the kernel; every thread of the block calls it with the same parameters.
#[inline(always)]
unsafe fn slice<T: Element, const NC: usize, const CT: usize, const R: usize>(
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
                    // SAFETY: row `run + u` < KC and columns `cg CT + 4 q..+ 4` <= NC <= COLS <
                    // B_LEN, 4-aligned; as for A.
                    let w = unsafe { b_s.get4(run + u as u32, cg * CT as u32 + 4 * q as u32) };
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
            let (row, col) = (rg + row_groups * r as u32, cg * CT as u32 + 4 * q as u32);
            // SAFETY: the sums (`k_groups ROWS x NC` = THREADS R CT) fit in the stages, which
            // nobody reads any more (wait and barrier above); the 4-aligned run is this thread's
            // own, read only after the barrier below.
            unsafe { sums.set4(kg * ROWS + row, col, v) };
        }
    }
    sync_threads(); // every K group's sums are in
    (sums, k_groups, NC as u32)
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn few_columns<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let block = StripBlock::this(&g, (ROWS, COLS), KC);
    let ((row0, col0), (k0, k1)) = (block.origin, block.k);
    // SAFETY: the launch provides SHARED accumulators (at least as many elements of T).
    let mut inputs = unsafe { SharedArena::<T>::launch_sized() };
    let a_stages = inputs.tile(STAGES * ROWS, A_LEN);
    let b_stages = inputs.tile(STAGES * KC, B_LEN);
    // SAFETY: the same launch-sized region as accumulators: SHARED = the stages and the 4-element
    // flag carved below.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let _stages = arena.tile(STAGES, STAGE);
    let last_flag = arena.tile(1, 4);
    let wide = size_of::<T::Acc>() > 4;
    let here = (row0, col0, k0, k1);
    let (ab, mnk, st) = ((a, b), (m, n, k), (&a_stages, &b_stages));
    // The columns this strip holds: uniform over the block.
    let cols = (n - col0).min(COLS);
    // SAFETY: the entry point's contract and SPEC's launch (128 threads, SHARED accumulators) hold;
    // `cols` and `wide` are block-uniform, so every thread calls the same `slice` with the same
    // parameters.
    let (sums, k_groups, nc) = unsafe {
        match (cols, wide) {
            (17.., false) => slice::<T, 32, 16, 4>(ab, mnk, here, st),
            (9..=16, false) => slice::<T, 16, 16, 4>(ab, mnk, here, st),
            (_, false) => slice::<T, 8, 8, 8>(ab, mnk, here, st),
            (17.., true) => slice::<T, 32, 16, 2>(ab, mnk, here, st),
            (9..=16, true) => slice::<T, 16, 16, 2>(ab, mnk, here, st),
            (_, true) => slice::<T, 8, 8, 4>(ab, mnk, here, st),
        }
    };
    let sums = StripSums {
        tile: sums,
        parts: k_groups,
        rows: ROWS,
        cols: nc,
    };
    // SAFETY: the launch rules are `finish`'s (workspace, counters zero, 128 threads); the sums
    // are complete since `slice`'s final barrier; every thread gets here.
    unsafe { finish::<T, ROWS, COLS, THREADS, HALF>(&g, block, &sums, &last_flag) };
}
