//! Tensor cores, first rung (sm_80 and newer): f16/bf16 inputs multiplied by `mma.sync
//! .m16n8k16` with f32 accumulators, instead of widened to f32 for the SIMT pipes.
//!
//! A block of 8 warps computes a 128 x 128 tile of C, stepping BK = 32 along K. The
//! inputs go to shared memory as they are (16-bit, A row-major, B row-major), rows padded
//! by 8 elements so that a warp's fragment reads hit 32 distinct banks; each warp owns a
//! 64 x 32 warp tile, 4 x 4 `mma` tiles of 16 x 8, and per K step of 16 reads its A and B
//! fragments from shared memory (A: one 32-bit read per register; B, whose pairs run down
//! a column, two 16-bit reads) and issues 16 `mma.sync`. One stage, a barrier after loading
//! and one after use. What is left for the next rungs: `ldmatrix` (one instruction per
//! four registers, B transposed on the way), a multi-stage `cp.async` pipeline, a swizzled
//! layout, and on Hopper `wgmma` with TMA.
//!
//! Every load and store is bounds-checked: interior blocks load 4 elements per access,
//! edge blocks element by element with zeros outside A and B, and C is written only inside.
//!
//! Launch rules ([`SPEC`]): 256 threads, grid `ceil(n / 128) x ceil(m / 128)`, shared bytes
//! `(128 x 40 + 32 x 136) x 2`; only in the sm_80 PTX module; f16 and bf16 only.
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Shared, Threads, Tile};
use crate::device::global::{load, load4, store};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::device::vector::aligned4;
#[cfg(target_arch = "nvptx64")]
use crate::element::Bf16;
use crate::element::{Accumulator, Element};
use crate::problem::{Gemm, entry_points};

const BM: u32 = 128;
const BN: u32 = 128;
const BK: u32 = 32;
/// Row padding of the shared tiles, in elements (16 bytes).
const PAD: u32 = 8;
/// Warps along N; the 8 warps form 2 x 4, each a 64 x 32 warp tile.
const WARPS_N: u32 = 4;
/// `mma` tiles per warp tile: 4 of 16 rows, 4 of 8 columns.
const MT: usize = 4;
const NT: usize = 4;

pub const SPEC: KernelSpec = KernelSpec {
    name: "mma_sync",
    file: file!(),
    idea: "tensor cores: `mma.sync` m16n8k16 (f32 accumulators), 16-bit tiles in shared memory, fragments read from it; 8 warps of 64 x 32",
    arch: Arch::Sm80,
    threads: Threads::Fixed(256, 1),
    tile: Tile::Fixed { rows: BM, cols: BN },
    grid: Grid::Tiles,
    shared: Shared::InputElements(BM * (BK + PAD) + BK * (BN + PAD)),
    min_blocks_per_sm: PerAcc::NONE,
    elements: &[Elem::F16, Elem::Bf16],
    candidate: Candidate::Always,
    cpu: true,
    tensor_cores: true,
};

/// Four elements at `(row, col..col + 4)` of a `rows x cols` row-major matrix, zero
/// outside it; one 8-byte load where `vector` says the four are inside and aligned.
///
/// # Safety
/// `ptr` holds `rows * cols` elements; with `vector`, the four are inside and 4-aligned.
#[inline(always)]
unsafe fn four<T: Element>(
    ptr: *const T,
    (row, col): (u32, u32),
    (rows, cols): (u32, u32),
    vector: bool,
) -> [T; 4] {
    let at = |c: u32| row as usize * cols as usize + c as usize;
    if vector {
        return unsafe { load4(ptr, at(col)) };
    }
    let mut v = [T::ZERO; 4];
    for (j, x) in v.iter_mut().enumerate() {
        let c = col + j as u32;
        if row < rows && c < cols {
            *x = unsafe { load(ptr, at(c)) };
        }
    }
    v
}

/// Two 16-bit elements as one fragment register, the first in the low half.
#[inline(always)]
fn pack<T: Element>(lo: T, hi: T) -> u32 {
    lo.bits16() as u32 | (hi.bits16() as u32) << 16
}

