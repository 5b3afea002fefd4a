//! Decode products: a few rows of activations (M up to 16) times a large matrix of weights,
//! `C = A B` with A `m x k` small and B `k x n` large, as a language model's token-by-token
//! decoding computes them. Such a product is bound by reading B once: the tensor-core tiles
//! (128 rows) would be mostly padding, and `thin` reads B once per row of C. Here every
//! element of B is read once, for all rows of C at a time (16 per pass), at full width:
//! lane `l` owns 4 adjacent columns (one 8-byte load of B per K row), a block of 4 warps a
//! strip of 128 columns and a slice of K (its warps taking alternate K rows), and the grid
//! `ceil(n / 128)` strips by `splits` slices of K, enough blocks to keep every SM's loads in
//! flight. The warps' partial sums meet in shared memory; with more than one slice, each
//! block writes its sums to the workspace and a second launch (`decode_fixup_f32`) adds
//! the slices in K order, so the result does not depend on timing.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(n / 128) x splits` (`Problem::ctas`, from
//! the shape and the SM count: the schedule
//! [`split_k_fixup`](crate::parts::schedule::split_k_fixup)); shared `4 x 8 x 128` f32;
//! workspace `splits x m x n` f32 where `splits > 1`; f32, f16, bf16 (any compute
//! capability: SIMT).
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, Shared, Threads, Tile};
use crate::device::global::{load, load4, load4_or_zeros, store};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_dim_x, block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::device::vector::aligned4;
use crate::element::{Accumulator, Element};
use crate::element::{Bf16, Narrow};
use crate::parts::schedule::k_slice;
use crate::parts::schedule::split_k_fixup::add_slices;
use crate::problem::{Gemm, entry_points, kernel};

const WARPS: u32 = 4;
const THREADS: u32 = 32 * WARPS;
/// Columns per lane and per block.
const COLS: u32 = 4;
pub const STRIP: u32 = 32 * COLS;
/// Rows of C per pass over B: 8 x 4 accumulators a thread keep the registers (and so the
/// loads in flight per SM) where they should be; M from 9 to 16 takes two passes.
pub const ROWS: u32 = 8;
// No launch bounds: capped at 6 blocks per SM (85 registers) it spilled 548 bytes and ran slower
// at M >= 8; uncapped it takes 182 (A's loads of 8 K rows hoisted).
kernel! {
    SPEC = KernelSpec::new(("decode", file!()), "decode products (M <= 16): B read once per 8 rows of C, 8-byte loads 8 K rows ahead, K split over the warps of a block and over blocks (their slices added in K order by `decode_fixup_f32`)",
        Arch::Sm70, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: STRIP })
        .with_grid(Grid::SplitK { fixup: "decode_fixup" }).with_shared(Shared::Elements(WARPS * ROWS * STRIP))
        .with_elements(&[Elem::F32, Elem::F16, Elem::Bf16]).with_candidate(Candidate::WhenSideAtMost(16)).with_ptx(&[PtxFacts::all(&[Barriers(2)])]);
    fn decode;
    entries decode_f32: f32, decode_f16: f16, decode_bf16: Bf16, decode_f16_f16: Narrow<f16>, decode_bf16_bf16: Narrow<Bf16>;
}

/// K rows of B a lane loads before using them: 8 loads of 8 bytes in flight per thread.
const UNROLL: u32 = 8;

