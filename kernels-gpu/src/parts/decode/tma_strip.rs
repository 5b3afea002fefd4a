//! The decode strip fed by TMA: a block owns a strip of 256 columns of C and a slice of K
//! (the decode split's), and one thread copies per stage A's 16 x 64 box (two for sweeps of
//! 32 rows) and B's four 64 x 64 panels, landed 128-byte swizzled and zero-filled past the
//! edges, `S` stages ahead on `mbarrier`s; eight warps wait for each stage, multiply it
//! ([`StripStages`]: `mma.sync` or `wgmma`) and release it; warp 0 refills it once every
//! warp has. Each pass of 16 rows of C ends in the split-K's finish (`Slices`).
//!
//! More than 16 rows of C go in sweeps of 32: a stage holds two of A's boxes and B's four
//! panels (36 KiB, five stages), so B is read once for 17-32 rows; each pass then has its own
//! finish.
use crate::catalogue::{
    Arch, Candidate, Elem, Grid, KernelSpec, PtxFacts, Shared, TensorMaps, Threads, Tile,
};
use crate::device::mbarrier;
use crate::device::shared::{SharedArena, SharedTile, shared_address};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, sync_warp, thread_idx_x};
use crate::device::tma::{self, MAP_BYTES};
use crate::element::Half;
use crate::parts::decode::mma_strip::ROWS;
use crate::parts::schedule::decode_split::STRIP;
use crate::parts::schedule::k_slice;
use crate::parts::schedule::split_k::Slices;
use crate::parts::wgmma::warp_specialised::StageBarriers;
use crate::problem::Gemm;

/// K rows of a stage: one 128-byte row of A.
pub(crate) const STAGE_K: u32 = 64;
/// Stages of a sweep over 16 rows of C, and over 32 (whose stages hold two boxes of A).
const STAGES: u32 = 6;
const WIDE_STAGES: u32 = 5;
/// B's panels of 64 columns in a strip.
const PANELS: u32 = STRIP / 64;
/// Warps of a block: two per panel.
const WARPS: u32 = 2 * PANELS;
const THREADS: u32 = 32 * WARPS;
/// Bytes of A's 16 x 64 box and of one of B's 64 x 64 panels.
pub(crate) const A_BYTES: u32 = ROWS * 128;
pub(crate) const PANEL: u32 = STAGE_K * 128;
/// Bytes of a stage of a sweep over `passes` boxes of A: the boxes, then B's panels.
const fn stage_bytes(passes: u32) -> u32 {
    passes * A_BYTES + PANELS * PANEL
}
/// The 128-byte swizzle's atom (8 rows of 128 bytes): boxes start at multiples of it.
const ATOM: u32 = 1024;
const _: () = assert!(A_BYTES.is_multiple_of(ATOM) && PANEL.is_multiple_of(ATOM));
/// Shared f32s ahead of the stages: one pass's sums and the last-block flag.
const SUMS: u32 = ROWS * STRIP + 4;
/// Shared bytes of a sweep's layout: sums and flag, the stages (aligned), the barriers.
const fn layout_bytes(passes: u32, stages: u32) -> u32 {
    4 * SUMS + ATOM + stages * stage_bytes(passes) + 8 + 2 * stages * 8
}
const SHARED_BYTES: u32 = max(layout_bytes(1, STAGES), layout_bytes(2, WIDE_STAGES));
const fn max(a: u32, b: u32) -> u32 {
    if a > b { a } else { b }
}
/// The tensor maps: A in 16 x 64 boxes, B in 64 x 64 panels as stored (A transposed is
/// never read: A is read row-major only); `decode_mma` where TMA cannot read the operands.
const MAPS: TensorMaps = TensorMaps {
    a_box: (ROWS, STAGE_K),
    b_box: (STAGE_K, 64),
    a_t_box: (STAGE_K, 64),
    b_t_box: (64, STAGE_K),
    pack: None,
    otherwise: Some("decode_mma"),
};

