//! Strips of f64 C narrow on one side, on the FP64 tensor cores: few rows (a layer's weights
//! B times a few vectors) or few columns (A times a few vectors). `mma.sync` m16n8k8's 16
//! rows run along the strip's long side and its 8 columns along the narrow one, so a strip
//! 17 wide costs 24 of work, not the 32 or 64 of the tile kernels. Few rows take the product
//! turned over, `C^T = B^T A^T` (B's rows, C's columns, on the `mma`'s rows); few columns
//! take it as it is (A's rows on the `mma`'s rows).
//!
//! A block owns a strip `NARROW` wide and [`LONG`] long, and a slice of K (the grid's y); the
//! long and the narrow operand reach shared memory by `cp.async` in three stages of 16 K
//! steps, and the last block of a strip to finish adds the slices in K order
//! (`split_k_strips::finish`), in one launch. A warp owns `16 WT` of the long side (`WT`
//! `mma` row tiles) against every 8-wide tile of the narrow side the strip holds: four warps
//! of two tiles, or eight of one, which keep half the accumulators where a strip is 64
//! wide. `dmma_few_rows` runs strips of 32 rows, `dmma_few_rows_64` strips of 64, and
//! `dmma_few_columns` and `dmma_few_columns_8_warps` strips of 64 columns.
//!
//! K is permuted inside each step of 8: a lane's two K steps `t` and `t + 4` are the
//! adjacent `2t` and `2t + 1`, the same in both operands (their sum is unchanged), so a lane
//! reads each K-major row as one 16-byte access. K-major rows are 24 elements apart (64
//! bytes of padding): the two rows a quarter warp reads fall in distinct banks. A long
//! operand stored along its long side (B as stored, `k x n`) is read an element at a time
//! from rows of 132, a narrow one (B as stored where C has few columns) from rows of the
//! strip's width and 2: both conflict-free.
use crate::device::async_copy::{commit_group, pipeline, wait_group};
use crate::device::mma::m16n8k8_f64;
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_dim_x, sync_threads, thread_idx_x};
use crate::device::vector::rows_in_chunks;
use crate::parts::schedule::split_k_strips::{StripBlock, StripSums, finish, strip_elements};
use crate::problem::{Gemm, TRANSPOSED_B};

/// The strip's long side: rows of C where it has few columns, columns where few rows.
pub const LONG: u32 = 128;
/// K steps per stage, and stages: two in flight while one is read.
const KC: u32 = 16;
const STAGES: u32 = 3;
/// K-major rows in shared memory: a stage's K steps and 8 of padding, so that rows are 64
/// bytes past a multiple of 128 apart. The long operand along its long side: rows of `LONG`
/// and 4.
const K_ROW: u32 = KC + 8;
const LONG_ROW: u32 = LONG + 4;
const LONG_STAGE: u32 = LONG * K_ROW;
const _: () = assert!(KC * LONG_ROW <= LONG_STAGE);

/// The narrow operand along its narrow side: rows of the strip's width and 2, so that the
/// K steps `2t` of a half warp's lanes fall 4 banks of f64 apart.
const fn narrow_row(narrow: u32) -> u32 {
    narrow + 2
}

/// A stage's f64 for strips `narrow` wide: the narrow operand's and the long one's.
const fn stage(narrow: u32) -> u32 {
    assert!(KC * narrow_row(narrow) <= narrow * K_ROW);
    narrow * K_ROW + LONG_STAGE
}

/// Shared f64 for strips `narrow` wide: the stages, whose bytes later hold the strip's sums,
/// and 4 for the last-block flag.
pub const fn shared(narrow: u32) -> u32 {
    assert!(strip_elements((narrow, LONG)) as u32 <= STAGES * stage(narrow));
    STAGES * stage(narrow) + 4
}

/// Threads of a block whose warps own `warp_tiles` `mma` row tiles each.
pub const fn threads(warp_tiles: u32) -> u32 {
    LONG / (16 * warp_tiles) * 32
}

/// Half of a thread's share of a strip `narrow` wide ([`finish`]'s `HALF`).
pub const fn half(narrow: u32, threads: u32) -> usize {
    strip_elements((narrow, LONG)) / threads as usize / 2
}

