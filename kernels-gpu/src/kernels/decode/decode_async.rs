//! Decode products with B streamed through shared memory: `decode`'s division of the work
//! (a few rows of C, every element of B read once for all of them), with two ideas more.
//!
//! - **Bytes in flight without registers.** `decode` holds 8 loads of B per thread in
//!   registers, and its 168 registers leave 2-3 blocks per SM: too few bytes in flight to
//!   keep HBM busy. Here each lane copies its own 16-byte chunks of B (8 columns) into
//!   shared memory with `cp.async`, six stages of 8 K rows (five in flight: 80 KiB per
//!   block), whatever the registers. A lane reads back only the bytes it copied itself, so
//!   the pipeline needs no barrier: `cp.async.wait_group` orders a thread's own copies.
//! - **One launch.** With K split over blocks, each block writes its slice's sums to the
//!   workspace and draws a ticket (`atom.add` on a counter per strip of columns); the block
//!   that draws the last one adds the slices in K order and writes C, then sets the counter
//!   back to zero. The result does not depend on which block comes last, and no second
//!   launch (`decode_fixup`) is needed.
//!
//! A block of 4 warps owns a strip of 256 columns and a slice of K; each warp a contiguous
//! quarter of the slice; up to 4 rows of C per pass over B (passes of 8 rows spilled 168
//! bytes, 16 rows took 255 registers; 5 to 16 rows are `decode`'s or the tensor cores').
//! The grid is one wave: as many slices per strip as fit resident beside each other.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(n / 256) x splits` (`Problem::ctas`,
//! [`splits`](crate::parts::schedule::decode_split::splits)); shared 96 KiB + 16 bytes; workspace (f32 units)
//! [`counters`]`(m, strips)`
//! counters, zero at launch, then `splits` planes of `m x n` where `splits > 1`; f16, bf16
//! (compute capability 8.0+: `cp.async`).
use crate::catalogue::PtxFact::{Barriers, Has};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, Shared, Threads, Tile};
use crate::device::async_copy::{pipeline, wait_group};
use crate::device::global::{load, load_volatile, load4, load4_or_zeros, store};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_idx_x, block_idx_y, grid_dim_x, sync_threads, thread_idx_x};
use crate::device::vector::{aligned4, aligned16};
use crate::element::{Accumulator, Element};
use crate::element::{Bf16, Narrow};
use crate::parts::decode::stream::fill_stage;
use crate::parts::schedule::decode_split::{LANE_COLS, RESIDENT, STRIP, THREADS, WARPS, counters};
use crate::parts::schedule::decode_split::{LAST_BLOCK_STREAMED, warp_share};
use crate::parts::schedule::split_k::last_to_arrive;
use crate::problem::{Gemm, kernel};

/// K rows per stage of a warp's pipeline, and its stages.
const STAGE_ROWS: u32 = 8;
const STAGES: u32 = 6;
/// Rows of C per pass over B.
pub const ROWS: u32 = 4;
/// Shared accumulators: the warps' pipelines (`WARPS x STAGES x STAGE_ROWS x STRIP` 16-bit
/// elements), whose bytes later hold the warps' sums (`WARPS x ROWS x STRIP`); then 4 for
/// the last-block flag.
const PIPES: u32 = WARPS * STAGES * STAGE_ROWS * STRIP / 2;
const _: () = assert!(WARPS * ROWS * STRIP <= PIPES);

// No launch bounds: capped at 3 blocks per SM (168 registers) it ran at half the speed.
kernel! {
    SPEC = KernelSpec::new(("decode_async", file!()), "`decode` with B streamed through shared memory by `cp.async` (80 KiB in flight per block, no registers held), a grid of one wave, and one launch: the last block of each strip adds the K slices in order",
        Arch::Sm80, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: STRIP })
        .with_grid(Grid::SplitKLastBlock { per_sm: RESIDENT as u32 }).with_shared(Shared::Elements(PIPES + 4))
        .with_elements(&[Elem::F16, Elem::Bf16]).with_candidate(Candidate::WhenSideAtMost(16))
        .with_ptx(&[PtxFacts::all(&[Barriers(7), Has("fence.acq_rel.gpu"), Has("ld.volatile.global"), Has("cp.async.wait_group 4"), Has("cp.async.wait_group 0")]),
            LAST_BLOCK_STREAMED, PtxFacts::only(&["f16_f16"], &[Has("cvt.rn.f16.f32")])]);
    fn decode_async;
    entries decode_async_f16: f16, decode_async_bf16: Bf16, decode_async_f16_f16: Narrow<f16>, decode_async_bf16_bf16: Narrow<Bf16>;
}

