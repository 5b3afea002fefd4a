//! The pipelined `mma.sync` mainloop: both tiles copied as they are by `cp.async`, `STAGES`
//! deep, one barrier per phase, fragments optionally a K step ahead. `mma_async`, `mma_wide`,
//! `mma_deep`, `mma_deep128` run it; its copies serve `mma_swizzled` and the wide tile too.
use crate::device::async_copy::{commit_group, wait_group};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::device::vector::rows_in_chunks;
use crate::element::{Element, Half};
use crate::parts::mma::fragments::Ldmatrix;
use crate::parts::mma::one_stage::one_stage;
use crate::parts::mma::tensor_tile;
use crate::parts::mma::tensor_tile::{BM, MT, PAD, Stage, THREADS};
use crate::problem::Gemm;
/// Stages of the pipeline: three phases in flight while one is multiplied.
pub(crate) const STAGES: u32 = 4;

/// Starts the copies of a `ROWS x COLS` tile at `(row0, col0)` of a row-major `rows x
/// cols` matrix whose rows lie `ld` elements apart into `dst`, 16 bytes at a time, the
/// chunks spread over the block's `threads` (a constant once inlined); zeros for chunks
/// outside the matrix.
///
/// # Safety
/// The matrix's columns and `ld` are multiples of the chunk (16 bytes of elements) and
/// `src` is 16-byte aligned; nobody reads `dst` until a wait covering these copies and a barrier.
#[inline(always)]
pub(crate) unsafe fn copy_tile<T: Copy, const ROWS: u32, const COLS: u32>(
    dst: &SharedTile<T>,
    src: *const T,
    (row0, col0): (u32, u32),
    (rows, cols, ld): (u32, u32, u32),
    (tid, threads): (u32, u32),
) {
    let chunk = 16 / size_of::<T>() as u32;
    for i in 0..ROWS * COLS / chunk / threads {
        let e = tid + i * threads;
        let (r, c) = (e / (COLS / chunk), (e % (COLS / chunk)) * chunk);
        let inside = row0 + r < rows && col0 + c < cols;
        let at = (row0 + r) as usize * ld as usize + (col0 + c) as usize;
        let from = if inside { src.wrapping_add(at) } else { src };
        // SAFETY: `copy16_or_zero`'s points: (r < ROWS, c + chunk <= COLS) of `dst` (tid <
        // threads), 16-aligned rows; if `inside`, 16 bytes in row row0 + r (cols, ld, col0 + c
        // chunk multiples, src 16-aligned); dst unread until a wait and barrier (the contract).
        unsafe { dst.copy16_or_zero(r, c, from, inside) };
    }
}

/// Starts the copies of phase `k0`'s tiles (`BN` wide, `BK` deep) into `stage`.
///
/// # Safety
/// K and N are multiples of 8, `a` and `b` 16-byte aligned; nobody reads `stage` until a
/// wait covering these copies and a barrier.
#[inline(always)]
pub(crate) unsafe fn copy_phase<T: Element, const BN: u32, const BK: u32>(
    stage: &Stage<T>,
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0, k0): (u32, u32, u32),
    tid: u32,
) {
    // SAFETY: `copy_tile`'s points: A's rows (k, ld k) and B's (n, ld n) are multiples of the
    // 8-element chunk and a, b 16-aligned (this contract); `stage` unread until a wait and a
    // barrier; tid < THREADS, the 256 threads the launch has.
    unsafe {
        copy_tile::<T, BM, BK>(&stage.a, a, (row0, k0), (m, k, k), (tid, THREADS));
        copy_tile::<T, BK, BN>(&stage.b, b, (k0, col0), (k, n, n), (tid, THREADS));
    }
}

/// Whether the copies can run: 16-byte chunks along K (A) and N (B).
#[inline(always)]
pub(crate) fn chunked<T>(a: *const T, b: *const T, n: u32, k: u32) -> bool {
    rows_in_chunks(a, k, k) && rows_in_chunks(b, n, n)
}

