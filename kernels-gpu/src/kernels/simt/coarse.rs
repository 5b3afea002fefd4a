//! Thread coarsening (1D): each thread computes TM = 8 elements of one column of C, so each
//! element of B it reads from shared memory serves 8 multiply-adds instead of 1.
//!
//! Launch rules ([`SPEC`]): 512 threads in a 1D block, block tile BM x BN =
//! 64 x 64 stepping BK = 8 along K, grid `ceil(n / 64) x ceil(m / 64)`, shared bytes
//! `(BM * BK + BK * BN) * size_of(Acc)`. Every load and store is bounds-checked.
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, KernelSpec, Shared, Threads, Tile};
use crate::device::global::store;
use crate::device::shared::SharedArena;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::element::{Bf16, Narrow};
use crate::parts::simt::checked::load_or_zero;
use crate::problem::{Gemm, kernel};

kernel! {
    SPEC = KernelSpec::new(("coarse", file!()), "thread coarsening: 8 elements of a column of C per thread", Arch::Sm70, Threads::Fixed(64 * 64 / 8, 1), Tile::Fixed { rows: 64, cols: 64 })
        .with_shared(Shared::stages(1, 8)).with_ptx(&[PtxFacts::all(&[Barriers(2), AtLeast("fma.rn.f", 64)])]);
    fn coarse;
    entries coarse_f32: f32, coarse_f64: f64, coarse_f16: f16, coarse_bf16: Bf16, coarse_f16_f16: Narrow<f16>, coarse_bf16_bf16: Narrow<Bf16>;
}
pub const BM: u32 = SPEC.rows();
pub const BN: u32 = SPEC.cols();
pub const BK: u32 = SPEC.bk();
pub const TM: u32 = 8;
pub const THREADS: u32 = SPEC.fixed_threads();

/// # Safety
/// See the entry points; 512 threads per block.
#[inline(always)]
pub unsafe fn coarse<T: Element>(g: Gemm<T>) {
    let (a, b, c, m, n, k) = g.plain();
    let tid = thread_idx_x();
    let (tr, tc) = (tid / BN, tid % BN); // rows tr*TM.., column tc of the block tile
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // SAFETY: SPEC's one stage of `BK x (BM + BN)` accumulators: the `BM x BK` and `BK x BN` tiles
    // carved below.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let a_tile = arena.tile(BM, BK);
    let b_tile = arena.tile(BK, BN);

    let mut acc = [T::Acc::ZERO; TM as usize];
    for phase in 0..k.div_ceil(BK) {
        let k0 = phase * BK;
        // One element of A and one of B per thread (BM*BK = BK*BN = THREADS).
        let (ar, ac) = (tid / BK, tid % BK);
        let (br, bc) = (tid / BN, tid % BN);
        // SAFETY: THREADS = BM BK = BK BN, so (ar, ac) < (BM, BK) and (br, bc) < (BK, BN), each
        // thread's own element, written after the barrier that ended the last reads; A and B are
        // `m x k` and `k x n` row-major (SPEC is not strided), as `load_or_zero` needs.
        unsafe {
            a_tile.set(ar, ac, load_or_zero(a, row0 + ar, k0 + ac, m, k));
            b_tile.set(br, bc, load_or_zero(b, k0 + br, col0 + bc, k, n));
        }
        sync_threads();
        for kk in 0..BK {
            // SAFETY: kk < BK and tc < BN; the tiles are complete (barrier above) and unwritten
            // until the barrier after this loop.
            let bv = unsafe { b_tile.get(kk, tc) };
            for i in 0..TM as usize {
                // SAFETY: tr TM + i < 8 TM = BM and kk < BK; as above, no writer before the next
                // barrier.
                acc[i] = acc[i].mul_add(unsafe { a_tile.get(tr * TM + i as u32, kk) }, bv);
            }
        }
        sync_threads();
    }
    let col = col0 + tc;
    for i in 0..TM as usize {
        let row = row0 + tr * TM + i as u32;
        if row < m && col < n {
            // SAFETY: (row, col) is inside the row-major `m x n` C (checked); these rows of column
            // `tc` of this block's tile are this thread's alone.
            unsafe { store(c, row as usize * n as usize + col as usize, T::out(acc[i])) };
        }
    }
}
