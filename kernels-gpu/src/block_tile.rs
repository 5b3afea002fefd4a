//! The block tile shared by the vectorized kernels (`vectorized`, `double_buffered`,
//! `warp_tiled`, ...): its stage layout in shared memory, the phase's global loads
//! (prologue/mainloop), the thread tile's multiply-adds and the epilogue, for a block tile of
//! `BM x BN` stepping `BK` along K (const parameters; BM and BN multiples of 64, BK of 8).
//!
//! `(BM / 8) * (BN / 8)` threads, each an 8 x 8 thread tile split in two 4-row and two
//! 4-column halves `BM / 2` and `BN / 2` apart, so a warp's 16-byte shared reads fall on
//! consecutive addresses (no bank conflicts) and its 16-byte stores of C are contiguous. A is
//! stored transposed (`a_t[k][m]`), so a thread's 4 rows of A are one 16-byte shared load too.
//!
//! Interior blocks (the whole tile inside C, K and N multiples of 4, buffers aligned) load and
//! store 4 elements per access; edge blocks load element by element with zero padding and
//! store only inside C. The choice is per block (and per phase for the last, partial K
//! step), so it is uniform and every barrier is reached by every thread.
use crate::coarse::load_or_zero;
use crate::device::global::{load4, store, store4};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::vector::aligned4;
use crate::element::{Accumulator, Element};

/// Threads of a `BM x BN` block tile (8 x 8 elements each).
pub const fn threads(bm: u32, bn: u32) -> u32 {
    (bm / 8) * (bn / 8)
}

/// Shared elements of one stage: A transposed (BK x BM) and B (BK x BN).
pub const fn stage_elements(bm: u32, bn: u32, bk: u32) -> u32 {
    bk * bm + bk * bn
}

/// Most 4-element groups one thread loads per phase, of A or of B.
const MAX_GROUPS: usize = 4;

/// Which (thread row, thread column) of the `BM / 8 x BN / 8` thread grid a thread is.
pub trait ThreadMap {
    fn coords<const BM: u32, const BN: u32>(tid: u32) -> (u32, u32);
}

/// Thread `tid` is row `tid / (BN / 8)`: a warp spans a strip of whole thread rows.
pub struct RowMajor;

impl ThreadMap for RowMajor {
    #[inline(always)]
    fn coords<const BM: u32, const BN: u32>(tid: u32) -> (u32, u32) {
        (tid / (BN / 8), tid % (BN / 8))
    }
}

/// Warp tiling: warp `w` owns a 4 x 8 patch of the thread grid (a warp tile of C of 32 x 64
/// elements per quadrant pair), so per K step a warp reads 4 distinct A groups and 8
/// distinct B groups (a row-major warp of a 128-wide tile reads 2 and 16).
pub struct WarpTiled;

impl ThreadMap for WarpTiled {
    #[inline(always)]
    fn coords<const BM: u32, const BN: u32>(tid: u32) -> (u32, u32) {
        let (warp, lane) = (tid / 32, tid % 32);
        let warps_per_row = BN / 8 / 8;
        (
            (warp / warps_per_row) * 4 + lane / 8,
            (warp % warps_per_row) * 8 + lane % 8,
        )
    }
}

/// One stage in shared memory.
#[derive(Clone, Copy)]
pub struct Stage<A> {
    a_t: SharedTile<A>,
    b: SharedTile<A>,
}

impl<A: Accumulator> Stage<A> {
    #[inline(always)]
    pub fn carve<const BM: u32, const BN: u32, const BK: u32>(arena: &mut SharedArena<A>) -> Self {
        Self {
            a_t: arena.tile(BK, BM),
            b: arena.tile(BK, BN),
        }
    }
}

/// One phase's global loads, held in registers: this thread's 4-element groups of A and B.
#[derive(Clone, Copy)]
pub struct Fetch<A> {
    a: [[A; 4]; MAX_GROUPS],
    b: [[A; 4]; MAX_GROUPS],
}

