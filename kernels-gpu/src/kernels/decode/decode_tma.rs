//! Decode products on Hopper with B streamed by the Tensor Memory Accelerator:
//! `decode_mma`'s division of the work (a strip of 256 columns and a slice of K per block,
//! `mma.sync` m16n8k16 on up to 16 rows of C, the one-launch split-K whose last block adds
//! the slices in K order), with the copies done by TMA instead of the lanes.
//!
//! Why: `decode_mma` and `wgmma_128x64` read B at 1.6-1.9 TB/s at 16 x 8192 x 8192 on an
//! H100 (ncu: HBM 53-60% busy) and at half that at 4096 x 4096, where cuBLAS reads it at
//! 2.4 TB/s. `decode_mma`'s lanes issue every 16-byte copy, a warp has three 8 KiB stages,
//! and each K step reloads A's fragment from global memory with bounds checks; its slices
//! are 4 steps deep at 16 x 4096 x 4096. Here one thread issues per stage one copy of A's
//! 16 x 64 box and four of B's 64 x 64 panels (34 KiB, landed 128-byte swizzled and
//! zero-filled past the edges), six stages ahead on `mbarrier`s: 204 KiB in flight per SM
//! with no copy instructions in the warps, which only wait, `ldmatrix` and multiply.
//!
//! Two warps share a panel of 64 columns, each on 32 of them (4 `mma` tiles, 16
//! accumulators a lane): 8 warps a block. With one warp per panel (32 accumulators a lane)
//! the warp issued an instruction every 15 cycles, waiting mostly for the next one to be
//! fetched (ncu, H100, 16 x 4096 x 4096), with one warp per scheduler to hide it; the block
//! was at 75-98% of cuBLAS on Llama-3-8B decode layers, and is at its speed with two. A stage
//! is free again once each warp's lane 0 has arrived on its `empty` barrier; warp 0 waits
//! for that and its thread 0 refills it (warp 0 waits for the slowest warp, with the other
//! stages in flight).
//!
//! B stored transposed (`n x k`, as PyTorch stores a layer's weight) comes through its own
//! map in boxes of 64 columns x 64 K, the same bytes a panel; plain `ldmatrix` then gives
//! the fragments `ldmatrix.trans` gives from a row-major panel. The two mainloops are one
//! function with the orientation a constant, so neither carries the other's branch.
//!
//! More than 16 rows of C go in sweeps of 32: a stage holds two of A's boxes and B's four
//! panels (36 KiB, five stages), and each warp multiplies its B fragments into both passes'
//! accumulators, so B is read once for 17-32 rows; each pass then has its own finish.
//!
//! Where TMA cannot read A and B (N or K not a multiple of 8, a misaligned operand) the
//! host runs `decode_mma` instead ([`TensorMaps::otherwise`]): its body wants 128 threads.
//!
//! Launch rules ([`SPEC`]): 256 threads; grid `ceil(n / 256) x splits` (`Problem::ctas`,
//! one block per SM: [`crate::parts::schedule::decode_split::splits`]); 226,424 shared bytes; workspace (f32
//! units): the two tensor maps (64), then `decode_mma`'s (counters, zero at launch, and
//! planes); only in the sm_90a module; f16, bf16; the plain product, and the dense one with
//! B transposed where TMA reads it.
use crate::catalogue::PtxFact::{Barriers, Count, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{
    Arch, Candidate, Elem, Grid, KernelSpec, Shared, TensorMaps, Threads, Tile,
};
use crate::device::ldmatrix;
use crate::device::mbarrier;
use crate::device::shared::{SharedArena, shared_address};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, sync_warp, thread_idx_x};
use crate::device::tma::{self, MAP_BYTES};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::decode::mma_strip::ROWS;
use crate::parts::mma::fragments::{LDMATRIX, LDMATRIX_TRANS};
use crate::parts::mma::tensor_tile::MMA_16BIT;
use crate::parts::schedule::decode_split::STRIP;
use crate::parts::schedule::k_slice;
use crate::parts::schedule::split_k::Slices;
use crate::parts::wgmma::warp_specialised::StageBarriers;
use crate::problem::{Gemm, kernel};

