//! Register tiling with 128-bit accesses: 4 elements per global load (interior blocks), A
//! stored transposed in shared memory so each thread's column of A is one 16-byte shared
//! load, and a conflict-free thread-tile layout (`block_tile`). One shared stage: load,
//! barrier, multiply, barrier.
//!
//! Launch rules ([`SPEC`]): 256 threads in a 1D block, block tile 128 x 128
//! stepping BK = 8, grid `ceil(n / 128) x ceil(m / 128)`, shared bytes
//! `(BK * BM + BK * BN) * size_of(Acc)`.
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Shared};
use crate::device::shared::SharedArena;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
use crate::element::{Bf16, Narrow};
use crate::parts::simt::block_tile;
use crate::parts::simt::block_tile::{
    Block, RowMajor, Stage, ThreadMap, epilogue, fetch, multiply, stash,
};
use crate::parts::simt::block_tile::{VECTORS_F32, VECTORS_F64};
use crate::problem::{Gemm, kernel};

kernel! {
    SPEC = block_tile::spec(("vectorized", file!()), "16-byte global and shared accesses, A transposed in shared memory, conflict-free thread-tile layout, fast interior path / checked edges",
        Arch::Sm70, (128, 128), Shared::stages(1, 8), Some(2)).with_ptx(&[PtxFacts::all(&[Barriers(2), AtLeast("fma.rn.f", 512)]), VECTORS_F32, VECTORS_F64]);
    fn vectorized;
    entries vectorized_f32: f32, vectorized_f64: f64, vectorized_f16: f16, vectorized_bf16: Bf16, vectorized_f16_f16: Narrow<f16>, vectorized_bf16_bf16: Narrow<Bf16>;
}
const BM: u32 = SPEC.rows();
const BN: u32 = SPEC.cols();
const BK: u32 = SPEC.bk();

/// # Safety
/// See the entry points; 256 threads per block.
#[inline(always)]
pub unsafe fn vectorized<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let tid = thread_idx_x();
    let me = RowMajor::coords::<BM, BN>(tid);
    let blk = Block::new::<T, BM, BN>(&g, (block_idx_y(), block_idx_x()));
    // SAFETY: SPEC's one stage of `BK x (BM + BN)` accumulators, which `Stage::carve` takes.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let stage = Stage::carve::<BM, BN, BK>(&mut arena);
    let mut acc = [[T::Acc::ZERO; 8]; 8];
    for phase in 0..k.div_ceil(BK) {
        // SAFETY: op(A) and op(B) are `m x k` and `k x n` as `blk.s` says (the entry point's
        // contract); the stash comes after the barrier that ended the previous phase's reads.
        unsafe {
            let f = fetch::<T, BM, BN, BK>((a, b), (m, n, k), blk, phase * BK, tid);
            stash::<_, BM, BN, BK>(&stage, &f, (blk, tid));
        }
        sync_threads();
        // SAFETY: the stage is complete (barrier above) and nobody writes it before the barrier
        // below.
        unsafe { multiply::<_, BM, BN, BK>(&stage, &mut acc, me) };
        sync_threads();
    }
    // SAFETY: C is `m x n` at `ldc` (the entry point's contract); `me`'s 8 x 8 thread tile of this
    // block's tile is written by this thread only.
    unsafe { epilogue::<_, _, BM, BN>(&g.c_out(), &acc, (m, n), blk, me) };
}