/// The A fragment of the 16 x 16 tile at `(r0, k0)` of `a_s` for the lane `(g, t)`.
///
/// # Safety
/// The tile is complete (a barrier since its last store).
#[inline(always)]
unsafe fn a_fragment<T: Element>(
    a_s: &SharedTile<T>,
    (r0, k0): (u32, u32),
    (g, t): (u32, u32),
) -> [u32; 4] {
    let (r, c) = (r0 + g, k0 + 2 * t);
    unsafe {
        [
            a_s.get_pair_bits(r, c),
            a_s.get_pair_bits(r + 8, c),
            a_s.get_pair_bits(r, c + 8),
            a_s.get_pair_bits(r + 8, c + 8),
        ]
    }
}

/// The B fragment of the 16 x 8 tile at `(k0, c0)` of `b_s` for the lane `(g, t)`.
///
/// # Safety
/// As [`a_fragment`].
#[inline(always)]
unsafe fn b_fragment<T: Element>(
    b_s: &SharedTile<T>,
    (k0, c0): (u32, u32),
    (g, t): (u32, u32),
) -> [u32; 2] {
    let (k, c) = (k0 + 2 * t, c0 + g);
    unsafe {
        [
            pack(b_s.get(k, c), b_s.get(k + 1, c)),
            pack(b_s.get(k + 8, c), b_s.get(k + 9, c)),
        ]
    }
}

/// # Safety
/// See the entry points; 256 threads per block; T is f16 or bf16 (the other types have no
/// entry point).
#[inline(always)]
pub unsafe fn mma_sync<T: Element>(gemm: Gemm<T>) {
    let (a, b, c, m, n, k) = gemm.plain();
    let tid = thread_idx_x();
    let (warp, lane) = (tid / 32, tid % 32);
    let me = (lane / 4, lane % 4);
    let (wm, wn) = ((warp / WARPS_N) * 64, (warp % WARPS_N) * 32);
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // SAFETY: the launch provides both padded tiles of the input type.
    let mut arena = unsafe { SharedArena::<T>::launch_sized() };
    let a_s = arena.tile(BM, BK + PAD);
    let b_s = arena.tile(BK, BN + PAD);
    let interior = row0 + BM <= m
        && col0 + BN <= n
        && k.is_multiple_of(4)
        && n.is_multiple_of(4)
        && aligned4(a)
        && aligned4(b);
    // This thread's share of a phase's loads: 16 elements of a row of A and of B.
    let (ar, ac) = (tid / 2, (tid % 2) * 16);
    let (br, bc) = (tid / 8, (tid % 8) * 16);

    let mut acc = [[[T::Acc::ZERO; 4]; NT]; MT];
    for phase in 0..k.div_ceil(BK) {
        let k0 = phase * BK;
        let vector = interior && k0 + BK <= k;
        for q in 0..4 {
            unsafe {
                let va = four(a, (row0 + ar, k0 + ac + 4 * q), (m, k), vector);
                let vb = four(b, (k0 + br, col0 + bc + 4 * q), (k, n), vector);
                a_s.set4(ar, ac + 4 * q, va);
                b_s.set4(br, bc + 4 * q, vb);
            }
        }
        sync_threads(); // the tiles are complete
        for step in 0..BK / 16 {
            let kk = 16 * step;
            let mut af = [[0u32; 4]; MT];
            let mut bf = [[0u32; 2]; NT];
            for i in 0..MT {
                af[i] = unsafe { a_fragment(&a_s, (wm + 16 * i as u32, kk), me) };
            }
            for j in 0..NT {
                bf[j] = unsafe { b_fragment(&b_s, (kk, wn + 8 * j as u32), me) };
            }
            for i in 0..MT {
                for j in 0..NT {
                    acc[i][j] = T::mma_m16n8k16(af[i], bf[j], acc[i][j]);
                }
            }
        }
        sync_threads(); // everyone is done before the next phase overwrites the tiles
    }

    // Epilogue: each lane's elements (rows g and g + 8, columns 2t and 2t + 1 of each tile).
    let (g, t) = me;
    for i in 0..MT {
        for j in 0..NT {
            for h in 0..2 {
                let row = row0 + wm + 16 * i as u32 + g + 8 * h;
                let col = col0 + wn + 8 * j as u32 + 2 * t;
                for e in 0..2 {
                    if row < m && col + e < n {
                        let at = row as usize * n as usize + (col + e) as usize;
                        unsafe { store(c, at, acc[i][j][2 * h as usize + e as usize]) };
                    }
                }
            }
        }
    }
}

entry_points!(mma_sync; mma_sync_f16: f16, mma_sync_bf16: Bf16);
