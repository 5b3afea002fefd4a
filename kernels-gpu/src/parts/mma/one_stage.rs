//! The one-stage `mma.sync` mainloop on the tensor-tile block tile: load a phase, barrier,
//! multiply, barrier. `mma_sync` and `mma_ldmatrix` run it, and the pipelined and Hopper
//! kernels take it where their copies cannot read the operands.
use crate::device::shared::SharedArena;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::element::Half;
use crate::parts::mma::tensor_tile;
use crate::parts::mma::tensor_tile::{BK, BM, Fragments, Lane, MT, PAD, Stage, THREADS};
use crate::problem::Gemm;
/// The one-stage kernel with fragments from `F`, for a `BM x BN` block tile (NT `mma` tiles
/// per warp along N): load, barrier, multiply, barrier.
///
/// # Safety
/// See the entry points; 256 threads per block (more only meet the barriers); T is f16 or bf16; the launch provides one
/// stage of shared memory for a `BN`-wide tile.
#[inline(always)]
pub unsafe fn one_stage<T: Half, F: Fragments, const BN: u32, const NT: usize>(gemm: Gemm<T>) {
    let at = (block_idx_y() * BM, block_idx_x() * BN);
    // SAFETY: `one_stage_tile`'s contract is this one's, passed on whole (same launch, threads,
    // element type and shared stage); `at` is this block's own tile of the grid.
    unsafe { one_stage_tile::<T, F, BN, NT>(gemm, at) }
}

/// [`one_stage`] for the block tile at `(row0, col0)`.
///
/// # Safety
/// As [`one_stage`].
#[inline(always)]
pub unsafe fn one_stage_tile<T: Half, F: Fragments, const BN: u32, const NT: usize>(
    gemm: Gemm<T>,
    (row0, col0): (u32, u32),
) {
    let (a, b, c, m, n, k) = gemm.plain();
    let tid = thread_idx_x();
    let me = Lane::of::<BN>(tid);
    // SAFETY: the contract's launch provides one stage for a `BN`-wide tile: the BM x (BK + PAD)
    // and BK x (BN + PAD) tiles of T carved below (each carve checked on the host).
    let mut arena = unsafe { SharedArena::<T>::launch_sized() };
    let stage = Stage {
        a: arena.tile(BM, BK + PAD),
        b: arena.tile(BK, BN + PAD),
    };
    let interior = tensor_tile::interior::<T, BN>((a, b), (m, n, k), (row0, col0));
    // Threads past the tile's 256 (a warp-specialised kernel's producers, which come here
    // when TMA cannot read the inputs) only meet the barriers.
    let works = tid < THREADS;
    let mut acc = [[[0.0; 4]; NT]; MT];
    for phase in 0..k.div_ceil(BK) {
        let k0 = phase * BK;
        let vector = interior && k0 + BK <= k;
        let at = (row0, col0, k0);
        if works {
            // SAFETY: `load_phase`'s points: a, b are m x k, k x n row-major (the entry points);
            // `vector` is `interior` with k0 + BK <= k; tid < THREADS; the stage's readers met the
            // barrier after the last phase, the next read is past the one below.
            unsafe { tensor_tile::load_phase::<T, BN>(&stage, (a, b), (m, n, k), at, tid, vector) };
        }
        sync_threads(); // the tiles are complete
        if works {
            // SAFETY: `multiply`'s points: the barrier above completed the stage after every
            // thread's stores; `works` (tid < 256) is whole warps, so every lane of this warp calls
            // it.
            unsafe { tensor_tile::multiply::<T, F, NT, BK, false>(&stage, &mut acc, me) };
        }
        sync_threads(); // everyone is done before the next phase overwrites the tiles
    }
    if works {
        // SAFETY: `epilogue`'s points: c is the m x n row-major C (the entry points' plain form);
        // each lane writes only its own fragment elements of this block's tile; whole warps
        // (`works`).
        unsafe { tensor_tile::epilogue::<T, _>(c, &acc, (m, n), (row0, col0), me) };
    }
}