/// The spec of a kernel on the strip (launch rules: [`THREADS`] threads; grid `ceil(n /
/// 256) x splits`, `Problem::ctas`, one block per SM; [`SHARED_BYTES`]; the workspace's
/// tensor maps ([`MAPS`]), then the split's counters, zero at launch, and planes; f16,
/// bf16; the plain product, and the dense one with B transposed where TMA reads it), with
/// the facts its PTX shows.
pub(crate) const fn spec(
    name_file: (&'static str, &'static str),
    idea: &'static str,
    ptx: &'static [PtxFacts],
) -> KernelSpec {
    KernelSpec::new(
        name_file,
        idea,
        Arch::Sm90a,
        Threads::Fixed(THREADS, 1),
        Tile::Fixed {
            rows: ROWS,
            cols: STRIP,
        },
    )
    .with_grid(Grid::SplitKLastBlock { per_sm: 1 })
    .with_shared(Shared::InputElements(SHARED_BYTES / 2))
    .with_elements(&[Elem::F16, Elem::Bf16])
    .with_candidate(Candidate::WhenSideAtMost(32))
    .on_tensor_cores()
    .with_b_transposed()
    .with_tma(MAPS)
    .with_ptx(ptx)
}

/// A kernel on the strip: its multiply of a stage for each sweep (16 rows of C, or 32 in
/// two boxes of A) and each orientation of B (row-major, or stored `n x k`).
pub(crate) trait StripKernel {
    type Rows16: StripStages;
    type Rows32: StripStages;
    type Rows16BT: StripStages;
    type Rows32BT: StripStages;
}

/// A kernel's body on the strip: where TMA reads A and B, the sweep for C's rows (up to 16
/// rows in one pass over B in [`STAGES`] stages; more in sweeps of 32, two boxes of A a
/// stage in [`WIDE_STAGES`], so 17-32 rows read B once: a second pass found it evicted from
/// L2), B as stored. Where TMA cannot, nothing: the host runs `decode_mma` ([`MAPS`]).
/// Sweeps of 64 rows (four boxes) ran 33-64 rows slower than the `wgmma` kernels (H100, 64 x
/// 8192 x 4096 bf16 on `decode_tma`: 73.0% of cuBLAS against 95.8%), and are not kept.
///
/// # Safety
/// The launch follows [`spec`]'s rules (`Problem::ctas` = splits, the counters zero, the
/// tensor maps in the workspace where TMA can read A and B).
#[inline(always)]
pub(crate) unsafe fn strip<T: Half, K: StripKernel>(g: Gemm<T>) {
    // Each slot's multiply reads the stages its slot lays out.
    const {
        assert!(!K::Rows16::B_T && K::Rows16::PASSES == 1);
        assert!(!K::Rows32::B_T && K::Rows32::PASSES == 2);
        assert!(K::Rows16BT::B_T && K::Rows16BT::PASSES == 1);
        assert!(K::Rows32BT::B_T && K::Rows32BT::PASSES == 2);
    };
    // The split-K's counters and planes follow the tensor maps.
    let split_k = Gemm {
        workspace: g
            .workspace
            .wrapping_add(TensorMaps::BYTES / size_of::<T::Acc>()),
        ..g
    };
    let (a, b, ..) = g.plain();
    if !tma::reads(&g.p, (a as u64, b as u64), size_of::<T>() as u64) {
        return;
    }
    match (g.p.strides().b_t, g.p.m <= ROWS) {
        // SAFETY: TMA reads A and B, so the host wrote their maps (B as stored) at the
        // workspace's start, and `split_k` is the workspace after them: `streamed`'s
        // contract; `layout_bytes(1, STAGES)` is at most SHARED_BYTES.
        (false, true) => unsafe { streamed::<T, K::Rows16, STAGES>(g, split_k) },
        // SAFETY: as above; `layout_bytes(2, WIDE_STAGES)` is at most SHARED_BYTES too.
        (false, false) => unsafe { streamed::<T, K::Rows32, WIDE_STAGES>(g, split_k) },
        // SAFETY: as above, B's map of B transposed.
        (true, true) => unsafe { streamed::<T, K::Rows16BT, STAGES>(g, split_k) },
        // SAFETY: as above, B's map of B transposed, two boxes of A a stage.
        (true, false) => unsafe { streamed::<T, K::Rows32BT, WIDE_STAGES>(g, split_k) },
    }
}