/// A strip's rows and columns of C: `narrow x LONG` where C has few rows, `LONG x narrow`
/// where it has few columns (the kernel's tile).
pub const fn strip(narrow: u32, few_columns: bool) -> (u32, u32) {
    match few_columns {
        false => (narrow, LONG),
        true => (LONG, narrow),
    }
}

/// What a block's slice reads: the narrow and the long operand, the narrow and long sides
/// of C and K, its first element of each side and its K steps `(narrow0, long0, k0, k1)`,
/// and the stages of the narrow and the long operand.
pub(crate) type SliceOf<'s> = (
    (*const f64, *const f64),
    (u32, u32, u32),
    (u32, u32, u32, u32),
    (&'s SharedTile<f64>, &'s SharedTile<f64>),
);

/// One block's slice: the `8 NT` elements of the narrow side from `narrow0` (zeros past
/// it), the `LONG` of the long side from `long0`, K steps `k0..k1`, through the stages of a
/// strip `NARROW` wide, in warps of `WT` row tiles. The long operand is K-major (rows of K
/// steps) where `LONG_K`, else stored along its long side (`k x` long); the same for the
/// narrow operand and `NARROW_K`. Returns the strip's sums in shared memory (in the stages'
/// bytes), all in: `8 NT x LONG`, or `LONG x 8 NT` where `FEW_COLUMNS` (C's orientation).
///
/// # Safety
/// As [`product`]; `8 NT <= NARROW`; every thread of the block calls it with the same
/// parameters, those `product` gives the kernel's choice of slice.
#[inline(always)]
pub(crate) unsafe fn slice<
    const NARROW: u32,
    const NT: usize,
    const WT: usize,
    const LONG_K: bool,
    const NARROW_K: bool,
    const FEW_COLUMNS: bool,
