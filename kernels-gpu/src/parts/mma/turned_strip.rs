//! Few rows of f64 on the FP64 tensor cores, the product turned over, `C^T = B^T A^T`:
//! `mma.sync` m16n8k8's 16 rows are 16 columns of C (B's rows where B is stored `n x k`),
//! its 8 columns 8 rows of C, so a strip of 17 rows costs 24 rows of work, not 32. A block
//! of 4 warps owns a strip of `ROWS` rows and [`COLS`] columns of C and a slice of K (the
//! grid's y); B and A reach shared memory by `cp.async` in three stages of 16 K steps, and
//! the last block of a strip to finish adds the slices in K order
//! (`split_k_strips::finish`), in one launch. A warp owns 32 columns (two `mma` row tiles)
//! against every 8-row tile the strip holds. `dmma_few_rows` runs strips of 32 rows,
//! `dmma_few_rows_64` strips of 64, which read B once where C has 33-64 rows.
//!
//! K is permuted inside each step of 8: a lane's two K steps `t` and `t + 4` are the
//! adjacent `2t` and `2t + 1`, the same in both operands (their sum is unchanged), so a lane
//! reads each K-major row as one 16-byte access. K-major rows are 24 elements apart (64
//! bytes of padding): the two rows a quarter warp reads fall in distinct banks. B as stored
//! (`k x n`) is read an element at a time from rows of 132, conflict-free.
use crate::device::async_copy::{commit_group, pipeline, wait_group};
use crate::device::mma::m16n8k8_f64;
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_dim_x, sync_threads, thread_idx_x};
use crate::device::vector::rows_in_chunks;
use crate::parts::schedule::split_k_strips::{StripBlock, StripSums, finish, strip_elements};
use crate::problem::{Gemm, TRANSPOSED_B};

pub const THREADS: u32 = 128;
/// Columns of C per block; per warp (two `mma` row tiles).
pub const COLS: u32 = 128;
const WARP_COLS: u32 = COLS / (THREADS / 32);
/// K steps per stage, and stages: two in flight while one is read.
const KC: u32 = 16;
const STAGES: u32 = 3;
/// K-major rows in shared memory: a stage's K steps and 8 of padding, so that rows are 64
/// bytes past a multiple of 128 apart. B as stored: rows of `COLS` and 4, in B's bytes.
const K_ROW: u32 = KC + 8;
const N_ROW: u32 = COLS + 4;
const B_STAGE: u32 = COLS * K_ROW;
const _: () = assert!(KC * N_ROW <= B_STAGE);

/// A stage's f64 for strips of `rows`: A's rows and B's.
const fn stage(rows: u32) -> u32 {
    rows * K_ROW + B_STAGE
}

/// Shared f64 for strips of `rows`: the stages, whose bytes later hold the strip's sums, and
/// 4 for the last-block flag.
pub const fn shared(rows: u32) -> u32 {
    assert!(strip_elements((rows, COLS)) as u32 <= STAGES * stage(rows));
    STAGES * stage(rows) + 4
}

/// Half of a thread's share of a strip of `rows`' elements ([`finish`]'s `HALF`).
pub const fn half(rows: u32) -> usize {
    strip_elements((rows, COLS)) / THREADS as usize / 2
}

/// What a block's slice reads: A and B, the shape, its rows and columns of C and K steps
/// `(row0, col0, k0, k1)`, and the stages of A and B.
pub(crate) type SliceOf<'s> = (
    (*const f64, *const f64),
    (u32, u32, u32),
    (u32, u32, u32, u32),
    (&'s SharedTile<f64>, &'s SharedTile<f64>),
);