/// What a kernel on the strip does with a stage, lane by lane: a sweep's accumulators, the
/// stage's multiply, a pass's sums. `B_T`: B stored `n x k` (its panels' rows are columns of
/// C), else row-major; `PASSES` boxes of A a stage (16 rows of C each).
pub(crate) trait StripStages: Copy {
    const B_T: bool;
    const PASSES: u32;
    /// A sweep's accumulators.
    type Acc: Copy;
    const ZERO: Self::Acc;
    /// This lane's (warp `warp` of [`WARPS`], lane `lane`).
    fn new(warp: u32, lane: u32) -> Self;
    /// The stage at shared address `stage` (the boxes of A, then B's panels) into `acc`.
    ///
    /// # Safety
    /// The whole warp (for `wgmma`, every warp) calls it once the stage has landed, and the
    /// stage stays as it is until the call returns.
    unsafe fn multiply<T: Half>(&self, acc: &mut Self::Acc, stage: u32);
    /// Pass `p`'s 16 rows of the sweep into `sums` (`ROWS x STRIP`): this lane's elements.
    ///
    /// # Safety
    /// `sums` is the block's sums tile, not read until the finish's first barrier.
    unsafe fn store_pass(&self, acc: &mut Self::Acc, p: u32, sums: &SharedTile<f32>);
}