>(
    ((narrow, long), (narrow_dim, long_dim, k), (narrow0, long0, k0, k1), (n_stages, l_stages)): SliceOf,
) -> SharedTile<f64> {
    let width = 8 * NT as u32;
    #[cfg(not(target_arch = "nvptx64"))]
    assert!(width <= NARROW, "{width} wide in a strip of {NARROW}");
    let threads = threads(WT as u32);
    let tid = thread_idx_x();
    let (warp, lane) = (tid / 32, tid % 32);
    let (g, t) = (lane / 4, lane % 4);
    let n_chunks = match NARROW_K {
        true => rows_in_chunks(narrow, k, k),
        false => rows_in_chunks(narrow, narrow_dim, narrow_dim),
    };
    let l_chunks = match LONG_K {
        true => rows_in_chunks(long, k, k),
        false => rows_in_chunks(long, long_dim, long_dim),
    };
    // Stage `s`: K steps `k0 + s KC..`, zeros past k1 and the sides. Whole stages of the long
    // operand (inside K and the long side, in 16-byte chunks) step one pointer down its rows;
    // the others, and the narrow operand's few rows, are copied element by element of their
    // chunks with checks.
    let stride = block_dim_x();
    let me = (tid, threads);
    let fill = |s: u32| {
        let slot = s % STAGES;
        let kk = k0 + s * KC;
        let whole = kk + KC <= k1 && l_chunks && long0 + LONG <= long_dim;
        // The narrow operand's `(i, kc)` (its side's element `narrow0 + i`, K step `kk + kc`).
        let n_at = |i: u32, kc: u32| {
            let (i, kc) = (narrow0 + i, kk + kc);
            let inside = i < narrow_dim && kc < k1;
            let at = match NARROW_K {
                true => i as usize * k as usize + kc as usize,
                false => kc as usize * narrow_dim as usize + i as usize,
            };
            (
                inside,
                if inside {
                    narrow.wrapping_add(at)
                } else {
                    narrow
                },
            )
        };
        // SAFETY: slot `s % STAGES` was last read before step s - 1's barrier and is read after
        // step s's wait and barrier (`pipeline`); the copies stay in the slot's windows and read
        // the operands only inside their sides and `k0..k1`, 16-byte aligned where chunked (K
        // and the sides whole chunks, `kk` a multiple of KC, buffers aligned: `rows_in_chunks`).
        unsafe {
            if NARROW_K {
                let n_s = n_stages.window(slot * NARROW, NARROW);
                n_s.copy_each_or_zero((width, KC), n_chunks, (tid, stride), n_at);
            } else {
                let n_s = n_stages.window(slot * KC, KC);
                let at = |kc: u32, i: u32| n_at(i, kc);
                n_s.copy_each_or_zero((KC, width), n_chunks, (tid, stride), at);
            }
            if LONG_K {
                let l_s = l_stages.window(slot * LONG, LONG);
                if whole {
                    let from = long.wrapping_add(long0 as usize * k as usize + kk as usize);
                    l_s.copy_rows(from, (LONG, KC), (k as usize, KC), 2, me);
                } else {
                    // The long operand's row `long0 + r`, K step `kk + c`.
                    let l_at = |r: u32, c: u32| {
                        let (r, kc) = (long0 + r, kk + c);
                        let inside = r < long_dim && kc < k1;
                        let at = r as usize * k as usize + kc as usize;
                        (inside, if inside { long.wrapping_add(at) } else { long })
                    };
                    l_s.copy_each_or_zero((LONG, KC), l_chunks, (tid, stride), l_at);
                }
            } else {
                let l_s = l_stages.window(slot * KC, KC);
                if whole {
                    let from = long.wrapping_add(kk as usize * long_dim as usize + long0 as usize);
                    l_s.copy_rows(from, (KC, LONG), (long_dim as usize, LONG), 2, me);
                } else {
                    let l_at = |r: u32, c: u32| {
                        let (kr, c) = (kk + r, long0 + c);
                        let inside = kr < k1 && c < long_dim;
                        let at = kr as usize * long_dim as usize + c as usize;
                        (inside, if inside { long.wrapping_add(at) } else { long })
                    };
                    l_s.copy_each_or_zero((KC, LONG), l_chunks, (tid, stride), l_at);
                }
            }
        }
        commit_group();
    };
    let steps = (k1 - k0).div_ceil(KC);
    let mut acc = [[[0.0; 4]; NT]; WT];
    // The block's threads share the stages: they meet at each step.
    pipeline::<STAGES, { STAGES - 2 }>(steps, fill, sync_threads, |s| {
        let slot = s % STAGES;
        let n_s = match NARROW_K {
            true => n_stages.window(slot * NARROW, NARROW),
            false => n_stages.window(slot * KC, KC),
        };
        for step in 0..KC / 8 {
            // This lane's K steps `t` and `t + 4` of the `mma`: the stage's `kq` and `kq + 1`.
            let kq = 8 * step + 2 * t;
            // The `mma`s' A: long elements `c` and `c + 8`, K steps kq and kq + 1.
            let mut w = [[0.0; 4]; WT];
            for (tile, w) in w.iter_mut().enumerate() {
                let c = warp * 16 * WT as u32 + 16 * tile as u32 + g;
                // SAFETY: `c + 8` < LONG and `kq + 1` < KC inside the slot's long operand
                // (`LONG x K_ROW`, or `KC x LONG_ROW`), `kq` and K_ROW even for the pair;
                // the slot has landed (wait and barrier) and is refilled only after the next
                // barrier.
                *w = unsafe {
                    match LONG_K {
                        true => {
                            let l_s = l_stages.window(slot * LONG, LONG);
                            let (lo, hi) = (l_s.get2(c, kq), l_s.get2(c + 8, kq));
                            [lo[0], hi[0], lo[1], hi[1]]
                        }
                        false => {
                            let l_s = l_stages.window(slot * KC, KC);
                            [
                                l_s.get(kq, c),
                                l_s.get(kq, c + 8),
                                l_s.get(kq + 1, c),
                                l_s.get(kq + 1, c + 8),
                            ]
                        }
                    }
                };
            }
            for r in 0..NT {
                // The `mma`'s B: narrow element `8 r + g`, K steps kq and kq + 1.
                let i = 8 * r as u32 + g;
                // SAFETY: i < 8 NT <= NARROW and `kq + 1` < KC in the slot's narrow operand
                // (`NARROW x K_ROW`, or `KC x (NARROW + 2)`), landed as the long one's.
                let x = unsafe {
                    match NARROW_K {
                        true => n_s.get2(i, kq),
                        false => [n_s.get(kq, i), n_s.get(kq + 1, i)],
                    }
                };
                for tile in 0..WT {
                    acc[tile][r] = m16n8k8_f64(w[tile], x, acc[tile][r]);
                }
            }
        }
    });
    wait_group::<0>();
    sync_threads(); // every thread is done with the stages: the sums take their bytes
    // SAFETY: 8 NT x LONG <= NARROW LONG accumulators, inside the stages (`shared`).
    let mut arena = unsafe { SharedArena::<f64>::launch_sized() };
    let sums = match FEW_COLUMNS {
        false => arena.tile(width, LONG),
        true => arena.tile(LONG, width),
    };
    for tile in 0..WT {
        for r in 0..NT {
            // D's (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1): long by narrow.
            let (i, c) = (
                8 * r as u32 + 2 * t,
                warp * 16 * WT as u32 + 16 * tile as u32 + g,
            );
            let d = acc[tile][r];
            // SAFETY: i + 1 < 8 NT and c + 8 < LONG in the sums, which nobody reads as
            // stages any more (wait and barrier above); the elements are this lane's own,
            // read only after the barrier below.
            unsafe {
                match FEW_COLUMNS {
                    false => {
                        sums.set(i, c, d[0]);
                        sums.set(i + 1, c, d[1]);
                        sums.set(i, c + 8, d[2]);
                        sums.set(i + 1, c + 8, d[3]);
                    }
                    true => {
                        sums.set(c, i, d[0]);
                        sums.set(c, i + 1, d[1]);
                        sums.set(c + 8, i, d[2]);
                        sums.set(c + 8, i + 1, d[3]);
                    }
                }
            }
        }
    }
    sync_threads(); // every warp's sums are in
    sums
}