/// Where a block is and which path it takes.
#[derive(Clone, Copy)]
pub struct Block {
    pub row0: u32,
    pub col0: u32,
    pub interior: bool,
}

impl Block {
    #[inline(always)]
    pub fn new<T: Element, const BM: u32, const BN: u32>(
        (a, b, c): (*const T, *const T, *mut T::Acc),
        (m, n, k): (u32, u32, u32),
        (block_row, block_col): (u32, u32),
    ) -> Self {
        let (row0, col0) = (block_row * BM, block_col * BN);
        let interior = row0 + BM <= m
            && col0 + BN <= n
            && k % 4 == 0
            && n % 4 == 0
            && aligned4(a)
            && aligned4(b)
            && aligned4(c as *const T::Acc);
        Self {
            row0,
            col0,
            interior,
        }
    }
}

/// The `i`-th 4-element group this thread loads: A `(row, col)` within the tile.
#[inline(always)]
fn a_group<const BM: u32, const BN: u32, const BK: u32>(tid: u32, i: u32) -> (u32, u32) {
    let g = tid + i * threads(BM, BN);
    (g / (BK / 4), 4 * (g % (BK / 4)))
}

/// The `i`-th 4-element group of B this thread loads.
#[inline(always)]
fn b_group<const BM: u32, const BN: u32>(tid: u32, i: u32) -> (u32, u32) {
    let g = tid + i * threads(BM, BN);
    (g / (BN / 4), 4 * (g % (BN / 4)))
}

/// Loads phase `k0`'s share of A and B for thread `tid`.
///
/// # Safety
/// `a` is `m x k`, `b` is `k x n`, row-major.
#[inline(always)]
pub unsafe fn fetch<T: Element, const BM: u32, const BN: u32, const BK: u32>(
    ab: (*const T, *const T),
    mnk: (u32, u32, u32),
    blk: Block,
    k0: u32,
    tid: u32,
) -> Fetch<T::Acc> {
    unsafe { fetch_as::<T, BM, BN, BK, true>(ab, mnk, blk, k0, tid) }
}

/// [`fetch`], where `CHECKED = false` promises an interior block and a whole phase (the
/// caller checked `blk.interior && k % BK == 0` for the whole launch of this block), so no
/// bounds check is compiled in at all.
///
/// # Safety
/// As [`fetch`], and the promise above when `CHECKED` is false.
#[inline(always)]
pub unsafe fn fetch_as<
    T: Element,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const CHECKED: bool,
>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    blk: Block,
    k0: u32,
    tid: u32,
) -> Fetch<T::Acc> {
    let groups_a = BM * BK / 4 / threads(BM, BN);
    let groups_b = BK * BN / 4 / threads(BM, BN);
    let mut f = Fetch {
        a: [[T::Acc::ZERO; 4]; MAX_GROUPS],
        b: [[T::Acc::ZERO; 4]; MAX_GROUPS],
    };
    let vector = !CHECKED || (blk.interior && k0 + BK <= k);
    for i in 0..groups_a {
        let (r, col) = a_group::<BM, BN, BK>(tid, i);
        let (row, col) = (blk.row0 + r, k0 + col);
        if vector {
            // SAFETY: the tile is inside A, and the group is 4-aligned (Block::new).
            let v = unsafe { load4(a, row as usize * k as usize + col as usize) };
            f.a[i as usize] = v.map(Element::widen);
        } else {
            for j in 0..4 {
                f.a[i as usize][j] = unsafe { load_or_zero(a, row, col + j as u32, m, k) };
            }
        }
    }
    for i in 0..groups_b {
        let (r, col) = b_group::<BM, BN>(tid, i);
        let (row, col) = (k0 + r, blk.col0 + col);
        if vector {
            // SAFETY: as above, for B.
            let v = unsafe { load4(b, row as usize * n as usize + col as usize) };
            f.b[i as usize] = v.map(Element::widen);
        } else {
            for j in 0..4 {
                f.b[i as usize][j] = unsafe { load_or_zero(b, row, col + j as u32, k, n) };
            }
        }
    }
    f
}