/// This warp's share of one pass: rows `row0..row0 + MR` (those below `m`) of C, the
/// lane's 8 columns from `col`, K rows `k0..k1`, B through the warp's `pipe` (`STAGES x
/// STAGE_ROWS` rows of 256); the sums go to rows `ROWS warp + r` of `sums`, which shares
/// the pipelines' bytes (hence the barrier first).
///
/// # Safety
/// As the kernel; every thread of the block calls it with the same `MR` (at most `ROWS`).
#[inline(always)]
unsafe fn pass<T: Element, const MR: usize>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col, k0, k1): (u32, u32, u32, u32),
    (pipe, lane): (&SharedTile<T>, u32),
    (sums, warp): (&SharedTile<T::Acc>, u32),
) {
    let packed = k.is_multiple_of(4) && aligned4(a);
    let mut acc = [[T::Acc::ZERO; LANE_COLS as usize]; MR];
    // Adds 4 K rows from `kq` (`w`: this lane's 8 columns of each) times A's rows; A past
    // k1 is zero, like B there: Inf x 0 must not reach a sum.
    let mut add4 = |kq: u32, w: &[[T::Acc; LANE_COLS as usize]; 4]| {
        for r in 0..MR {
            let row = row0 + r as u32;
            if row >= m {
                continue;
            }
            let at = row as usize * k as usize + kq as usize;
            let mut x = [T::ZERO; 4];
            if packed && kq + 4 <= k1 {
                // SAFETY: row < m and kq + 4 <= k1 <= k; `packed` (K a multiple of 4, `a` aligned)
                // and `kq` a multiple of 4 (as `k0` is) make `at` 4-aligned.
                x = unsafe { load4(a, at) };
            } else {
                for u in 0..4 {
                    if kq + (u as u32) < k1 {
                        // SAFETY: row < m and kq + u < k1 <= k (checked): inside A.
                        x[u] = unsafe { load(a, at + u) };
                    }
                }
            }
            for u in 0..4 {
                for j in 0..LANE_COLS as usize {
                    acc[r][j] = acc[r][j].mul_add(x[u].widen(), w[u][j]);
                }
            }
        }
    };
    if n.is_multiple_of(LANE_COLS) && aligned16(b) {
        // One stage: this lane's chunk of 8 K rows, zeros past `k1` and `n`.
        // SAFETY: N is a multiple of 8 and `b` 16-byte aligned (the branch); the pipe is the
        // lane's STAGES x STAGE_ROWS rows, and only this lane reads a slot, after its own
        // `wait_group` (no barrier needed for a thread's own copies).
        let fill = |s| unsafe {
            fill_stage::<T, STAGES, STAGE_ROWS>(pipe, b, (k0, k1, n), (col, lane), s)
        };
        let steps = (k1 - k0).div_ceil(STAGE_ROWS);
        // No barrier: a lane's stages are its own (it read the slot refilled next itself).
        pipeline::<STAGES, { STAGES - 2 }>(
            steps,
            fill,
            || {},
            |s| {
                let slot = (s % STAGES) * STAGE_ROWS;
                for h in 0..2 {
                    let mut w = [[T::Acc::ZERO; LANE_COLS as usize]; 4];
                    for u in 0..4 {
                        let row = slot + 4 * h + u;
                        // SAFETY: this lane's own chunk of row `row` < STAGES STAGE_ROWS,
                        // 4-aligned; its copy has landed (`pipeline`'s `wait_group`) and the slot
                        // is refilled only by this lane, later.
                        let lo = unsafe { pipe.get4(row, lane * LANE_COLS) };
                        // SAFETY: as above, the chunk's second half.
                        let hi = unsafe { pipe.get4(row, lane * LANE_COLS + 4) };
                        for j in 0..4 {
                            w[u as usize][j] = lo[j].widen();
                            w[u as usize][j + 4] = hi[j].widen();
                        }
                    }
                    add4(k0 + s * STAGE_ROWS + 4 * h, &w);
                }
            },
        );
    } else {
        // B's rows are not whole 16-byte chunks (N not a multiple of 8, or B misaligned):
        // no copies, 4 K rows at a time straight from global memory, zeros outside B.
        let mut kq = k0;
        while kq < k1 {
            let mut w = [[T::Acc::ZERO; LANE_COLS as usize]; 4];
            for u in 0..4 {
                for h in 0..2 {
                    let at = (kq + u, col + 4 * h);
                    // SAFETY: B holds `k x n` elements, and the checked loads read only rows below
                    // k1 <= k of its n-long rows.
                    let four = unsafe { load4_or_zeros(b, at, (k1, n), false) };
                    for j in 0..4 {
                        w[u as usize][4 * h as usize + j] = four[j].widen();
                    }
                }
            }
            add4(kq, &w);
            kq += 4;
        }
    }
    wait_group::<0>();
    sync_threads(); // every warp is done with its pipeline: the sums take its bytes
    for r in 0..MR {
        for h in 0..2 {
            let v = [0, 1, 2, 3].map(|j| acc[r][4 * h + j]);
            // SAFETY: row warp ROWS + r < WARPS ROWS and columns `lane 8 + 4 h..+ 4` < STRIP,
            // 4-aligned, this thread's own; every warp left its pipeline at the barrier above
            // (after `wait_group`), and the sums are read after the caller's barrier.
            unsafe { sums.set4(warp * ROWS + r as u32, lane * LANE_COLS + 4 * h as u32, v) };
        }
    }
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn decode_async<T: Element>(g: Gemm<T>) {
    let (a, b, c, m, n, k) = g.plain();
    let splits = g.p.ctas.max(1);
    let (strip, split, strips) = (block_idx_x(), block_idx_y(), grid_dim_x());
    let tid = thread_idx_x();
    let (warp, lane) = (tid / 32, tid % 32);
    let (k0, k1) = warp_share(k, (splits, split), warp, STAGE_ROWS);
    let col = strip * STRIP + lane * LANE_COLS;
    // SAFETY: the launch provides PIPES + 4 accumulators; the sums fit in the pipelines'
    // bytes (checked above), which they use at other times (barriers between).
    let pipes =
        unsafe { SharedArena::<T>::launch_sized() }.tile(WARPS * STAGES * STAGE_ROWS, STRIP);
    // SAFETY: the same launch-sized region as accumulators: PIPES + 4, carved below as the sums,
    // the rest of the pipelines and the flag.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let sums = arena.tile(WARPS * ROWS, STRIP);
    let _pipes = arena.tile(PIPES / STRIP - WARPS * ROWS, STRIP);
    let last_flag = arena.tile(1, 4);
    let pipe = pipes.window(warp * STAGES * STAGE_ROWS, STAGES * STAGE_ROWS);
    let counters = g.workspace.cast::<u32>();
    let planes =
        g.workspace
            .wrapping_add(self::counters(m as usize, strips as usize, ROWS as usize));
    let plane = m as usize * n as usize;
    let (mut row0, mut pass_no) = (0, 0);
    while row0 < m {
        let rows = (m - row0).min(ROWS);
        let here = (row0, col, k0, k1);
        let (ab, mnk, p, s) = ((a, b), (m, n, k), (&pipe, lane), (&sums, warp));
        // SAFETY: the entry point's contract and SPEC's launch hold; `rows` is block-uniform, so
        // every thread calls the same `pass` with MR <= ROWS.
        unsafe {
            match rows {
                1 => pass::<T, 1>(ab, mnk, here, p, s),
                2 => pass::<T, 2>(ab, mnk, here, p, s),
                _ => pass::<T, 4>(ab, mnk, here, p, s),
            }
        }
        sync_threads(); // every warp's sums are in
        // The block's sums of this slice: C itself, or this slice's plane.
        for i in 0..ROWS * STRIP / THREADS {
            let e = tid + i * THREADS;
            let (r, cc) = (e / STRIP, e % STRIP);
            let (row, column) = (row0 + r, strip * STRIP + cc);
            if r < rows && column < n {
                let mut sum = T::Acc::ZERO;
                for w in 0..WARPS {
                    // SAFETY: w ROWS + r < WARPS ROWS and cc < STRIP; all sums are in (barrier
                    // above) and written again only after the barrier closing this pass.
                    sum = sum + unsafe { sums.get(w * ROWS + r, cc) };
                }
                let at = row as usize * n as usize + column as usize;
                match splits {
                    // SAFETY: (row, column) is inside the row-major `m x n` C (checked); one thread
                    // per element, and with one slice one block per strip.
                    1 => unsafe { store(c, at, T::out(sum)) },
                    // SAFETY: this slice's plane after the counters (launch rules), `at` < m n:
                    // this thread's element, read by the last block only after the rendezvous.
                    _ => unsafe { store(planes, split as usize * plane + at, sum) },
                }
            }
        }
        if splits > 1 {
            // The rendezvous of the strip's blocks: the last to arrive adds the planes.
            let counter = counters.wrapping_add((pass_no * strips + strip) as usize);
            // SAFETY: every thread calls it (`splits` is uniform); `counter` is this pass's and
            // strip's u32 among `counters(m, strips, ROWS)`, zero at launch and touched only by
            // tickets until the last block resets it; `last_flag` is the block's own.
            if unsafe { last_to_arrive(counter, splits, &last_flag, tid) } {
                for i in 0..ROWS * STRIP / THREADS {
                    let e = tid + i * THREADS;
                    let (r, cc) = (e / STRIP, e % STRIP);
                    let (row, column) = (row0 + r, strip * STRIP + cc);
                    if r < rows && column < n {
                        let at = row as usize * n as usize + column as usize;
                        let mut sum = T::Acc::ZERO;
                        for s in 0..splits as usize {
                            // SAFETY: s < splits and `at` < m n: inside the planes, which every
                            // block of the strip wrote before its ticket (fenced by the
                            // rendezvous).
                            sum = sum + unsafe { load_volatile(planes, s * plane + at) };
                        }
                        // SAFETY: (row, column) is inside C (checked); only this strip's last block
                        // writes it, one thread per element.
                        unsafe { store(c, at, T::out(sum)) };
                    }
                }
                if tid == 0 {
                    // The next product on this stream finds it zero again.
                    // SAFETY: every block of the strip has drawn its ticket for this pass: nothing
                    // else touches the counter in this launch.
                    unsafe { store(counter, 0, 0) };
                }
            }
        }
        sync_threads(); // before the next pass writes the pipelines (and the flag)
        row0 += ROWS;
        pass_no += 1;
    }
}