/// A kernel's choice of [`slice`] for a strip's width.
pub(crate) trait Strips {
    /// The slice for a strip holding `tiles` tiles of 8 on its narrow side, B stored `n x k`
    /// where `b_t`: [`slice`] with `8 NT` at least that wide and at most the kernel's strip,
    /// and the kernel's warps and orientation.
    ///
    /// # Safety
    /// As [`slice`], whose parameters `s` are.
    unsafe fn slice(tiles: u32, b_t: bool, s: SliceOf) -> SharedTile<f64>;
}

/// Strips 64 wide, their width taken in pairs of tiles (16): the slice for 2, 4, 6 or 8
/// tiles of 8, on warps of `WT` row tiles, few columns where `FEW_COLUMNS`.
pub(crate) struct PairsOfTiles<const WT: usize, const FEW_COLUMNS: bool>;

/// [`PairsOfTiles`]' slice of `NT` tiles, B stored `n x k` where `B_T`.
///
/// # Safety
/// As [`slice`]; the strip is 64 wide.
#[inline(always)]
unsafe fn pairs<const NT: usize, const WT: usize, const B_T: bool, const FC: bool>(
    s: SliceOf,
) -> SharedTile<f64> {
    // Few rows: A is the narrow operand (K-major), B the long one; few columns: B is narrow,
    // A long (K-major).
    // SAFETY: `slice`'s contract: this fn's, 8 NT <= 64.
    unsafe {
        match (FC, B_T) {
            (false, true) => slice::<64, NT, WT, true, true, false>(s),
            (false, false) => slice::<64, NT, WT, false, true, false>(s),
            (true, true) => slice::<64, NT, WT, true, true, true>(s),
            (true, false) => slice::<64, NT, WT, true, false, true>(s),
        }
    }
}

impl<const WT: usize, const FEW_COLUMNS: bool> Strips for PairsOfTiles<WT, FEW_COLUMNS> {
    #[inline(always)]
    unsafe fn slice(tiles: u32, b_t: bool, s: SliceOf) -> SharedTile<f64> {
        // SAFETY: `pairs`' contract is this fn's, and in every arm at least the width of the
        // tiles; the kernels that name these slices run strips 64 wide.
        unsafe {
            match (tiles, b_t) {
                (..=2, true) => pairs::<2, WT, true, FEW_COLUMNS>(s),
                (3..=4, true) => pairs::<4, WT, true, FEW_COLUMNS>(s),
                (5..=6, true) => pairs::<6, WT, true, FEW_COLUMNS>(s),
                (_, true) => pairs::<8, WT, true, FEW_COLUMNS>(s),
                (..=2, false) => pairs::<2, WT, false, FEW_COLUMNS>(s),
                (3..=4, false) => pairs::<4, WT, false, FEW_COLUMNS>(s),
                (5..=6, false) => pairs::<6, WT, false, FEW_COLUMNS>(s),
                (_, false) => pairs::<8, WT, false, FEW_COLUMNS>(s),
            }
        }
    }
}

