//! Products with few rows (C `m x n`, m up to 32 per strip, n large) and B stored `n x k`,
//! as a layer's weights are: a few vectors times a matrix. Such a product is bound by
//! reading B once, and every element of B meets only m elements of A: the tiled kernels'
//! register tiles there leave two warps per scheduler, and their transposing shared stores
//! conflict (f32 64 x 8192 x 4096 with B transposed ran `stream_k_64` at half of cuBLAS).
//!
//! `few_columns` turned over: a thread owns whole columns of C against all (up to 32) rows
//! of its strip. B's rows (C's columns, K contiguous) reach shared memory by `cp.async` as
//! 16-byte chunks, and each thread reads its own columns of them as 16-byte runs of 4 K
//! steps, while every lane of a warp reads the same run of A (a broadcast). A block of 128
//! threads owns a strip of 32 rows and 128 columns of C and a slice of K; its threads split
//! into `KG` groups that take alternate runs of 4 K steps and meet in shared memory at the
//! end, so that each thread keeps 64 accumulators (f32; 32 in f64) whatever m. Slices of K
//! (the grid's y) fill the SMs; the last block of a strip to finish adds them in K order
//! (`split_k_strips::finish`), so the result does not depend on timing, in one launch.
//!
//! How a thread's 64 accumulators cover the strip, by the rows the strip holds:
//!
//! | rows  | thread tile (rows x columns) | row groups | column groups | K groups |
//! |-------|------------------------------|------------|---------------|----------|
//! | 17-32 | 16 x 4                       | 2          | 32            | 2        |
//! | 9-16  | 16 x 4                       | 1          | 32            | 4        |
//! | 1-8   | 8 x 8                        | 1          | 16            | 8        |
//!
//! (f64: half the columns per thread, twice the column groups, half the K groups.) A
//! thread's columns are `cg, cg + column_groups, ...`, so that the 8 lanes of a 16-byte
//! shared access read 8 consecutive rows of B, each padded by 16 bytes: distinct banks.
//!
//! B as stored (`k x n`) is read too, for the plain product: its stage is `KC x 128`, read
//! an element at a time (the rule keeps `stream_k_32`/`stream_k_64` there).
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(m / 32) ceil(n / 128) x splits`
//! (`Problem::ctas`, [`splits`](crate::parts::schedule::split_k_strips::splits)); shared
//! [`SHARED`] accumulators; workspace (accumulator units) the split's counters, zero at
//! launch, then `splits` planes of a strip's elements per strip where `splits > 1`; f32,
//! f64 (compute capability 8.0+: `cp.async`).
use crate::catalogue::PtxFact::{Barriers, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::device::async_copy::{commit_group, pipeline, wait_group};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_dim_x, sync_threads, thread_idx_x};
use crate::device::vector::rows_in_chunks;
use crate::element::{Accumulator, Element};
use crate::parts::schedule::split_k_strips::{StripBlock, StripSums, finish, strip_elements};
use crate::problem::{Gemm, TRANSPOSED_B, kernel};

pub const THREADS: u32 = 128;
/// Rows and columns of C per block.
pub const ROWS: u32 = 32;
pub const COLS: u32 = 128;
/// Half of a thread's share of a strip's elements.
const HALF: usize = strip_elements((ROWS, COLS)) / THREADS as usize / 2;
/// K steps per stage, and stages: one in flight while one is read (23 KiB a stage in f32:
/// four blocks share an SM; f64's 46 KiB two).
const KC: u32 = 32;
const STAGES: u32 = 2;
/// Row lengths in shared memory, at most: 16 bytes of padding (4 f32, 2 f64) put 8
/// consecutive rows' 16-byte runs in distinct banks. B as stored: `KC` rows of `COLS` and
/// the padding, in the same bytes.
const A_LEN: u32 = KC + 4;
const B_LEN: u32 = KC + 4;
const B_STORED_LEN: u32 = COLS + 4;
const B_STAGE: u32 = COLS * B_LEN;
const STAGE: u32 = ROWS * A_LEN + B_STAGE;
/// Shared accumulators: the stages, whose bytes later hold the K groups' sums (each thread
/// 64 f32 or 32 f64, that is 256 bytes), and 4 for the last-block flag.
pub const SHARED: u32 = STAGES * STAGE + 4;
const _: () = assert!(THREADS * 64 <= STAGES * STAGE && KC * B_STORED_LEN <= B_STAGE);

/// The most rows of C `matmul`'s automatic choice considers it for: eight strips (f32 with
/// B stored `n x k` ran 256 rows at 73-90% of cuBLAS, against 58-87% before, on an H200).
pub const MOST_ROWS: u32 = 8 * ROWS;

// The launch bounds: what the shared memory allows (see STAGES).
kernel! {
    SPEC = KernelSpec::new(("few_rows", file!()), "few rows (strips of 32) with B stored n x k: a thread owns whole columns of C against every row of its strip, B through shared memory by `cp.async` read as 16-byte runs of K, A's runs broadcast; K split over thread groups and over blocks, the last block of a strip adding the slices in order",
        Arch::Sm80, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: COLS })
        .with_grid(Grid::SplitKStrips).with_shared(Shared::Elements(SHARED)).with_blocks_per_sm(PerAcc { f32: Some(4), f64: Some(2) })
        .with_elements(&[Elem::F32, Elem::F64]).with_candidate(Candidate::WhenSideAtMost(MOST_ROWS)).with_b_transposed()
        .with_ptx(&[PtxFacts::all(&[Barriers(14), Has("cp.async.cg.shared.global"), Has("atom.acq_rel.gpu.global.add.u32"), Lacks(".local")])]);
    fn few_rows;
    entries few_rows_f32: f32, few_rows_f64: f64;
}

/// One block's slice: rows `row0..` (those inside) and columns `col0..col0 + COLS` of C,
/// K steps `k0..k1`, through the `stages`; a thread's tile is `R x CT` (rows `rg R..`,
/// columns `cg, cg + column_groups, ...`), over alternate runs of 4 K steps by its K group;
/// B stored `n x k` where `B_T`, else `k x n`. Returns the K groups' sums, `k_groups` tiles
/// of `NR x COLS` in shared memory (in the stages' bytes), all in, `k_groups` and `NR`.
///
/// # Safety
/// As the kernel; every thread of the block calls it with the same parameters.
#[inline(always)]
unsafe fn slice<T: Element, const NR: usize, const R: usize, const CT: usize, const B_T: bool>(
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
        let a_s = a_stages.window(slot * ROWS, ROWS);
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
        let a_s = a_stages.window(slot * ROWS, ROWS);
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
                // SAFETY: row `rg R + r` < NR <= ROWS and K steps `run..run + 4` <= KC,
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

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn few_rows<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let block = StripBlock::this(&g, (ROWS, COLS), KC);
    let ((row0, col0), (k0, k1)) = (block.origin, block.k);
    // SAFETY: the launch provides SHARED accumulators (at least as many elements of T).
    let mut inputs = unsafe { SharedArena::<T>::launch_sized() };
    let pad = (16 / size_of::<T>()) as u32;
    let b_t = g.p.layout & TRANSPOSED_B != 0;
    let a_stages = inputs.tile(STAGES * ROWS, KC + pad);
    let b_stages = match b_t {
        true => inputs.tile(STAGES * COLS, KC + pad),
        false => inputs.tile(STAGES * KC, COLS + pad),
    };
    // SAFETY: the same launch-sized region as accumulators: SHARED = the stages and the 4-element
    // flag carved below.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let _stages = arena.tile(STAGES, STAGE);
    let last_flag = arena.tile(1, 4);
    let wide = size_of::<T::Acc>() > 4;
    let here = (row0, col0, k0, k1);
    let (ab, mnk, st) = ((a, b), (m, n, k), (&a_stages, &b_stages));
    // The rows this strip holds: uniform over the block.
    let rows = (m - row0).min(ROWS);
    // SAFETY: the entry point's contract and SPEC's launch (128 threads, SHARED accumulators) hold;
    // `rows`, `wide` and `b_t` are block-uniform, so every thread calls the same `slice` with the
    // same parameters; B's layout is the problem's (dense, row-major or `n x k`: the spec).
    let (sums, k_groups, nr) = unsafe {
        match (rows, wide, b_t) {
            (17.., false, true) => slice::<T, 32, 16, 4, true>(ab, mnk, here, st),
            (9..=16, false, true) => slice::<T, 16, 16, 4, true>(ab, mnk, here, st),
            (_, false, true) => slice::<T, 8, 8, 8, true>(ab, mnk, here, st),
            (17.., true, true) => slice::<T, 32, 16, 2, true>(ab, mnk, here, st),
            (9..=16, true, true) => slice::<T, 16, 16, 2, true>(ab, mnk, here, st),
            (_, true, true) => slice::<T, 8, 8, 4, true>(ab, mnk, here, st),
            (_, false, false) => slice::<T, 32, 16, 4, false>(ab, mnk, here, st),
            (_, true, false) => slice::<T, 32, 16, 2, false>(ab, mnk, here, st),
        }
    };
    let sums = StripSums {
        tile: sums,
        parts: k_groups,
        rows: nr,
        cols: COLS,
    };
    // SAFETY: the launch rules are `finish`'s (workspace, counters zero, 128 threads); the sums
    // are complete since `slice`'s final barrier; every thread gets here.
    unsafe { finish::<T, ROWS, COLS, THREADS, HALF>(&g, block, &sums, &last_flag) };
}