/// The pipelined kernel for a `BM x BN` block tile (NT `mma` tiles per warp along N) stepping
/// `BK` along K, `STAGES` stages deep, fragments a K step ahead with `PREFETCH`; launches
/// whose inputs cannot be copied in chunks take `mma_ldmatrix`'s one-stage loop on the same
/// tile.
///
/// # Safety
/// See the entry points; 256 threads per block; T is f16 or bf16; the launch provides
/// `STAGES` stages of shared memory for a `BN`-wide tile.
#[inline(always)]
pub(crate) unsafe fn pipelined<
    T: Half,
    const BN: u32,
    const NT: usize,
    const BK: u32,
    const DEPTH: u32,
    const PREFETCH: bool,
>(
    gemm: Gemm<T>,
) {
    let (a, b, c, m, n, k) = gemm.plain();
    if !chunked(a, b, n, k) {
        // SAFETY: `one_stage`'s contract: the same launch (256 threads, f16 or bf16), whose DEPTH
        // stages of BK >= 32 hold its one stage; `chunked` is per launch, so every block comes
        // here.
        return unsafe { one_stage::<T, Ldmatrix, BN, NT>(gemm) };
    }
    let tid = thread_idx_x();
    let me = tensor_tile::Lane::of::<BN>(tid);
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // SAFETY: the launch provides `DEPTH` stages (the kernels' spec count, the contract's `STAGES`)
    // of the padded A and B tiles: `a_all` and `b_all` (checked on the host).
    let mut arena = unsafe { SharedArena::<T>::launch_sized() };
    let a_all = arena.tile(DEPTH * BM, BK + PAD);
    let b_all = arena.tile(DEPTH * BK, BN + PAD);
    let stage = |s: u32| Stage {
        a: a_all.window(s * BM, BM),
        b: b_all.window(s * BK, BK),
    };
    let phases = k.div_ceil(BK);
    // Prologue: the first STAGES - 1 phases in flight, one group each (empty past the end,
    // so every wait below counts the same groups).
    for s in 0..DEPTH - 1 {
        if s < phases {
            let at = (row0, col0, s * BK);
            // SAFETY: `copy_phase`'s points: `chunked` held above (K, N multiples of 8, a and b
            // 16-aligned); stage `s` is first read after the loop's wait and barrier for phase s.
            unsafe { copy_phase::<T, BN, BK>(&stage(s), (a, b), (m, n, k), at, tid) };
        }
        commit_group();
    }
    let mut acc = [[[0.0; 4]; NT]; MT];
    for phase in 0..phases {
        // This thread's copies of `phase` have landed; the barrier then says everyone's
        // have, and that everyone is done reading the stage the next copies overwrite.
        // (The count must be an immediate: one arm per depth in use.)
        match DEPTH {
            4 => wait_group::<2>(),
            3 => wait_group::<1>(),
            _ => wait_group::<0>(),
        }
        sync_threads();
        let ahead = phase + DEPTH - 1;
        if ahead < phases {
            let at = (row0, col0, ahead * BK);
            let there = stage(ahead % DEPTH);
            // SAFETY: as in the prologue; `there` held phase - 1, which every thread finished
            // reading before the barrier above, and is next read after its own wait and barrier.
            unsafe { copy_phase::<T, BN, BK>(&there, (a, b), (m, n, k), at, tid) };
        }
        commit_group();
        let here = stage(phase % DEPTH);
        // SAFETY: `multiply`'s points: the wait left only later phases in flight (DEPTH >= 2), so
        // this thread's copies of `phase` landed, and the barrier made everyone's visible; all 256
        // threads (whole warps) get here.
        unsafe { tensor_tile::multiply::<T, Ldmatrix, NT, BK, PREFETCH>(&here, &mut acc, me) };
    }
    // SAFETY: `epilogue`'s points: c is the m x n row-major C (the entry points' plain form); each
    // lane writes its own elements of this block's tile; whole warps call it.
    unsafe { tensor_tile::epilogue::<T, _>(c, &acc, (m, n), (row0, col0), me) };
}