/// Stores a fetch into a stage (A transposed).
///
/// # Safety
/// No thread reads `stage` between the last barrier and the next.
#[inline(always)]
pub unsafe fn stash<A: Accumulator, const BM: u32, const BN: u32, const BK: u32>(
    stage: &Stage<A>,
    f: &Fetch<A>,
    tid: u32,
) {
    for i in 0..BM * BK / 4 / threads(BM, BN) {
        let (r, col) = a_group::<BM, BN, BK>(tid, i);
        for j in 0..4 {
            unsafe { stage.a_t.set(col + j as u32, r, f.a[i as usize][j]) };
        }
    }
    for i in 0..BK * BN / 4 / threads(BM, BN) {
        let (r, col) = b_group::<BM, BN>(tid, i);
        unsafe { stage.b.set4(r, col, f.b[i as usize]) };
    }
}

/// The thread tile's multiply-adds over one stage.
///
/// # Safety
/// The stage is complete (a barrier since its last store) and nobody writes it meanwhile.
#[inline(always)]
pub unsafe fn multiply<A: Accumulator, const BM: u32, const BN: u32, const BK: u32>(
    stage: &Stage<A>,
    acc: &mut [[A; 8]; 8],
    (tr, tc): (u32, u32),
) {
    for kk in 0..BK {
        let (a_lo, a_hi, b_lo, b_hi) = unsafe {
            (
                stage.a_t.get4(kk, 4 * tr),
                stage.a_t.get4(kk, BM / 2 + 4 * tr),
                stage.b.get4(kk, 4 * tc),
                stage.b.get4(kk, BN / 2 + 4 * tc),
            )
        };
        let af = [
            a_lo[0], a_lo[1], a_lo[2], a_lo[3], a_hi[0], a_hi[1], a_hi[2], a_hi[3],
        ];
        let bf = [
            b_lo[0], b_lo[1], b_lo[2], b_lo[3], b_hi[0], b_hi[1], b_hi[2], b_hi[3],
        ];
        for i in 0..8 {
            for j in 0..8 {
                acc[i][j] = acc[i][j].mul_add(af[i], bf[j]);
            }
        }
    }
}

/// Offset (within the block tile) of a thread's `i`-th row or column: two groups of 4,
/// `half` apart.
#[inline(always)]
pub(crate) fn tile_offset(t: u32, i: u32, half: u32) -> u32 {
    if i < 4 {
        4 * t + i
    } else {
        half + 4 * t + i - 4
    }
}

/// Writes the thread tile to C.
///
/// # Safety
/// `c` is `m x n`, row-major; no other thread writes these elements.
#[inline(always)]
pub unsafe fn epilogue<A: Accumulator, const BM: u32, const BN: u32>(
    c: *mut A,
    acc: &[[A; 8]; 8],
    (m, n): (u32, u32),
    blk: Block,
    (tr, tc): (u32, u32),
) {
    for i in 0..8 {
        let acc_row = &acc[i];
        let row = blk.row0 + tile_offset(tr, i as u32, BM / 2);
        if blk.interior {
            let base = row as usize * n as usize + blk.col0 as usize;
            let lo = [acc_row[0], acc_row[1], acc_row[2], acc_row[3]];
            let hi = [acc_row[4], acc_row[5], acc_row[6], acc_row[7]];
            // SAFETY: interior: the row and both column groups are inside C and aligned.
            unsafe {
                store4(c, base + (4 * tc) as usize, lo);
                store4(c, base + (BN / 2 + 4 * tc) as usize, hi);
            }
        } else {
            for j in 0..8 {
                let col = blk.col0 + tile_offset(tc, j as u32, BN / 2);
                if row < m && col < n {
                    unsafe { store(c, row as usize * n as usize + col as usize, acc_row[j]) };
                }
            }
        }
    }
}