/// The mainloop on `S` of TMA's stages and the split-K's finish of each pass, for `C`.
///
/// # Safety
/// The launch follows the decode split's rules (`Problem::ctas` = splits, [`THREADS`]
/// threads, [`SHARED_BYTES`] of shared memory), with the tensor maps of A and B (B as
/// `C::B_T` says) at the workspace's start and `split_k` the workspace after them, which
/// holds `decode_mma`'s counters (zero at launch) and planes; `layout_bytes(C::PASSES, S)
/// <= SHARED_BYTES`.
#[inline(always)]
unsafe fn streamed<T: Half, C: StripStages, const S: u32>(g: Gemm<T>, split_k: Gemm<T>) {
    let stage_bytes = stage_bytes(C::PASSES);
    let (_, _, _, m, _, k) = g.plain();
    let splits = g.p.ctas.max(1);
    let (strip, split) = (block_idx_x(), block_idx_y());
    let (k0, k1) = k_slice(k, splits, split, STAGE_K);
    let phases = (k1 - k0).div_ceil(STAGE_K);
    let tid = thread_idx_x();
    let (warp, lane) = (tid / 32, tid % 32);
    // SAFETY: the launch provides SHARED_BYTES: the sums and flag, then (aligned) the
    // stages and the barriers.
    let mut accs = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let sums = accs.tile(ROWS, STRIP);
    let last_flag = accs.tile(1, 4);
    // SAFETY: the same launch-sized region as bytes: past the sums and flag, the aligned
    // stages and barriers fit in SHARED_BYTES.
    let mut arena = unsafe { SharedArena::<u8>::launch_sized() };
    let _sums = arena.aligned(16, 4 * SUMS);
    let stages = arena.aligned(ATOM, S * stage_bytes);
    let bars = StageBarriers::<S>(arena.aligned(8, 2 * S * 8).cast::<u64>());
    if tid == 0 {
        // SAFETY: thread 0 alone, before the barrier that publishes them: 2 x S 8-byte
        // aligned mbarriers carved for nothing else.
        unsafe { bars.init(WARPS) };
        mbarrier::fence_init();
    }
    sync_threads(); // the barriers are ready
    let maps = g.workspace.cast::<u8>().cast_const();
    let (a_map, b_map) = (maps, maps.wrapping_add(MAP_BYTES));
    let sweep_rows = C::PASSES * ROWS;
    let sweeps = m.div_ceil(sweep_rows);
    let total = sweeps * phases;
    // Phase `i` of all sweeps' (thread 0): A's boxes and B's panels into stage `i % S`.
    let issue = |i: u32| {
        let s = i % S;
        // (`phases` is not 0 where a phase is issued.)
        let per_sweep = phases.max(1);
        let (row0, kk) = ((i / per_sweep) * sweep_rows, k0 + (i % per_sweep) * STAGE_K);
        let at = stages.wrapping_add((s * stage_bytes) as usize);
        let full = bars.full(s);
        // SAFETY: the maps, 64-byte aligned at the workspace's start, are A's and B's (the
        // host's promise where TMA reads them); `at`, its boxes and its panels are
        // 1024-aligned; `full` expects the copies' `stage_bytes` (boxes past C's rows are
        // zero-filled, and counted); the stage is free (first round, or its `empty` phase
        // waited for).
        unsafe {
            mbarrier::arrive_expect_tx(full, stage_bytes);
            for p in 0..C::PASSES {
                let box_at = at.wrapping_add((p * A_BYTES) as usize);
                tma::load_3d(box_at, a_map, (kk, row0 + p * ROWS, 0), full);
            }
            for p in 0..PANELS {
                let panel = at.wrapping_add((C::PASSES * A_BYTES + p * PANEL) as usize);
                let col0 = strip * STRIP + 64 * p;
                let box_at = if C::B_T { (kk, col0, 0) } else { (col0, kk, 0) };
                tma::load_3d(panel, b_map, box_at, full);
            }
        }
    };
    if tid == 0 {
        for i in 0..total.min(S) {
            issue(i);
        }
    }
    let consumer = C::new(warp, lane);
    let base = shared_address(stages);
    let mut it = 0;
    for sweep in 0..sweeps {
        let mut acc = C::ZERO;
        for _ in 0..phases {
            let s = it % S;
            // SAFETY: `full(s)` was initialised and published by the barrier above.
            unsafe { mbarrier::wait(bars.full(s), (it / S) % 2) };
            // SAFETY: the stage has landed (`full` waited) and stays until this warp releases
            // it below; every warp runs it (uniform loops).
            unsafe { consumer.multiply::<T>(&mut acc, base + s * stage_bytes) };
            sync_warp(); // every lane's reads of the stage are done
            if lane == 0 {
                // SAFETY: `empty(s)` is initialised and published; one arrival per warp, the
                // WARPS that `init(WARPS)` counts.
                unsafe { mbarrier::arrive(bars.empty(s)) };
            }
            if warp == 0 && it + S < total {
                // The whole warp waits (none of its lanes at a warp-wide operation while
                // one waits for the other warps); thread 0 refills the stage.
                // SAFETY: as above; the whole of warp 0 waits, then thread 0 refills the
                // stage that every warp has released.
                unsafe { mbarrier::wait(bars.empty(s), (it / S) % 2) };
                if lane == 0 {
                    issue(it + S);
                }
            }
            sync_warp(); // warp 0 together again before its next multiply
            it += 1;
        }
        for p in 0..C::PASSES {
            let row0 = sweep * sweep_rows + p * ROWS;
            if row0 >= m {
                break; // (uniform: the block's rows)
            }
            // SAFETY: the block's sums tile; its last reads ended at `finish`'s closing
            // barrier.
            unsafe { consumer.store_pass(&mut acc, p, &sums) };
            let slices = Slices::of(&split_k, ROWS);
            // SAFETY: every thread calls it (the sweep and pass loops are uniform) once the
            // sums are set; `split_k`'s workspace, after the maps, holds `decode_mma`'s
            // zeroed counters and planes (the contract).
            unsafe {
                slices.finish::<ROWS, 1, THREADS>((row0, (m - row0).min(ROWS)), &sums, &last_flag)
            };
        }
    }
}