/// K rows of a stage: one 128-byte row of A.
const STAGE_K: u32 = 64;
/// Stages of a sweep over 16 rows of C, and over 32 (whose stages hold two boxes of A).
const STAGES: u32 = 6;
const WIDE_STAGES: u32 = 5;
/// B's panels of 64 columns in a strip: one per warp.
const PANELS: u32 = STRIP / 64;
/// Warps of a block: two per panel, each on 32 of its 64 columns.
const WARPS: u32 = 2 * PANELS;
const THREADS: u32 = 32 * WARPS;
/// Bytes of A's 16 x 64 box and of one of B's 64 x 64 panels.
const A_BYTES: u32 = ROWS * 128;
const PANEL: u32 = STAGE_K * 128;
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
// (A transposed box is never used: A is read row-major only.)
kernel! {
    SPEC = KernelSpec::new(("decode_tma", file!()), "`decode_mma` fed by TMA: one thread copies A's 16 x 64 box and B's four 64 x 64 panels per stage, six 34 KiB stages ahead on mbarriers, two warps per panel, 17-32 rows in one sweep, one block per SM; `decode_mma` where TMA cannot read the operands",
        Arch::Sm90a, Threads::Fixed(THREADS, 1), Tile::Fixed { rows: ROWS, cols: STRIP })
        .with_grid(Grid::SplitKLastBlock { per_sm: 1 }).with_shared(Shared::InputElements(SHARED_BYTES / 2))
        .with_elements(&[Elem::F16, Elem::Bf16]).with_candidate(Candidate::WhenSideAtMost(32)).on_tensor_cores().with_b_transposed()
        .with_tma(TensorMaps { a_box: (ROWS, STAGE_K), b_box: (STAGE_K, 64), a_t_box: (STAGE_K, 64), b_t_box: (64, STAGE_K), pack: None, otherwise: Some("decode_mma") })
        .with_ptx(&[PtxFacts::all(&[Barriers(28), Count("cp.async.bulk.tensor.3d", 44), Count(LDMATRIX, 40), Count(MMA_16BIT, 96), Has("atom.acq_rel.gpu.global.add.u32"), Lacks(".local"), Lacks("call"), Has("mbarrier.try_wait.parity"),
            Has("mbarrier.arrive.expect_tx"), Has(LDMATRIX_TRANS)])]);
    fn decode_tma;
    entries decode_tma_f16: f16, decode_tma_bf16: Bf16, decode_tma_f16_f16: Narrow<f16>, decode_tma_bf16_bf16: Narrow<Bf16>;
}

/// Shared address of this lane's row for `ldmatrix` in a 128-byte-swizzled box whose rows
/// are 128 bytes: row `row`, 16-byte chunk `chunk` (stored at chunk `chunk ^ row % 8`).
#[inline(always)]
fn swizzled(base: u32, row: u32, chunk: u32) -> u32 {
    base + row * 128 + ((chunk ^ (row % 8)) * 16)
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero, the tensor maps in the workspace where TMA can read A and B).
#[inline(always)]
pub unsafe fn decode_tma<T: Half>(g: Gemm<T>) {
    // The split-K's counters and planes follow the tensor maps.
    let split_k = Gemm {
        workspace: g
            .workspace
            .wrapping_add(TensorMaps::BYTES / size_of::<T::Acc>()),
        ..g
    };
    let (a, b, ..) = g.plain();
    let b_t = g.p.strides().b_t;
    if !tma::reads(&g.p, (a as u64, b as u64), size_of::<T>() as u64) {
        // (The host runs `decode_mma` where TMA cannot read the operands: no maps here.)
        return;
    }
    match b_t {
        // SAFETY: TMA reads A and B, so the host wrote their maps (B as stored) at the
        // workspace's start, and `split_k` is the workspace after them: `by_rows`' contract.
        false => unsafe { by_rows::<T, false>(g, split_k) },
        // SAFETY: as above, B's map of B transposed.
        true => unsafe { by_rows::<T, true>(g, split_k) },
    }
}