/// One block's slice: the `8 NT` rows from `row0` (zeros past `m`) and the `COLS` columns
/// from `col0` of C, K steps `k0..k1`, through the stages of a `ROWS`-row strip; B stored
/// `n x k` where `B_T`, else `k x n`. Returns the strip's sums, `8 NT x COLS` in shared
/// memory (in the stages' bytes), all in.
///
/// # Safety
/// As [`product`]; `8 NT <= ROWS`; every thread of the block calls it with the same
/// parameters, those `product` gives the kernel's choice of slice.
#[inline(always)]
pub(crate) unsafe fn slice<const ROWS: u32, const NT: usize, const B_T: bool>(
    ((a, b), (m, n, k), (row0, col0, k0, k1), (a_stages, b_stages)): SliceOf,
) -> SharedTile<f64> {
    let rows = 8 * NT as u32;
    #[cfg(not(target_arch = "nvptx64"))]
    assert!(rows <= ROWS, "{rows} rows in a strip of {ROWS}");
    let tid = thread_idx_x();
    let (warp, lane) = (tid / 32, tid % 32);
    let (g, t) = (lane / 4, lane % 4);
    let a_chunks = rows_in_chunks(a, k, k);
    let b_chunks = match B_T {
        true => rows_in_chunks(b, k, k),
        false => rows_in_chunks(b, n, n),
    };
    // Stage `s`: K steps `k0 + s KC..`, zeros past k1, m and n. Whole stages of B (inside K
    // and N, in 16-byte chunks) step one pointer down B's rows; the others, and A's few
    // rows, are copied element by element of their chunks with checks.
    let stride = block_dim_x();
    let me = (tid, THREADS);
    let fill = |s: u32| {
        let slot = s % STAGES;
        let kk = k0 + s * KC;
        let whole = kk + KC <= k1 && b_chunks && col0 + COLS <= n;
        let a_s = a_stages.window(slot * ROWS, ROWS);
        let a_at = |r: u32, c: u32| {
            let (row, kc) = (row0 + r, kk + c);
            let inside = row < m && kc < k1;
            let at = row as usize * k as usize + kc as usize;
            (inside, if inside { a.wrapping_add(at) } else { a })
        };
        // SAFETY: slot `s % STAGES` was last read before step s - 1's barrier and is read after
        // step s's wait and barrier (`pipeline`); the copies stay in the slot's windows and read A
        // and B only inside rows, `k0..k1` and columns, 16-byte aligned where chunked (K, N whole
        // chunks, `kk` a multiple of KC, buffers aligned: `rows_in_chunks`).
        unsafe {
            a_s.copy_each_or_zero((rows, KC), a_chunks, (tid, stride), a_at);
            if B_T {
                let b_s = b_stages.window(slot * COLS, COLS);
                if whole {
                    let from = b.wrapping_add(col0 as usize * k as usize + kk as usize);
                    b_s.copy_rows(from, (COLS, KC), (k as usize, KC), 2, me);
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
                if whole {
                    let from = b.wrapping_add(kk as usize * n as usize + col0 as usize);
                    b_s.copy_rows(from, (KC, COLS), (n as usize, COLS), 2, me);
                } else {
                    let b_at = |r: u32, c: u32| {
                        let (kr, col) = (kk + r, col0 + c);
                        let inside = kr < k1 && col < n;
                        let at = kr as usize * n as usize + col as usize;
                        (inside, if inside { b.wrapping_add(at) } else { b })
                    };
                    b_s.copy_each_or_zero((KC, COLS), b_chunks, (tid, stride), b_at);
                }
            }
        }
        commit_group();
    };
    let steps = (k1 - k0).div_ceil(KC);
    let mut acc = [[[0.0; 4]; NT]; 2];
    // The block's threads share the stages: they meet at each step.
    pipeline::<STAGES, { STAGES - 2 }>(steps, fill, sync_threads, |s| {
        let slot = s % STAGES;
        let a_s = a_stages.window(slot * ROWS, ROWS);
        for step in 0..KC / 8 {
            // This lane's K steps `t` and `t + 4` of the `mma`: the stage's `kq` and `kq + 1`.
            let kq = 8 * step + 2 * t;
            // The `mma`s' A: columns `c` and `c + 8` of C (B's), K steps kq and kq + 1.
            let mut w = [[0.0; 4]; 2];
            for (tile, w) in w.iter_mut().enumerate() {
                let c = warp * WARP_COLS + 16 * tile as u32 + g;
                // SAFETY: `c + 8` < COLS and `kq + 1` < KC inside the slot's B (`COLS x K_ROW`,
                // or `KC x N_ROW` as stored), `kq` and K_ROW even for the pair; the slot has
                // landed (wait and barrier) and is refilled only after the next barrier.
                *w = unsafe {
                    match B_T {
                        true => {
                            let b_s = b_stages.window(slot * COLS, COLS);
                            let (lo, hi) = (b_s.get2(c, kq), b_s.get2(c + 8, kq));
                            [lo[0], hi[0], lo[1], hi[1]]
                        }
                        false => {
                            let b_s = b_stages.window(slot * KC, KC);
                            [
                                b_s.get(kq, c),
                                b_s.get(kq, c + 8),
                                b_s.get(kq + 1, c),
                                b_s.get(kq + 1, c + 8),
                            ]
                        }
                    }
                };
            }
            for r in 0..NT {
                // The `mma`'s B: row `8 r + g` of the strip (A's), K steps kq and kq + 1.
                // SAFETY: row < 8 NT <= ROWS and `kq + 1` < KC in the slot's A, landed as B's.
                let x = unsafe { a_s.get2(8 * r as u32 + g, kq) };
                for tile in 0..2 {
                    acc[tile][r] = m16n8k8_f64(w[tile], x, acc[tile][r]);
                }
            }
        }
    });
    wait_group::<0>();
    sync_threads(); // every thread is done with the stages: the sums take their bytes
    // SAFETY: 8 NT x COLS <= ROWS COLS accumulators, inside the stages (`shared`).
    let sums = unsafe { SharedArena::<f64>::launch_sized() }.tile(rows, COLS);
    for tile in 0..2 {
        for r in 0..NT {
            // D's (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1): columns of C by rows.
            let (row, col) = (
                8 * r as u32 + 2 * t,
                warp * WARP_COLS + 16 * tile as u32 + g,
            );
            let d = acc[tile][r];
            // SAFETY: row + 1 < 8 NT and col + 8 < COLS in the sums, which nobody reads as
            // stages any more (wait and barrier above); the elements are this lane's own,
            // read only after the barrier below.
            unsafe {
                sums.set(row, col, d[0]);
                sums.set(row + 1, col, d[1]);
                sums.set(row, col + 8, d[2]);
                sums.set(row + 1, col + 8, d[3]);
            }
        }
    }
    sync_threads(); // every warp's sums are in
    sums
}

/// A kernel's choice of [`slice`] for a strip's rows.
pub(crate) trait Strips {
    /// The slice for a strip holding `tiles` tiles of 8 rows, B stored `n x k` where `b_t`:
    /// [`slice`] with `8 NT` at least those rows and at most the kernel's strip.
    ///
    /// # Safety
    /// As [`slice`], whose parameters `s` are.
    unsafe fn slice(tiles: u32, b_t: bool, s: SliceOf) -> SharedTile<f64>;
}

/// The product of a kernel on strips of `ROWS` rows (`HALF` = [`half`]`(ROWS)`): each block
/// carves the stages, takes its strip's slice (`S::slice` for the strip's rows in tiles of 8
/// and B's layout), and finishes the strip.
///
/// # Safety
/// See the entry points; the launch follows the kernel's launch rules: [`THREADS`] threads,
/// grid `ceil(m / ROWS) ceil(n / COLS) x splits` (`Problem::ctas` = splits), [`shared`]
/// `(ROWS)` f64, the workspace's counters zero; C dense, A row-major, B row-major or stored
/// `n x k` (`Problem::layout`).
#[inline(always)]
pub(crate) unsafe fn product<S: Strips, const ROWS: u32, const HALF: usize>(g: Gemm<f64>) {
    let (a, b, _, m, n, k) = g.plain();
    let block = StripBlock::this(&g, (ROWS, COLS), KC);
    let ((row0, col0), (k0, k1)) = (block.origin, block.k);
    // SAFETY: the launch provides `shared(ROWS)` f64.
    let mut inputs = unsafe { SharedArena::<f64>::launch_sized() };
    let b_t = g.p.layout & TRANSPOSED_B != 0;
    let a_stages = inputs.tile(STAGES * ROWS, K_ROW);
    let b_stages = match b_t {
        true => inputs.tile(STAGES * COLS, K_ROW),
        false => inputs.tile(STAGES * KC, N_ROW),
    };
    // SAFETY: the same launch-sized region: `shared(ROWS)` = the stages and the 4-element
    // flag carved below.
    let mut arena = unsafe { SharedArena::<f64>::launch_sized() };
    let _stages = arena.tile(STAGES, stage(ROWS));
    let last_flag = arena.tile(1, 4);
    // The rows this strip holds, in tiles of 8: uniform over the block.
    let tiles = (m - row0).min(ROWS).div_ceil(8);
    let (ab, mnk, here, st) = (
        (a, b),
        (m, n, k),
        (row0, col0, k0, k1),
        (&a_stages, &b_stages),
    );
    // SAFETY: `slice`'s contract: this fn's, every thread of the block calling it with the
    // same parameters (`tiles` and `b_t` are uniform over the block).
    let sums = unsafe { S::slice(tiles, b_t, (ab, mnk, here, st)) };
    let sums = StripSums {
        tile: sums,
        parts: 1,
        rows: 8 * tiles,
        cols: COLS,
    };
    // SAFETY: the launch rules are `finish`'s (workspace, counters zero, THREADS threads); the
    // sums are complete since the slice's final barrier; every thread gets here.
    unsafe { finish::<f64, ROWS, COLS, THREADS, HALF>(&g, block, &sums, &last_flag) };
}