/// The product of a kernel on strips `NARROW` wide (`HALF` = [`half`]`(NARROW, THREADS)`),
/// of few columns where `FEW_COLUMNS`, else few rows: each block carves the stages, takes
/// its strip's slice (`S::slice` for the strip's width in tiles of 8 and B's layout), and
/// finishes the strip.
///
/// # Safety
/// See the entry points; the launch follows the kernel's launch rules: `THREADS` threads,
/// grid of the strips of [`strip`]`(NARROW, FEW_COLUMNS)` over C `x splits`
/// (`Problem::ctas` = splits), [`shared`]`(NARROW)` f64, the workspace's counters zero; C
/// dense, A row-major, B row-major or stored `n x k` (`Problem::layout`).
#[inline(always)]
pub(crate) unsafe fn product<
    S: Strips,
    const NARROW: u32,
    const THREADS: u32,
    const HALF: usize,
    const FEW_COLUMNS: bool,
>(
    g: Gemm<f64>,
) {
    let (a, b, _, m, n, k) = g.plain();
    let block = StripBlock::this(&g, strip(NARROW, FEW_COLUMNS), KC);
    let ((row0, col0), (k0, k1)) = (block.origin, block.k);
    let b_t = g.p.layout & TRANSPOSED_B != 0;
    // Few rows: A is narrow and K-major, B long; few columns: B is narrow, A long and K-major.
    let (ptrs, (narrow_dim, long_dim), (narrow0, long0), (narrow_k, long_k)) = match FEW_COLUMNS {
        false => ((a, b), (m, n), (row0, col0), (true, b_t)),
        true => ((b, a), (n, m), (col0, row0), (b_t, true)),
    };
    // SAFETY: the launch provides `shared(NARROW)` f64.
    let mut inputs = unsafe { SharedArena::<f64>::launch_sized() };
    let n_stages = match narrow_k {
        true => inputs.tile(STAGES * NARROW, K_ROW),
        false => inputs.tile(STAGES * KC, narrow_row(NARROW)),
    };
    let l_stages = match long_k {
        true => inputs.tile(STAGES * LONG, K_ROW),
        false => inputs.tile(STAGES * KC, LONG_ROW),
    };
    // SAFETY: the same launch-sized region: `shared(NARROW)` = the stages and the 4-element
    // flag carved below.
    let mut arena = unsafe { SharedArena::<f64>::launch_sized() };
    let _stages = arena.tile(STAGES, stage(NARROW));
    let last_flag = arena.tile(1, 4);
    // The strip's width in tiles of 8: uniform over the block.
    let tiles = (narrow_dim - narrow0).min(NARROW).div_ceil(8);
    let (sides, here, st) = (
        (narrow_dim, long_dim, k),
        (narrow0, long0, k0, k1),
        (&n_stages, &l_stages),
    );
    // SAFETY: `slice`'s contract: this fn's, every thread of the block calling it with the
    // same parameters (`tiles` and `b_t` are uniform over the block).
    let sums = unsafe { S::slice(tiles, b_t, (ptrs, sides, here, st)) };
    let (rows, cols) = match FEW_COLUMNS {
        false => (8 * tiles, LONG),
        true => (LONG, 8 * tiles),
    };
    let sums = StripSums {
        tile: sums,
        parts: 1,
        rows,
        cols,
    };
    // SAFETY: the launch rules are `finish`'s (workspace, counters zero, THREADS threads); the
    // sums are complete since the slice's final barrier; every thread gets here.
    unsafe {
        match FEW_COLUMNS {
            false => finish::<f64, NARROW, LONG, THREADS, HALF>(&g, block, &sums, &last_flag),
            true => finish::<f64, LONG, NARROW, THREADS, HALF>(&g, block, &sums, &last_flag),
        }
    }
}
