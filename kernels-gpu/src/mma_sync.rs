//! Tensor cores, first rung (sm_80 and newer): f16/bf16 inputs multiplied by `mma.sync
//! .m16n8k16` with f32 accumulators, instead of widened to f32 for the SIMT pipes.
//!
//! The block tile of `tensor_tile` in one stage: each phase loads the 16-bit tiles through
//! registers (4 elements per access in interior blocks, checked element by element at the
//! edges), a barrier, 32 `mma` per warp, a barrier. The fragments are read from shared
//! memory element-wise: per K step of 16 a warp issues 16 32-bit reads for A and 16 16-bit
//! reads for B (its pairs run down a column) for 16 `mma`.
//!
//! Launch rules ([`SPEC`]): 256 threads, grid `ceil(n / 128) x ceil(m / 128)`, one stage of
//! shared memory (`(128 x 40 + 32 x 136) x 2` bytes); only in the sm_80 module; f16, bf16.
use crate::catalogue::{
    Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Precision, Shared, Threads, Tile,
};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
#[cfg(target_arch = "nvptx64")]
use crate::element::{Bf16, Narrow};
use crate::problem::{Gemm, entry_points};
use crate::tensor_tile::{self, BK, BM, Fragments, Lane, MT, PAD, Stage, THREADS};

/// The block tile's width and its `mma` tiles per warp along N.
const BN: u32 = 128;
const NT: usize = 4;

/// The spec of a kernel on `tensor_tile`'s block tile with `stages` stages.
pub(crate) const fn tensor_spec(
    (name, file): (&'static str, &'static str),
    idea: &'static str,
    (bn, bk, stages): (u32, u32, u32),
) -> KernelSpec {
    KernelSpec {
        name,
        file,
        idea,
        arch: Arch::Sm80,
        threads: Threads::Fixed(THREADS, 1),
        tile: Tile::Fixed { rows: BM, cols: bn },
        grid: Grid::Tiles,
        shared: Shared::InputElements(stages * tensor_tile::stage_elements(bn, bk)),
        min_blocks_per_sm: PerAcc::NONE,
        elements: &[Elem::F16, Elem::Bf16],
        candidate: Candidate::Always,
        cpu: true,
        tensor_cores: true,
        tma: None,
        precision: Precision::Exact,
        strided: false,
    }
}

pub const SPEC: KernelSpec = tensor_spec(
    ("mma_sync", file!()),
    "tensor cores: `mma.sync` m16n8k16 (f32 accumulators), 16-bit tiles in shared memory, fragments read from it element-wise; 8 warps of 64 x 32",
    (BN, BK, 1),
);

/// Two 16-bit elements as one fragment register, the first in the low half.
#[inline(always)]
fn pack<T: Element>(lo: T, hi: T) -> u32 {
    lo.bits16() as u32 | (hi.bits16() as u32) << 16
}

/// Fragments read from shared memory with plain loads.
pub struct SharedLoads;

impl Fragments for SharedLoads {
    #[inline(always)]
    unsafe fn load<T: Element, const NT: usize>(
        stage: &Stage<T>,
        kk: u32,
        me: Lane,
    ) -> ([[u32; 4]; MT], [[u32; 2]; NT]) {
        let (g, t) = me.group();
        let (a_s, b_s): (&SharedTile<T>, &SharedTile<T>) = (&stage.a, &stage.b);
        let mut af = [[0u32; 4]; MT];
        let mut bf = [[0u32; 2]; NT];
        for (i, f) in af.iter_mut().enumerate() {
            let (r, c) = (me.warp_row + 16 * i as u32 + g, kk + 2 * t);
            *f = unsafe {
                [
                    a_s.get_pair_bits(r, c),
                    a_s.get_pair_bits(r + 8, c),
                    a_s.get_pair_bits(r, c + 8),
                    a_s.get_pair_bits(r + 8, c + 8),
                ]
            };
        }
        for (j, f) in bf.iter_mut().enumerate() {
            let (k, c) = (kk + 2 * t, me.warp_col + 8 * j as u32 + g);
            *f = unsafe {
                [
                    pack(b_s.get(k, c), b_s.get(k + 1, c)),
                    pack(b_s.get(k + 8, c), b_s.get(k + 9, c)),
                ]
            };
        }
        (af, bf)
    }
}

/// The one-stage kernel with fragments from `F`, for a `BM x BN` block tile (NT `mma` tiles
/// per warp along N): load, barrier, multiply, barrier.
///
/// # Safety
/// See the entry points; 256 threads per block (more only meet the barriers); T is f16 or bf16; the launch provides one
/// stage of shared memory for a `BN`-wide tile.
#[inline(always)]
pub unsafe fn one_stage<T: Element, F: Fragments, const BN: u32, const NT: usize>(gemm: Gemm<T>) {
    let at = (block_idx_y() * BM, block_idx_x() * BN);
    unsafe { one_stage_tile::<T, F, BN, NT>(gemm, at) }
}

/// [`one_stage`] for the block tile at `(row0, col0)`.
///
/// # Safety
/// As [`one_stage`].
#[inline(always)]
pub unsafe fn one_stage_tile<T: Element, F: Fragments, const BN: u32, const NT: usize>(
    gemm: Gemm<T>,
    (row0, col0): (u32, u32),
) {
    let (a, b, c, m, n, k) = gemm.plain();
    let tid = thread_idx_x();
    let me = Lane::of::<BN>(tid);
    // SAFETY: the launch provides one stage of both padded tiles of the input type.
    let mut arena = unsafe { SharedArena::<T>::launch_sized() };
    let stage = Stage {
        a: arena.tile(BM, BK + PAD),
        b: arena.tile(BK, BN + PAD),
    };
    let interior = tensor_tile::interior::<T, BN>((a, b), (m, n, k), (row0, col0));
    // Threads past the tile's 256 (a warp-specialised kernel's producers, which come here
    // when TMA cannot read the inputs) only meet the barriers.
    let works = tid < THREADS;
    let mut acc = [[[T::Acc::ZERO; 4]; NT]; MT];
    for phase in 0..k.div_ceil(BK) {
        let k0 = phase * BK;
        let vector = interior && k0 + BK <= k;
        let at = (row0, col0, k0);
        if works {
            unsafe { tensor_tile::load_phase::<T, BN>(&stage, (a, b), (m, n, k), at, tid, vector) };
        }
        sync_threads(); // the tiles are complete
        if works {
            unsafe { tensor_tile::multiply::<T, F, NT, BK, false>(&stage, &mut acc, me) };
        }
        sync_threads(); // everyone is done before the next phase overwrites the tiles
    }
    if works {
        unsafe { tensor_tile::epilogue::<T, _>(c, &acc, (m, n), (row0, col0), me) };
    }
}

/// # Safety
/// See the entry points; 256 threads per block; T is f16 or bf16 (the other types have no
/// entry point).
#[inline(always)]
pub unsafe fn mma_sync<T: Element>(gemm: Gemm<T>) {
    unsafe { one_stage::<T, SharedLoads, BN, NT>(gemm) }
}

entry_points!(mma_sync; mma_sync_f16: f16, mma_sync_bf16: Bf16, mma_sync_f16_f16: Narrow<f16>, mma_sync_bf16_bf16: Narrow<Bf16>);
