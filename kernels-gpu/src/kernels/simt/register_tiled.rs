//! 2D register tiling: each thread computes a TM x TN = 8 x 8 thread tile of C, keeping a
//! column of A and a row of B in registers per K step: 16 shared loads feed 64
//! multiply-adds (the textbook tiled kernel: 2 feed 1).
//!
//! Launch rules ([`SPEC`]): 256 threads in a 1D block, block tile BM x BN =
//! 128 x 128 stepping BK = 8, grid `ceil(n / 128) x ceil(m / 128)`, shared bytes
//! `(BM * BK + BK * BN) * size_of(Acc)`. Every load and store is bounds-checked.
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, KernelSpec, Shared};
use crate::device::global::store;
use crate::device::shared::SharedArena;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::element::{Bf16, Narrow};
use crate::parts::simt::block_tile;
use crate::parts::simt::checked::load_or_zero;
use crate::problem::{Gemm, kernel};

// Its own loads and stores: row-major, dense only.
kernel! {
    SPEC = KernelSpec { strided: false, ..block_tile::spec(("register_tiled", file!()), "2D register tiling: an 8 x 8 thread tile", Arch::Sm70, (128, 128), Shared::stages(1, 8), Some(2)) }
        .with_ptx(&[PtxFacts::all(&[Barriers(2), AtLeast("fma.rn.f", 512)])]);
    fn register_tiled;
    entries register_tiled_f32: f32, register_tiled_f64: f64, register_tiled_f16: f16, register_tiled_bf16: Bf16, register_tiled_f16_f16: Narrow<f16>, register_tiled_bf16_bf16: Narrow<Bf16>;
}
pub const BM: u32 = SPEC.rows();
pub const BN: u32 = SPEC.cols();
pub const BK: u32 = SPEC.bk();
pub const TM: u32 = 8;
pub const TN: u32 = 8;
pub const THREADS: u32 = SPEC.fixed_threads();

/// # Safety
/// See the entry points; 256 threads per block.
#[inline(always)]
pub unsafe fn register_tiled<T: Element>(g: Gemm<T>) {
    let (a, b, c, m, n, k) = g.plain();
    let tid = thread_idx_x();
    let (tr, tc) = (tid / (BN / TN), tid % (BN / TN));
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // SAFETY: SPEC's one stage of `BK x (BM + BN)` accumulators: the `BM x BK` and `BK x BN` tiles
    // carved below.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let a_tile = arena.tile(BM, BK);
    let b_tile = arena.tile(BK, BN);

    let mut acc = [[T::Acc::ZERO; TN as usize]; TM as usize];
    for phase in 0..k.div_ceil(BK) {
        let k0 = phase * BK;
        for i in 0..BM * BK / THREADS {
            let e = tid + i * THREADS;
            let (r, col) = (e / BK, e % BK);
            // SAFETY: e < BM BK, so (r, col) < (BM, BK): this thread's own element, written after
            // the barrier that ended the last phase's reads; A is `m x k` row-major (SPEC is not
            // strided), as `load_or_zero` needs.
            unsafe { a_tile.set(r, col, load_or_zero(a, row0 + r, k0 + col, m, k)) };
        }
        for i in 0..BK * BN / THREADS {
            let e = tid + i * THREADS;
            let (r, col) = (e / BN, e % BN);
            // SAFETY: as for A: e < BK BN, so (r, col) < (BK, BN), this thread's own; B is `k x n`
            // row-major.
            unsafe { b_tile.set(r, col, load_or_zero(b, k0 + r, col0 + col, k, n)) };
        }
        sync_threads();
        for kk in 0..BK {
            let mut af = [T::Acc::ZERO; TM as usize];
            let mut bf = [T::Acc::ZERO; TN as usize];
            for i in 0..TM as usize {
                // SAFETY: tr TM + i < BM (tr < 16) and kk < BK; the tile is complete (barrier
                // above) and unwritten until the next barrier.
                af[i] = unsafe { a_tile.get(tr * TM + i as u32, kk) };
            }
            for j in 0..TN as usize {
                // SAFETY: kk < BK and tc TN + j < BN (tc < 16); as for A.
                bf[j] = unsafe { b_tile.get(kk, tc * TN + j as u32) };
            }
            for i in 0..TM as usize {
                for j in 0..TN as usize {
                    acc[i][j] = acc[i][j].mul_add(af[i], bf[j]);
                }
            }
        }
        sync_threads();
    }
    for i in 0..TM as usize {
        let row = row0 + tr * TM + i as u32;
        for j in 0..TN as usize {
            let col = col0 + tc * TN + j as u32;
            if row < m && col < n {
                // SAFETY: (row, col) is inside the row-major `m x n` C (checked); this thread's 8 x
                // 8 tile of the block's tile is written by no other thread.
                unsafe {
                    store(
                        c,
                        row as usize * n as usize + col as usize,
                        T::out(acc[i][j]),
                    )
                };
            }
        }
    }
}
