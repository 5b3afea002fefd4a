//! Split-K over strips of whole `rows x cols` block tiles, in one launch: block `(x, y)`
//! takes strip `x` ([`origin`], row strips first) and slice `y` of K
//! ([`k_slice`](crate::parts::schedule::k_slice), `Problem::ctas` = [`splits`] of them). With
//! more than one slice, the workspace holds [`counters`] (zero at launch, left zero), then
//! per strip `splits` planes of [`strip_elements`]; the last block of a strip to finish adds
//! them in K order (`split_k::last_to_arrive`).
use crate::device::global::{load_volatile, store};
use crate::device::shared::SharedTile;
use crate::device::thread::{block_idx_x, block_idx_y, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::parts::schedule::k_slice;
#[cfg(not(target_arch = "nvptx64"))]
use crate::parts::schedule::plan::{Plan, PlanInput};
use crate::parts::schedule::split_k::last_to_arrive;
use crate::problem::Gemm;

/// Slices of K for an `m x n x k` product on `rows x cols` strips where `resident` blocks
/// fit on the GPU at once: as many as keep the grid to one wave, each slice at least 256 K
/// steps, and the slices' sums at most an eighth of the larger operand's bytes (A's where C
/// has few columns, B's where it has few rows).
pub fn splits(
    (m, n, k): (usize, usize, usize),
    (rows, cols): (u32, u32),
    resident: usize,
) -> usize {
    let strips = m.div_ceil(rows as usize) * n.div_ceil(cols as usize);
    let wanted = resident / strips.max(1);
    let by_k = k / 256;
    let side =
        (m.max(1).next_multiple_of(rows as usize)).min(n.max(1).next_multiple_of(cols as usize));
    let by_traffic = k / (8 * side);
    wanted.min(by_k).min(by_traffic).max(1)
}

/// Counters at the start of the workspace (one per strip), rounded up to 16 bytes of f32:
/// where the slices' planes begin.
pub fn counters((m, n): (usize, usize), (rows, cols): (u32, u32)) -> usize {
    (m.div_ceil(rows as usize) * n.div_ceil(cols as usize)).next_multiple_of(4)
}

/// Accumulators of a strip's plane: its elements, row-major.
pub const fn strip_elements((rows, cols): (u32, u32)) -> usize {
    (rows * cols) as usize
}

/// The first row and column of C in strip `strip` of an `m`-row C.
#[inline(always)]
pub fn origin(strip: u32, m: u32, (rows, cols): (u32, u32)) -> (u32, u32) {
    let row_strips = m.div_ceil(rows).max(1);
    (strip % row_strips * rows, strip / row_strips * cols)
}

/// The launch: `strips x splits` blocks, where `resident` is the SMs times the kernel's
/// blocks per SM; with more than one slice, the counters and planes.
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan(input: &PlanInput) -> Plan {
    use Plan;
    let (m, n, k) = input.mnk;
    let (rows, cols) = input.tile;
    let resident = input.sms * input.per_sm;
    let splits = splits((m, n, k), input.tile, resident as usize);
    let strips = m.div_ceil(rows as usize) * n.div_ceil(cols as usize);
    let (mut zeroed, mut workspace) = (0, 0);
    if splits > 1 {
        zeroed = counters((m, n), input.tile);
        workspace = zeroed + splits * strips * strip_elements(input.tile);
    }
    Plan {
        ctas: Some(splits as u32),
        zeroed: (0, zeroed),
        ..Plan::single((strips, splits, input.batch), workspace)
    }
}

/// Where a block of the split works: its strip and slice of K (block `(x, y)`), the strip's
/// first row and column of C ([`origin`]), and the slice's K steps `(k0, k1)`.
#[derive(Clone, Copy)]
pub(crate) struct StripBlock {
    pub(crate) strip: u32,
    pub(crate) split: u32,
    pub(crate) origin: (u32, u32),
    pub(crate) k: (u32, u32),
}

impl StripBlock {
    /// This block's, for strips of `tile` and slices of K in steps of `granule`
    /// ([`k_slice`], `Problem::ctas` of them).
    #[inline(always)]
    pub(crate) fn this<T: Element>(g: &Gemm<T>, tile: (u32, u32), granule: u32) -> Self {
        let (strip, split) = (block_idx_x(), block_idx_y());
        Self::placed(
            origin(strip, g.p.m, tile),
            k_slice(g.p.k, g.p.ctas.max(1), split, granule),
        )
    }

    /// This block's, at the origin and slice of K [`StripBlock::this`] gave it.
    #[inline(always)]
    pub(crate) fn placed(origin: (u32, u32), k: (u32, u32)) -> Self {
        Self {
            strip: block_idx_x(),
            split: block_idx_y(),
            origin,
            k,
        }
    }
}

/// A block's sums for its strip in shared memory: `parts` partial sums (its threads' K
/// groups) of the strip's first `rows x cols` elements, part `p`'s `(r, c)` at `(p rows +
/// r, c)`; the strip's other elements are zero (rows or columns its tile did not hold).
pub(crate) struct StripSums<A> {
    pub(crate) tile: SharedTile<A>,
    pub(crate) parts: u32,
    pub(crate) rows: u32,
    pub(crate) cols: u32,
}

/// Planes the last block adds per round trip to L2.
const GROUP: usize = 4;

/// Writes this block's strip (`ROWS x COLS` from its origin, for its slice): with one
/// slice the sums go to C; with several, to the slice's plane of the workspace, and the last
/// block of the strip to finish adds the planes in K order and writes C. Meets the block's
/// barriers: every thread calls it, in uniform control flow.
///
/// # Safety
/// As the kernel's launch rules ([`plan`]): C dense `m x n`; the workspace holds
/// [`counters`] counters, zero at launch and touched only by this split-K, then `splits`
/// planes of [`strip_elements`] per strip; `THREADS` threads a block, `THREADS` dividing
/// `ROWS COLS` into an even count; `sums` complete (after a barrier) and unwritten from here
/// on; `last_flag` as `split_k::last_to_arrive`'s flag. `HALF` is half a thread's share of
/// the strip (checked at compile time).
#[inline(always)]
pub(crate) unsafe fn finish<
    T: Element,
    const ROWS: u32,
    const COLS: u32,
    const THREADS: u32,
    const HALF: usize,
>(
    g: &Gemm<T>,
    block: StripBlock,
    sums: &StripSums<T::Acc>,
    last_flag: &SharedTile<T::Acc>,
) {
    let StripBlock {
        strip,
        split,
        origin: (row0, col0),
        ..
    } = block;
    let (c, m, n) = (g.c, g.p.m, g.p.n);
    let splits = g.p.ctas.max(1);
    let tid = thread_idx_x();
    const { assert!(2 * HALF * THREADS as usize == strip_elements((ROWS, COLS))) };
    let elements = strip_elements((ROWS, COLS));
    // Strip element `e` (row-major over ROWS x COLS): its row in the strip, column, and
    // index in C if inside.
    let at = |e: u32| {
        let (r, cc) = (e / COLS, e % COLS);
        let (row, col) = (row0 + r, col0 + cc);
        (
            r,
            cc,
            (row < m && col < n).then(|| row as usize * n as usize + col as usize),
        )
    };
    // This strip's planes in the workspace: one per slice, ROWS x COLS each in the order
    // of the strip's elements, so that a thread's elements lie at fixed offsets from one
    // address (C's order took a register pair per element through the rendezvous).
    let planes = g.workspace.wrapping_add(
        counters((m as usize, n as usize), (ROWS, COLS)) + (strip * splits) as usize * elements,
    );
    for i in 0..ROWS * COLS / THREADS {
        let e = tid + i * THREADS;
        let (r, cc, at) = at(e);
        let mut sum = T::Acc::ZERO;
        if r < sums.rows && cc < sums.cols {
            for p in 0..sums.parts {
                // SAFETY: p rows + r < parts rows and cc < cols lie inside the sums' tile
                // (the contract), complete and written no more.
                sum = sum + unsafe { sums.tile.get(p * sums.rows + r, cc) };
            }
        }
        match (splits, at) {
            // SAFETY: `at` is inside the `m x n` C (row and column checked); strip element e is
            // this thread's alone, and with one slice the strip is this block's alone.
            (1, Some(at)) => unsafe { store(c, at, T::out(sum)) },
            (1, None) => {}
            // SAFETY: this strip's plane `split` of the workspace, after the counters (the launch
            // rules' size), element e being this thread's alone; the last block reads it only after
            // the rendezvous.
            _ => unsafe { store(planes, split as usize * elements + e as usize, sum) },
        }
    }
    if splits > 1 {
        // The rendezvous of the strip's blocks: the last to arrive adds the planes.
        let counter = g.workspace.cast::<u32>().wrapping_add(strip as usize);
        // SAFETY: every thread calls it (`splits` is uniform); `counter` is this strip's u32 among
        // the counters at the workspace's start, zero at launch and touched only by the strip's
        // tickets until the last block resets it; `last_flag` is the block's own.
        if unsafe { last_to_arrive(counter, splits, last_flag, tid) } {
            add_planes::<T, ROWS, COLS, THREADS, HALF>(c, planes, splits, at);
            if tid == 0 {
                // The next product on this stream finds it zero again.
                // SAFETY: every block of the strip has drawn its ticket: nothing else touches the
                // counter in this launch.
                unsafe { store(counter, 0, 0) };
            }
        }
    }
}

/// The last block's sum of a strip's `splits` planes, in K order, into C: planes outer,
/// [`GROUP`] at a time, and half the thread's elements inner (64 loads in flight per round
/// trip to L2; a plane per element at a time made 32 round trips of 16).
#[inline(always)]
fn add_planes<
    T: Element,
    const ROWS: u32,
    const COLS: u32,
    const THREADS: u32,
    const HALF: usize,
>(
    c: *mut T::Out,
    planes: *mut T::Acc,
    splits: u32,
    at: impl Fn(u32) -> (u32, u32, Option<usize>),
) {
    let elements = strip_elements((ROWS, COLS));
    let tid = thread_idx_x();
    for half in 0..2 {
        let first = tid as usize + half * HALF * THREADS as usize;
        let mut total = [T::Acc::ZERO; HALF];
        let mut s = 0;
        while s < splits {
            let mut got = [[T::Acc::ZERO; HALF]; GROUP];
            for p in 0..GROUP {
                if s + (p as u32) < splits {
                    let plane = (s as usize + p) * elements + first;
                    for i in 0..HALF {
                        let from = plane + i * THREADS as usize;
                        // SAFETY: plane s + p < splits of this strip, element `first + i
                        // THREADS` < elements: every block of the strip wrote it before its
                        // ticket, fenced by the rendezvous.
                        got[p][i] = unsafe { load_volatile(planes, from) };
                    }
                }
            }
            for p in 0..GROUP {
                if s + (p as u32) < splits {
                    for i in 0..HALF {
                        total[i] = total[i] + got[p][i];
                    }
                }
            }
            s += GROUP as u32;
        }
        for i in 0..HALF {
            let e = tid + (half * HALF + i) as u32 * THREADS;
            if let (_, _, Some(at)) = at(e) {
                // SAFETY: `at` is inside C; only the strip's last block writes it, one thread
                // per element.
                unsafe { store(c, at, T::out(total[i])) };
            }
        }
    }
}