/// One pass: rows `row0..row0 + MR` (those below `m`) of this warp's K rows `k0..k1`, for
/// the lane's 4 columns from `col`; the sums go to rows `first_row + r` of `partials`, this
/// lane's columns.
///
/// # Safety
/// As the kernel; no other thread writes those elements of `partials` before a barrier.
#[inline(always)]
unsafe fn pass<T: Element, const MR: usize>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col, k0, k1): (u32, u32, u32, u32),
    vector: bool,
    (partials, first_row): (&SharedTile<T::Acc>, u32),
) {
    let mut acc = [[T::Acc::ZERO; COLS as usize]; MR];
    // Adds row kk of B (`w`) times A(row, kk) (`x`).
    let mut add = |r: usize, x: T, w: [T; 4]| {
        for j in 0..COLS as usize {
            acc[r][j] = acc[r][j].mul_add(x.widen(), w[j].widen());
        }
    };
    // A's rows in runs of 8 K steps as two 8-byte loads where they are aligned (k0 is a
    // multiple of 8), instead of 8 loads a row that the compiler hoisted into registers.
    let packed = k.is_multiple_of(4) && aligned4(a) && k0.is_multiple_of(4);
    let mut kk = k0;
    while kk + UNROLL <= k1 {
        // (Index loops: iterators over the array left it in local memory.)
        let mut w = [[T::ZERO; 4]; UNROLL as usize];
        for u in 0..UNROLL as usize {
            // SAFETY: B is `k x n` row-major (SPEC is not strided) and row kk + u < k1 <= k; with
            // `vector` the columns `col..col + 4` <= n are 4-aligned (N a multiple of 4, `b`
            // aligned).
            w[u] = unsafe { load4_or_zeros(b, (kk + u as u32, col), (k, n), vector) };
        }
        for r in 0..MR {
            let row = row0 + r as u32;
            if row >= m {
                continue;
            }
            let at = row as usize * k as usize + kk as usize;
            let mut x = [T::ZERO; UNROLL as usize];
            if packed {
                // SAFETY: row < m and kk + 8 <= k1 <= k, so both runs lie in A's row; with `packed`
                // K and `k0`, so `kk`, are multiples of 4 and `a` aligned: `at` is 4-aligned.
                let (lo, hi) = unsafe { (load4(a, at), load4(a, at + 4)) };
                for u in 0..4 {
                    (x[u], x[u + 4]) = (lo[u], hi[u]);
                }
            } else {
                for u in 0..UNROLL as usize {
                    // SAFETY: row < m and kk + u < kk + UNROLL <= k1 <= k: inside the row-major
                    // `m x k` A.
                    x[u] = unsafe { load(a, at + u) };
                }
            }
            for u in 0..UNROLL as usize {
                add(r, x[u], w[u]);
            }
        }
        kk += UNROLL;
    }
    while kk < k1 {
        // SAFETY: as above: row kk < k1 <= k, and `vector` as for the unrolled loads.
        let w = unsafe { load4_or_zeros(b, (kk, col), (k, n), vector) };
        for r in 0..MR {
            let row = row0 + r as u32;
            if row < m {
                add(
                    r,
                    // SAFETY: row < m (checked) and kk < k1 <= k: inside A.
                    unsafe { load(a, row as usize * k as usize + kk as usize) },
                    w,
                );
            }
        }
        kk += 1;
    }
    for r in 0..MR {
        for j in 0..COLS {
            let value = acc[r][j as usize];
            // SAFETY: row first_row + r < first_row + ROWS and column col % STRIP + j < STRIP; the
            // elements are this lane's alone (this fn's contract), read after the caller's barrier.
            unsafe { partials.set(first_row + r as u32, col % STRIP + j, value) };
        }
    }
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits).
#[inline(always)]
pub unsafe fn decode<T: Element>(g: Gemm<T>) {
    let (a, b, c, m, n, k) = g.plain();
    let splits = g.p.ctas.max(1);
    let (strip, split) = (block_idx_x(), block_idx_y());
    let (k_lo, k_hi) = k_slice(k, splits, split, UNROLL);
    let tid = thread_idx_x();
    let (warp, lane) = (tid / 32, tid % 32);
    // This warp's K rows: a contiguous quarter of the block's slice, from a multiple of 8
    // (so that A's runs of 8 stay aligned).
    let quarter = (k_hi - k_lo).div_ceil(WARPS).next_multiple_of(UNROLL);
    let k0 = (k_lo + warp * quarter).min(k_hi);
    let k1 = (k0 + quarter).min(k_hi);
    let col = strip * STRIP + lane * COLS;
    let vector = n.is_multiple_of(COLS) && aligned4(b) && col + COLS <= n;
    // SAFETY: the launch provides WARPS x ROWS x STRIP accumulators of shared memory.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let partials = arena.tile(WARPS * ROWS, STRIP);
    // This slice's plane of the workspace, where there are several.
    let plane = g
        .workspace
        .wrapping_add(split as usize * m as usize * n as usize);
    let mut row0 = 0;
    while row0 < m {
        let rows = (m - row0).min(ROWS);
        let here = (row0, col, k0, k1);
        let p = (&partials, warp * ROWS);
        let (ab, mnk) = ((a, b), (m, n, k));
        // SAFETY: the entry point's contract and SPEC's launch hold; `rows` is block-uniform; each
        // warp writes rows `warp ROWS..` of `partials` at its lanes' columns, whose last reads
        // ended at the barrier closing the previous pass.
        unsafe {
            match rows {
                1 => pass::<T, 1>(ab, mnk, here, vector, p),
                2 => pass::<T, 2>(ab, mnk, here, vector, p),
                3 | 4 => pass::<T, 4>(ab, mnk, here, vector, p),
                _ => pass::<T, 8>(ab, mnk, here, vector, p),
            }
        }
        sync_threads(); // every warp's sums are in
        for i in 0..ROWS * STRIP / THREADS {
            let e = tid + i * block_dim_x();
            let (r, cc) = (e / STRIP, e % STRIP);
            let (row, column) = (row0 + r, strip * STRIP + cc);
            if r < rows && column < n {
                let mut sum = T::Acc::ZERO;
                for w in 0..WARPS {
                    // SAFETY: w ROWS + r < WARPS ROWS and cc < STRIP; every warp's sums are in
                    // (barrier above), and none is written before the barrier below.
                    sum = sum + unsafe { partials.get(w * ROWS + r, cc) };
                }
                let at = row as usize * n as usize + column as usize;
                match splits {
                    // SAFETY: (row, column) is inside the row-major `m x n` C (checked); one thread
                    // per element, and with one slice one block per strip.
                    1 => unsafe { store(c, at, T::out(sum)) },
                    // SAFETY: `at` < m n in this slice's plane of the `splits x m x n` workspace
                    // (launch rules), this thread's alone; the fix-up reads it in the next launch.
                    _ => unsafe { store(plane, at, sum) },
                }
            }
        }
        sync_threads(); // before the next pass overwrites the sums
        row0 += ROWS;
    }
}

/// Adds the `splits` slices' sums of each element of C in K order and writes C.
///
/// # Safety
/// As [`add_slices`], after `decode` with the same problem.
#[inline(always)]
pub unsafe fn decode_fixup<T: Element>(g: Gemm<T>) {
    // SAFETY: the fix-up launch of `Grid::SplitK` (FIXUP_THREADS threads a block, `ceil(m n /
    // FIXUP_THREADS)` blocks) follows `decode`, which wrote every plane: `add_slices`' contract.
    unsafe { add_slices(g) }
}

// f16 and bf16 products accumulate in f32: one fix-up.
entry_points!(decode_fixup; decode_fixup_f32: f32, decode_fixup_f16_f16: Narrow<f16>, decode_fixup_bf16_bf16: Narrow<Bf16>);
