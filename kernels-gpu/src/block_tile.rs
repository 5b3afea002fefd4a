//! The 128 x 128 block tile shared by the vectorized kernels (`vectorized`,
//! `double_buffered`, `warp_tiled`): its stage layout in shared memory, the phase's global
//! loads (prologue/mainloop), the thread tile's multiply-adds and the epilogue.
//!
//! Block tile BM x BN = 128 x 128, BK = 8 per phase, 256 threads, each a TM x TN = 8 x 8
//! thread tile split in two 4-row and two 4-column halves 64 apart, so a warp's 16-byte
//! shared reads fall on consecutive addresses (no bank conflicts) and its 16-byte stores of C
//! are contiguous. A is stored transposed (`a_t[k][m]`), so a thread's 4 rows of A are one
//! 16-byte shared load too.
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

pub const BM: u32 = 128;
pub const BN: u32 = 128;
pub const BK: u32 = 8;
pub const THREADS: u32 = 256;
/// Thread tile: 8 x 8, as 2 x 2 groups of 4 x 4, 64 apart.
const HALF: u32 = 64;

/// Which (thread row, thread column) of the 16 x 16 thread grid a thread is.
pub trait ThreadMap {
    fn coords(tid: u32) -> (u32, u32);
}

/// Thread `tid` is row `tid / 16`, column `tid % 16`: a warp spans 2 rows x 16 columns.
pub struct RowMajor;

impl ThreadMap for RowMajor {
    #[inline(always)]
    fn coords(tid: u32) -> (u32, u32) {
        (tid / 16, tid % 16)
    }
}

/// Warp tiling: warp `w` owns a 4 x 8 patch of the thread grid (a 64 x 64 warp tile of C,
/// as 4 quadrants of 32 x 32), so per K step a warp reads 4 distinct A groups and 8 distinct
/// B groups instead of 2 and 16.
pub struct WarpTiled;

impl ThreadMap for WarpTiled {
    #[inline(always)]
    fn coords(tid: u32) -> (u32, u32) {
        let (warp, lane) = (tid / 32, tid % 32);
        ((warp / 2) * 4 + lane / 8, (warp % 2) * 8 + lane % 8)
    }
}

/// One stage in shared memory: A transposed (BK x BM) and B (BK x BN).
#[derive(Clone, Copy)]
pub struct Stage<A> {
    a_t: SharedTile<A>,
    b: SharedTile<A>,
}

impl<A: Accumulator> Stage<A> {
    /// Shared elements of one stage.
    pub const ELEMENTS: u32 = BK * BM + BK * BN;

    #[inline(always)]
    pub fn carve(arena: &mut SharedArena<A>) -> Self {
        Self {
            a_t: arena.tile(BK, BM),
            b: arena.tile(BK, BN),
        }
    }
}

/// One phase's global loads, held in registers: 4 elements of A (row `tid / 2`, columns
/// `4 * (tid % 2)..`) and 4 of B (row `tid / 32`, columns `4 * (tid % 32)..`).
#[derive(Clone, Copy)]
pub struct Fetch<A> {
    a: [A; 4],
    b: [A; 4],
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
    pub fn new<T: Element>(
        (a, b, c): (*const T, *const T, *mut T::Acc),
        (m, n, k): (u32, u32, u32),
        (row0, col0): (u32, u32),
    ) -> Self {
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

/// Loads phase `k0`'s share of A and B for thread `tid`.
///
/// # Safety
/// `a` is `m x k`, `b` is `k x n`, row-major.
#[inline(always)]
pub unsafe fn fetch<T: Element>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    blk: Block,
    k0: u32,
    tid: u32,
) -> Fetch<T::Acc> {
    let (ar, ac) = (blk.row0 + tid / 2, k0 + 4 * (tid % 2));
    let (br, bc) = (k0 + tid / 32, blk.col0 + 4 * (tid % 32));
    if blk.interior && k0 + BK <= k {
        // SAFETY: the tile is inside A and B, and the groups are 4-aligned (Block::new).
        let (av, bv) = unsafe {
            (
                load4(a, ar as usize * k as usize + ac as usize),
                load4(b, br as usize * n as usize + bc as usize),
            )
        };
        Fetch {
            a: av.map(Element::widen),
            b: bv.map(Element::widen),
        }
    } else {
        let mut f = Fetch {
            a: [T::Acc::ZERO; 4],
            b: [T::Acc::ZERO; 4],
        };
        for j in 0..4 {
            unsafe {
                f.a[j] = load_or_zero(a, ar, ac + j as u32, m, k);
                f.b[j] = load_or_zero(b, br, bc + j as u32, k, n);
            }
        }
        f
    }
}

/// Stores a fetch into a stage (A transposed).
///
/// # Safety
/// No thread reads `stage` between the last barrier and the next.
#[inline(always)]
pub unsafe fn stash<A: Accumulator>(stage: &Stage<A>, f: Fetch<A>, tid: u32) {
    let (ar, ac) = (tid / 2, 4 * (tid % 2));
    let (br, bc) = (tid / 32, 4 * (tid % 32));
    unsafe {
        for j in 0..4 {
            stage.a_t.set(ac + j as u32, ar, f.a[j]);
        }
        stage.b.set4(br, bc, f.b);
    }
}

/// The thread tile's multiply-adds over one stage.
///
/// # Safety
/// The stage is complete (a barrier since its last store) and nobody writes it meanwhile.
#[inline(always)]
pub unsafe fn multiply<A: Accumulator>(
    stage: &Stage<A>,
    acc: &mut [[A; 8]; 8],
    (tr, tc): (u32, u32),
) {
    for kk in 0..BK {
        let (a_lo, a_hi, b_lo, b_hi) = unsafe {
            (
                stage.a_t.get4(kk, 4 * tr),
                stage.a_t.get4(kk, HALF + 4 * tr),
                stage.b.get4(kk, 4 * tc),
                stage.b.get4(kk, HALF + 4 * tc),
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

/// Row (within the block tile) of thread row `tr`'s `i`-th accumulator row.
#[inline(always)]
fn tile_offset(t: u32, i: u32) -> u32 {
    if i < 4 {
        4 * t + i
    } else {
        HALF + 4 * t + i - 4
    }
}

/// Writes the thread tile to C.
///
/// # Safety
/// `c` is `m x n`, row-major; no other thread writes these elements.
#[inline(always)]
pub unsafe fn epilogue<A: Accumulator>(
    c: *mut A,
    acc: &[[A; 8]; 8],
    (m, n): (u32, u32),
    blk: Block,
    (tr, tc): (u32, u32),
) {
    for i in 0..8 {
        let acc_row = &acc[i];
        let row = blk.row0 + tile_offset(tr, i as u32);
        if blk.interior {
            let base = row as usize * n as usize + blk.col0 as usize;
            let lo = [acc_row[0], acc_row[1], acc_row[2], acc_row[3]];
            let hi = [acc_row[4], acc_row[5], acc_row[6], acc_row[7]];
            // SAFETY: interior: the row and both column groups are inside C and aligned.
            unsafe {
                store4(c, base + (4 * tc) as usize, lo);
                store4(c, base + (HALF + 4 * tc) as usize, hi);
            }
        } else {
            for j in 0..8 {
                let col = blk.col0 + tile_offset(tc, j as u32);
                if row < m && col < n {
                    unsafe { store(c, row as usize * n as usize + col as usize, acc_row[j]) };
                }
            }
        }
    }
}
