//! Tensor cores on Hopper, first `wgmma` rung (sm_90a module): each of the block's two
//! warpgroups computes a 64 x 256 half of a 128 x 256 block tile with `wgmma.mma_async
//! .m64n256k16`, reading A and B straight from shared memory through matrix descriptors, so
//! no thread loads fragments (`mma_deep` spends most of its issue slots on `ldmatrix`) and
//! the accumulators (128 f32 per thread) are the only registers that grow with the tile.
//!
//! The tiles reach shared memory by `mma_async`'s `cp.async` copies, each 16-byte chunk put
//! at its place in the 128-byte-swizzled layout `wgmma` reads (`device::wgmma`): A's 128 x 64
//! stage as 128-byte rows (K-major), B's 64 x 256 stage as four 64-column panels of 128-byte
//! rows (N-major). Four stages; the copies run two phases ahead, so that the stage they
//! overwrite is two phases old, whose `wgmma`s each warpgroup has waited for
//! (`wgmma.wait_group 1` keeps only the latest phase's in flight).
//!
//! Launches whose inputs cannot be copied in 16-byte chunks (K or N not a multiple of 8, or
//! a misaligned input) take `mma_wide`'s one-stage `mma.sync` loop on the same block tile.
//!
//! Launch rules ([`SPEC`]): 256 threads, grid `ceil(n / 256) x ceil(m / 128)`, 4 stages of
//! 48 KiB plus 1 KiB to align them (197,632 bytes); only in the sm_90a module; f16, bf16.
use crate::catalogue::PtxFact::{Barriers, Count, Has};
use crate::catalogue::{Arch, Elem, KernelSpec, Shared, Threads, Tile};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT};
use crate::device::async_copy::{commit_group, copy16_or_zero, wait_group};
use crate::device::shared::SharedArena;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::device::wgmma::{self};
use crate::element::{Bf16, Narrow};
use crate::element::{Element, Half};
use crate::parts::mma::async_pipeline::chunked;
use crate::parts::mma::fragments::Ldmatrix;
use crate::parts::mma::one_stage::one_stage;
use crate::parts::mma::tensor_tile::MMA_16BIT;
use crate::parts::wgmma::epilogue::epilogue;
use crate::parts::wgmma::epilogue::{F32_C_PAIRS, NARROW_C_256};
use crate::parts::wgmma::warpgroup::{
    A_STAGE, ATOM, B_STAGE, BK, BM, BN, Descriptors, PANEL, STAGES,
};
use crate::problem::{Gemm, kernel};

const THREADS: u32 = 256;
kernel! {
    SPEC = KernelSpec::new(("wgmma_async", file!()), "Hopper `wgmma` m64n256k16 from 128-byte-swizzled shared tiles (descriptors, no fragment loads), fed by a 4-stage `cp.async` pipeline; 2 warpgroups, 128 x 256 tiles",
        Arch::Sm90a, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: BM, cols: BN })
        .with_shared(Shared::InputElements(STAGES * (BM * BK + BK * BN) + ATOM / 2)).with_elements(&[Elem::F16, Elem::Bf16]).on_tensor_cores()
        .with_ptx(&[PtxFacts::all(&[Barriers(3)]), F32_C_PAIRS, NARROW_C_256, PtxFacts::only(SIXTEEN_BIT, &[Count("wgmma.mma_async.sync.aligned.m64n256k16.f32.{t}.{t}", 4),
            Has("wgmma.fence.sync.aligned"), Has("wgmma.commit_group.sync.aligned"), Has("wgmma.wait_group.sync.aligned 1"), Has("wgmma.wait_group.sync.aligned 0"),
            Has("fence.proxy.async.shared::cta"), Has("cp.async.cg.shared.global"), Has(MMA_16BIT)])]);
    fn wgmma_async;
    entries wgmma_async_f16: f16, wgmma_async_bf16: Bf16, wgmma_async_f16_f16: Narrow<f16>, wgmma_async_bf16_bf16: Narrow<Bf16>;
}

