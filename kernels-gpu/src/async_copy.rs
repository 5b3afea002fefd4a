//! Multistage `cp.async` pipeline (sm_80 and newer): three shared stages filled by the copy
//! engine straight from global memory, two phases ahead of the multiply-adds, with no
//! staging registers and no shared stores in the mainloop. A is kept row-major in shared
//! memory (the copy moves contiguous 16-byte groups), so a thread reads its A fragment as
//! 16-byte groups along K, four K steps at a time; B as in `block_tile`. Warp-tiled thread
//! map, 8 x 8 thread tile split 4 + 4.
//!
//! Interior blocks of f32/f64 products with K a multiple of BK copy asynchronously; edge
//! blocks, and f16/bf16 inputs (widened on the way), fill the same stages with checked
//! loads and ordinary stores. Per block, so every barrier stays in uniform control flow.
//!
//! Launch rules (host `kernels.rs`): 256 threads, block tile 128 x 128 stepping BK = 8,
//! grid `ceil(n / 128) x ceil(m / 128)`, shared bytes `3 * (BM * BK + BK * BN) *
//! size_of(Acc)`; only in the sm_80 PTX module.
use crate::block_tile::{Block, ThreadMap, WarpTiled, epilogue, tile_offset};
use crate::coarse::load_or_zero;
use crate::device::async_copy::{commit_group, wait_group};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
#[cfg(target_arch = "nvptx64")]
use crate::element::Bf16;
use crate::element::{Accumulator, Element, gemm_entry_points};

const BM: u32 = 128;
const BN: u32 = 128;
const BK: u32 = 8;
const STAGES: u32 = 3;
const THREADS: u32 = 256;

/// All stages: A as `STAGES * BM` rows of BK, B as `STAGES * BK` rows of BN.
#[derive(Clone, Copy)]
struct Stages<A> {
    a: SharedTile<A>,
    b: SharedTile<A>,
}

/// Fills stage `s` with phase `k0`'s tiles: asynchronously (`fast`) or by checked loads.
///
/// # Safety
/// `a` is `m x k`, `b` is `k x n`; `fast` only for interior blocks of f32/f64 with K a
/// multiple of BK (buffers aligned: `Block::new`); nobody reads stage `s` meanwhile.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn fill<T: Element>(
    st: &Stages<T::Acc>,
    s: u32,
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    blk: Block,
    k0: u32,
    tid: u32,
    fast: bool,
) {
    // Elements per 16-byte copy of the accumulator type (4 for f32, 2 for f64).
    let per = 16 / size_of::<T::Acc>() as u32;
    for i in 0..BM * BK / per / THREADS {
        let g = tid + i * THREADS;
        let (r, col) = (g / (BK / per), per * (g % (BK / per)));
        let (row, kc) = (blk.row0 + r, k0 + col);
        if fast {
            let src = unsafe { a.add(row as usize * k as usize + kc as usize) };
            unsafe { st.a.copy16_from(s * BM + r, col, src.cast::<T::Acc>()) };
        } else {
            for j in 0..per {
                unsafe {
                    st.a.set(s * BM + r, col + j, load_or_zero(a, row, kc + j, m, k))
                };
            }
        }
    }
    for i in 0..BK * BN / per / THREADS {
        let g = tid + i * THREADS;
        let (r, col) = (g / (BN / per), per * (g % (BN / per)));
        let (kr, cc) = (k0 + r, blk.col0 + col);
        if fast {
            let src = unsafe { b.add(kr as usize * n as usize + cc as usize) };
            unsafe { st.b.copy16_from(s * BK + r, col, src.cast::<T::Acc>()) };
        } else {
            for j in 0..per {
                unsafe {
                    st.b.set(s * BK + r, col + j, load_or_zero(b, kr, cc + j, k, n))
                };
            }
        }
    }
}

/// The thread tile's multiply-adds over stage `s`, A read 4 K steps at a time.
///
/// # Safety
/// Stage `s` is complete and visible (wait + barrier) and nobody writes it meanwhile.
#[inline(always)]
unsafe fn multiply<A: Accumulator>(
    st: &Stages<A>,
    s: u32,
    acc: &mut [[A; 8]; 8],
    (tr, tc): (u32, u32),
) {
    for kq in 0..BK / 4 {
        let mut af = [[A::ZERO; 4]; 8];
        for i in 0..8 {
            af[i] = unsafe {
                st.a.get4(s * BM + tile_offset(tr, i as u32, BM / 2), 4 * kq)
            };
        }
        for kk in 0..4 {
            let krow = s * BK + 4 * kq + kk as u32;
            let (b_lo, b_hi) =
                unsafe { (st.b.get4(krow, 4 * tc), st.b.get4(krow, BN / 2 + 4 * tc)) };
            let bf = [
                b_lo[0], b_lo[1], b_lo[2], b_lo[3], b_hi[0], b_hi[1], b_hi[2], b_hi[3],
            ];
            for i in 0..8 {
                for j in 0..8 {
                    acc[i][j] = acc[i][j].mul_add(af[i][kk], bf[j]);
                }
            }
        }
    }
}

/// # Safety
/// See the entry points; 256 threads per block.
#[inline(always)]
pub unsafe fn async_copy<T: Element>(
    a: *const T,
    b: *const T,
    c: *mut T::Acc,
    m: u32,
    n: u32,
    k: u32,
) {
    let tid = thread_idx_x();
    let me = WarpTiled::coords::<BM, BN>(tid);
    let blk = Block::new::<T, BM, BN>((a, b, c), (m, n, k), (block_idx_y(), block_idx_x()));
    let fast = T::IS_ACC && blk.interior && k.is_multiple_of(BK);
    // SAFETY: the launch provides STAGES stages of shared memory.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let st = Stages {
        a: arena.tile(STAGES * BM, BK),
        b: arena.tile(STAGES * BK, BN),
    };
    let mut acc = [[T::Acc::ZERO; 8]; 8];
    let phases = k.div_ceil(BK);

    // Prologue: the first STAGES - 1 phases in flight, one batch each (empty ones too, so
    // the batch count per phase stays fixed).
    for s in 0..STAGES - 1 {
        if s < phases {
            unsafe { fill(&st, s, (a, b), (m, n, k), blk, s * BK, tid, fast) };
        }
        commit_group();
    }
    // Mainloop.
    for phase in 0..phases {
        wait_group::<{ STAGES - 2 }>(); // this thread's copies of `phase` have landed
        sync_threads(); // everyone's have; and everyone is done with phase - 1's stage
        let ahead = phase + STAGES - 1;
        if ahead < phases {
            unsafe {
                fill(
                    &st,
                    ahead % STAGES,
                    (a, b),
                    (m, n, k),
                    blk,
                    ahead * BK,
                    tid,
                    fast,
                )
            };
        }
        commit_group();
        unsafe { multiply(&st, phase % STAGES, &mut acc, me) };
    }
    // Epilogue.
    unsafe { epilogue::<_, BM, BN>(c, &acc, (m, n), blk, me) };
}

gemm_entry_points!(async_copy;
    async_copy_f32: f32, async_copy_f64: f64, async_copy_f16: f16, async_copy_bf16: Bf16);