/// The sweep for C's rows: up to 16 rows in one pass over B; more in sweeps of 32 rows, two
/// boxes of A a stage, so 17-32 rows read B once (a second pass found it evicted from L2).
/// Sweeps of 64 rows (four boxes) ran 33-64 rows slower than the `wgmma` kernels (H100, 64 x
/// 8192 x 4096 bf16: 73.0% of cuBLAS against 95.8%), and are not kept.
///
/// # Safety
/// As [`streamed`].
#[inline(always)]
unsafe fn by_rows<T: Half, const B_T: bool>(g: Gemm<T>, split_k: Gemm<T>) {
    match g.p.m <= ROWS {
        // SAFETY: the caller's promise, `streamed`'s contract; `layout_bytes(1, STAGES)` is
        // at most SHARED_BYTES.
        true => unsafe { streamed::<T, B_T, 1, STAGES>(g, split_k) },
        // SAFETY: as above, `layout_bytes(2, WIDE_STAGES)` too.
        false => unsafe { streamed::<T, B_T, 2, WIDE_STAGES>(g, split_k) },
    }
}

/// The mainloop on TMA's stages, B row-major or (`B_T`) stored `n x k`, `P` passes of 16
/// rows of C a sweep over B in `S` stages, and the split-K's finish of each pass.
///
/// # Safety
/// As [`decode_tma`], with the tensor maps of A and B (B as `B_T` says) at the workspace's
/// start and `split_k` the workspace after them; `layout_bytes(P, S) <= SHARED_BYTES`.
#[inline(always)]
unsafe fn streamed<T: Half, const B_T: bool, const P: usize, const S: u32>(
    g: Gemm<T>,
    split_k: Gemm<T>,
) {
    let stage_bytes = stage_bytes(P as u32);
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
    // SAFETY: the same launch-sized region as bytes: past the sums and flag, the aligned stages and
    // barriers fit in SHARED_BYTES.
    let mut arena = unsafe { SharedArena::<u8>::launch_sized() };
    let _sums = arena.aligned(16, 4 * SUMS);
    let stages = arena.aligned(ATOM, S * stage_bytes);
    let bars = StageBarriers::<S>(arena.aligned(8, 2 * S * 8).cast::<u64>());
    if tid == 0 {
        // SAFETY: thread 0 alone, before the barrier that publishes them: 2 x S 8-byte aligned
        // mbarriers carved for nothing else.
        unsafe { bars.init(WARPS) };
        mbarrier::fence_init();
    }
    sync_threads(); // the barriers are ready
    let maps = g.workspace.cast::<u8>().cast_const();
    let (a_map, b_map) = (maps, maps.wrapping_add(MAP_BYTES));
    let sweep_rows = P as u32 * ROWS;
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
        // SAFETY: the maps, 64-byte aligned at the workspace's start, are A's and B's (the host's
        // promise where TMA reads them); `at`, its boxes and its panels are 1024-aligned; `full`
        // expects the copies' `stage_bytes` (boxes past C's rows are zero-filled, and counted);
        // the stage is free (first round, or its `empty` phase waited for).
        unsafe {
            mbarrier::arrive_expect_tx(full, stage_bytes);
            for p in 0..P as u32 {
                let box_at = at.wrapping_add((p * A_BYTES) as usize);
                tma::load_3d(box_at, a_map, (kk, row0 + p * ROWS, 0), full);
            }
            for p in 0..PANELS {
                let panel = at.wrapping_add((P as u32 * A_BYTES + p * PANEL) as usize);
                let col0 = strip * STRIP + 64 * p;
                let box_at = if B_T { (kk, col0, 0) } else { (col0, kk, 0) };
                tma::load_3d(panel, b_map, box_at, full);
            }
        }
    };
    if tid == 0 {
        for i in 0..total.min(S) {
            issue(i);
        }
    }
    // This lane's row (of 16) and 16-byte chunk (of 2) for `ldmatrix`: A's matrices (rows
    // 0-7, 8-15) x (K 0-7, 8-15) as the `mma` fragment's four registers; a row-major B's (K
    // 0-7, 8-15) x (tile j, j + 1), transposed. A transposed B's panel has a row per column
    // of C: its matrices are (tile j: K 0-7, 8-15) then (tile j + 1: K 0-7, 8-15), each a
    // fragment as stored, its rows `8 j + t_row` and chunks `2 step + t_chunk`.
    let (row, chunk) = (lane % 8 + 8 * ((lane / 8) % 2), lane / 16);
    let (t_row, t_chunk) = (lane % 8 + 8 * (lane / 16), (lane / 8) % 2);
    let base = shared_address(stages);
    let (gr, tq) = (lane / 4, lane % 4);
    let mut it = 0;
    for sweep in 0..sweeps {
        let mut acc = [[[0.0; 4]; 4]; P];
        for _ in 0..phases {
            let s = it % S;
            // SAFETY: `full(s)` was initialised and published by the barrier above.
            unsafe { mbarrier::wait(bars.full(s), (it / S) % 2) };
            let stage = base + s * stage_bytes;
            let panel = stage + P as u32 * A_BYTES + (warp / 2) * PANEL;
            for step in 0..STAGE_K / 16 {
                // (Each `ldmatrix` of A: row < 16 and chunk 2 step + chunk < 8 of box p of A,
                // 16 x 128 bytes 1024-aligned in the stage, which has landed: `full` waited;
                // the whole warp runs it: uniform loops.)
                let mut af = [[0; 4]; P];
                for (p, af) in af.iter_mut().enumerate() {
                    let at = swizzled(stage + p as u32 * A_BYTES, row, 2 * step + chunk);
                    // SAFETY: as said above.
                    *af = unsafe { ldmatrix::x4_at(at) };
                }
                for j in (0..4).step_by(2) {
                    let jj = 4 * (warp % 2) + j as u32;
                    // SAFETY: rows 16 step + row < 64 and chunks j + chunk < 8 of this warp's
                    // panel (transposed: rows 8 j + t_row < 64, chunks 2 step + t_chunk < 8),
                    // 16-byte aligned, which has landed; the whole warp runs it, as for A.
                    let r = unsafe {
                        match B_T {
                            false => {
                                ldmatrix::x4_trans_at(swizzled(panel, 16 * step + row, jj + chunk))
                            }
                            true => {
                                ldmatrix::x4_at(swizzled(panel, 8 * jj + t_row, 2 * step + t_chunk))
                            }
                        }
                    };
                    for p in 0..P {
                        acc[p][j] = T::mma_m16n8k16(af[p], [r[0], r[1]], acc[p][j]);
                        acc[p][j + 1] = T::mma_m16n8k16(af[p], [r[2], r[3]], acc[p][j + 1]);
                    }
                }
            }
            sync_warp(); // every lane's reads of the stage are done
            if lane == 0 {
                // SAFETY: `empty(s)` is initialised and published; one arrival per warp, the WARPS
                // that `init(WARPS)` counts.
                unsafe { mbarrier::arrive(bars.empty(s)) };
            }
            if warp == 0 && it + S < total {
                // The whole warp waits (none of its lanes at a warp-wide operation while
                // one waits for the other warps); thread 0 refills the stage.
                // SAFETY: as above; the whole of warp 0 waits, then thread 0 refills the stage that
                // every warp has released.
                unsafe { mbarrier::wait(bars.empty(s), (it / S) % 2) };
                if lane == 0 {
                    issue(it + S);
                }
            }
            sync_warp(); // warp 0 together again before its next `ldmatrix`
            it += 1;
        }
        // Pass p's accumulators are `acc[0]` at its turn (the others shift down after each):
        // constant indices, so they stay in registers whether or not the loop is unrolled.
        for p in 0..P as u32 {
            let row0 = sweep * sweep_rows + p * ROWS;
            if row0 >= m {
                break; // (uniform: the block's rows)
            }
            // The warp's 16 x 32 of the pass, at its columns of the sums.
            for j in 0..4 {
                let col = 64 * (warp / 2) + 8 * (4 * (warp % 2) + j as u32) + 2 * tq;
                for h in 0..2 {
                    // SAFETY: rows gr + 8 h < ROWS and columns col, col + 1 < 64 (warp / 2 + 1)
                    // <= STRIP: this lane's own elements; the last reads of `sums` ended at
                    // `finish`'s closing barrier.
                    unsafe { sums.set(gr + 8 * h as u32, col, acc[0][j][2 * h]) };
                    // SAFETY: as above.
                    unsafe { sums.set(gr + 8 * h as u32, col + 1, acc[0][j][2 * h + 1]) };
                }
            }
            for q in 1..P {
                acc[q - 1] = acc[q];
            }
            let slices = Slices::of(&split_k, ROWS);
            // SAFETY: every thread calls it (the sweep and pass loops are uniform) once the sums
            // are set; `split_k`'s workspace, after the maps, holds `decode_mma`'s zeroed
            // counters and planes (launch rules).
            unsafe {
                slices.finish::<ROWS, 1, THREADS>((row0, (m - row0).min(ROWS)), &sums, &last_flag)
            };
        }
    }
}