/// Starts the copies of phase `k0` into the stage at `a_s` / `b_s` (1024-byte aligned shared
/// regions), each 16-byte chunk at its swizzled place: chunk `c` of a 128-byte row `r` goes
/// to chunk `c ^ (r % 8)`. Zeros for chunks outside A and B.
///
/// # Safety
/// K and N are multiples of 8, `a` and `b` 16-byte aligned; nobody reads the stage until a
/// wait covering these copies, a proxy fence and a barrier.
#[inline(always)]
unsafe fn copy_phase<T: Element>(
    (a_s, b_s): (*mut u8, *mut u8),
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0, k0): (u32, u32, u32),
    tid: u32,
) {
    let chunk = |base: *mut u8, row: u32, c: u32| {
        base.wrapping_add((row * 128 + ((c ^ (row % 8)) * 16)) as usize)
            .cast::<T>()
    };
    for i in 0..BM * BK / 8 / THREADS {
        let e = tid + i * THREADS;
        let (r, c) = (e / 8, e % 8);
        let inside = row0 + r < m && k0 + 8 * c < k;
        let at = (row0 + r) as usize * k as usize + (k0 + 8 * c) as usize;
        let src = if inside { a.wrapping_add(at) } else { a };
        // SAFETY: chunk `(r, c ^ r % 8)`, r < 128, c < 8, lies inside the 1024-aligned A stage at
        // `a_s`, 16-byte aligned; where inside, `src` is 16 readable, aligned bytes of A's row (K a
        // multiple of 8, `a` 16-byte aligned: this fn's contract), else it is not read; the stage
        // is read only after a wait, a proxy fence and a barrier (the contract).
        unsafe { copy16_or_zero(chunk(a_s, r, c), src, 16 * inside as u32) };
    }
    for i in 0..BK * BN / 8 / THREADS {
        let e = tid + i * THREADS;
        let (r, c) = (e / (BN / 8), e % (BN / 8));
        let inside = k0 + r < k && col0 + 8 * c < n;
        let at = (k0 + r) as usize * n as usize + (col0 + 8 * c) as usize;
        let src = if inside { b.wrapping_add(at) } else { b };
        let panel = b_s.wrapping_add(((c / 8) * PANEL) as usize);
        // SAFETY: as for A: chunk `(r, c % 8)` (r < 64) of panel `c / 8` < 4 lies inside the B
        // stage at `b_s`; `src` is inside B and aligned (N a multiple of 8, `b` aligned), or not
        // read.
        unsafe { copy16_or_zero(chunk(panel, r, c % 8), src, 16 * inside as u32) };
    }
}

/// # Safety
/// See the entry points; 256 threads per block; T is f16 or bf16; the launch provides the
/// spec's shared bytes.
#[inline(always)]
pub unsafe fn wgmma_async<T: Half>(gemm: Gemm<T>) {
    let (a, b, _, m, n, k) = gemm.plain();
    if !chunked(a, b, n, k) {
        // SAFETY: the entry point's contract holds with T f16 or bf16; the launch's 256 threads and
        // shared bytes (more than one stage of a 256-wide tile) on the 128 x 256 grid are what
        // `one_stage` needs.
        return unsafe { one_stage::<T, Ldmatrix, BN, 8>(gemm) };
    }
    let tid = thread_idx_x();
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // SAFETY: the launch provides the stages and the alignment slack.
    let mut arena = unsafe { SharedArena::<u8>::launch_sized() };
    let a_all = arena.aligned(ATOM, STAGES * A_STAGE);
    let b_all = arena.aligned(ATOM, STAGES * B_STAGE);
    let stage = |s: u32| {
        (
            a_all.wrapping_add((s * A_STAGE) as usize),
            b_all.wrapping_add((s * B_STAGE) as usize),
        )
    };
    let warpgroup = tid / 128;
    let descriptors = Descriptors::<false, true>::of(a_all, b_all, warpgroup);
    let phases = k.div_ceil(BK);
    // Prologue: two phases in flight, one group each (empty past the end, so every wait
    // below counts the same groups).
    for s in 0..2 {
        if s < phases {
            let at = (row0, col0, s * BK);
            // SAFETY: `chunked` held above: K and N multiples of 8, A and B 16-byte aligned; stage
            // s is read only after the `wait_group`, the proxy fence and the barrier of its phase.
            unsafe { copy_phase::<T>(stage(s), (a, b), (m, n, k), at, tid) };
        }
        commit_group();
    }
    let out = gemm.c_out();
    let at = (row0 + warpgroup * 64, col0);
    let mut acc = [0.0f32; 128];
    for phase in 0..phases {
        // This thread's copies of `phase` have landed and are visible to `wgmma`; after the
        // barrier everyone's are, and every warpgroup has finished the `wgmma`s of phase - 2,
        // whose stage the next copies overwrite.
        wait_group::<1>();
        wgmma::fence_proxy_async();
        sync_threads();
        let ahead = phase + 2;
        if ahead < phases {
            let at = (row0, col0, ahead * BK);
            // SAFETY: as above; stage `ahead % STAGES` was last read by the `wgmma`s of phase - 2,
            // which both warpgroups retired (`wgmma::wait_group::<1>`) before the barrier just
            // passed.
            unsafe { copy_phase::<T>(stage(ahead % STAGES), (a, b), (m, n, k), at, tid) };
        }
        commit_group();
        // SAFETY: stage `phase % STAGES` is complete and visible to `wgmma` (this thread's wait and
        // proxy fence, then the barrier for everyone's) and is not refilled before the next
        // `wgmma::wait_group::<1>` and barrier; every thread of the warpgroup runs this with the
        // same descriptors (uniform loop).
        unsafe { descriptors.multiply::<T, _>(&mut acc, phase % STAGES) };
        wgmma::wait_group::<1>(&mut acc);
    }
    wgmma::wait_group::<0>(&mut acc);
    // SAFETY: C is `m x n` at `ldc = n` (SPEC is not strided: the host passes a dense row-major
    // problem); the elements of this thread in its warpgroup's 64 rows of this block's tile are
    // written by no other thread.
    unsafe { epilogue::<T, 128>(&out, &acc, (m, n), at, tid % 128) };
}
