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
//! The stages, their barriers, the sweeps and each pass's finish are
//! [`crate::parts::decode::tma_strip`]'s; this kernel is its `mma.sync` multiply.
//!
//! Where TMA cannot read A and B (N or K not a multiple of 8, a misaligned operand) the
//! host runs `decode_mma` instead ([`crate::catalogue::TensorMaps::otherwise`]): its body
//! wants 128 threads.
//!
//! Launch rules ([`SPEC`]): 256 threads; grid `ceil(n / 256) x splits` (`Problem::ctas`,
//! one block per SM: [`crate::parts::schedule::decode_split::splits`]); 226,424 shared bytes; workspace (f32
//! units): the two tensor maps (64), then `decode_mma`'s (counters, zero at launch, and
//! planes); only in the sm_90a module; f16, bf16; the plain product, and the dense one with
//! B transposed where TMA reads it.
use crate::catalogue::PtxFact::{Barriers, Count, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::device::ldmatrix;
use crate::device::shared::SharedTile;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::decode::tma_strip::{
    A_BYTES, PANEL, STAGE_K, StripKernel, StripStages, spec, strip,
};
use crate::parts::mma::fragments::{LDMATRIX, LDMATRIX_TRANS};
use crate::parts::mma::tensor_tile::MMA_16BIT;
use crate::problem::{Gemm, kernel};

// Launch: `tma_strip::spec`'s, which are `tma_strip::strip`'s rules.
kernel! {
    SPEC = spec(("decode_tma", file!()), "`decode_mma` fed by TMA: one thread copies A's 16 x 64 box and B's four 64 x 64 panels per stage, six 34 KiB stages ahead on mbarriers, two warps per panel, 17-32 rows in one sweep, one block per SM; `decode_mma` where TMA cannot read the operands",
        &[PtxFacts::all(&[Barriers(28), Count("cp.async.bulk.tensor.3d", 44), Count(LDMATRIX, 40), Count(MMA_16BIT, 96), Has("atom.acq_rel.gpu.global.add.u32"), Lacks(".local"), Lacks("call"), Has("mbarrier.try_wait.parity"),
            Has("mbarrier.arrive.expect_tx"), Has(LDMATRIX_TRANS)])]);
    fn decode_tma<T: Half>(Gemm<T>) = strip::<T, MmaSync>;
    entries decode_tma_f16: f16, decode_tma_bf16: Bf16, decode_tma_f16_f16: Narrow<f16>, decode_tma_bf16_bf16: Narrow<Bf16>;
}

/// Shared address of this lane's row for `ldmatrix` in a 128-byte-swizzled box whose rows
/// are 128 bytes: row `row`, 16-byte chunk `chunk` (stored at chunk `chunk ^ row % 8`).
#[inline(always)]
fn swizzled(base: u32, row: u32, chunk: u32) -> u32 {
    base + row * 128 + ((chunk ^ (row % 8)) * 16)
}

/// The kernel on the strip: `mma.sync` for either sweep and either orientation of B.
struct MmaSync;

impl StripKernel for MmaSync {
    type Rows16 = Fragments<false, 1>;
    type Rows32 = Fragments<false, 2>;
    type Rows16BT = Fragments<true, 1>;
    type Rows32BT = Fragments<true, 2>;
}

/// A lane's part of a stage's `mma.sync`s: warp `w` on 32 columns of panel `w / 2` against
/// `P` boxes of A; its rows and chunks for `ldmatrix`.
#[derive(Clone, Copy)]
struct Fragments<const B_T: bool, const P: usize> {
    warp: u32,
    /// This lane's row (of 16) and 16-byte chunk (of 2) for `ldmatrix`: A's matrices (rows
    /// 0-7, 8-15) x (K 0-7, 8-15) as the `mma` fragment's four registers; a row-major B's (K
    /// 0-7, 8-15) x (tile j, j + 1), transposed. A transposed B's panel has a row per column
    /// of C: its matrices are (tile j: K 0-7, 8-15) then (tile j + 1: K 0-7, 8-15), each a
    /// fragment as stored, its rows `8 j + t_row` and chunks `2 step + t_chunk`.
    row_chunk: (u32, u32),
    t_row_chunk: (u32, u32),
    /// The lane's group and thread in group of the `mma` fragments.
    gr_tq: (u32, u32),
}

impl<const B_T: bool, const P: usize> StripStages for Fragments<B_T, P> {
    const B_T: bool = B_T;
    const PASSES: u32 = P as u32;
    type Acc = [[[f32; 4]; 4]; P];
    const ZERO: Self::Acc = [[[0.0; 4]; 4]; P];

    #[inline(always)]
    fn new(warp: u32, lane: u32) -> Self {
        Self {
            warp,
            row_chunk: (lane % 8 + 8 * ((lane / 8) % 2), lane / 16),
            t_row_chunk: (lane % 8 + 8 * (lane / 16), (lane / 8) % 2),
            gr_tq: (lane / 4, lane % 4),
        }
    }

    #[inline(always)]
    unsafe fn multiply<T: Half>(&self, acc: &mut Self::Acc, stage: u32) {
        let ((row, chunk), (t_row, t_chunk), warp) = (self.row_chunk, self.t_row_chunk, self.warp);
        let panel = stage + P as u32 * A_BYTES + (warp / 2) * PANEL;
        for step in 0..STAGE_K / 16 {
            // (Each `ldmatrix` of A: row < 16 and chunk 2 step + chunk < 8 of box p of A,
            // 16 x 128 bytes 1024-aligned in the stage, which has landed (the contract); the
            // whole warp runs it: uniform loops.)
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
    }

    /// Pass p's accumulators are `acc[0]` at its turn (the others shift down after each):
    /// constant indices, so they stay in registers whether or not the loop is unrolled.
    #[inline(always)]
    unsafe fn store_pass(&self, acc: &mut Self::Acc, _: u32, sums: &SharedTile<f32>) {
        let ((gr, tq), warp) = (self.gr_tq, self.warp);
        // The warp's 16 x 32 of the pass, at its columns of the sums.
        for j in 0..4 {
            let col = 64 * (warp / 2) + 8 * (4 * (warp % 2) + j as u32) + 2 * tq;
            for h in 0..2 {
                // SAFETY: rows gr + 8 h < ROWS and columns col, col + 1 < 64 (warp / 2 + 1)
                // <= STRIP: this lane's own elements; the last reads of `sums` ended at
                // `finish`'s closing barrier (the contract).
                unsafe { sums.set(gr + 8 * h as u32, col, acc[0][j][2 * h]) };
                // SAFETY: as above.
                unsafe { sums.set(gr + 8 * h as u32, col + 1, acc[0][j][2 * h + 1]) };
            }
        }
        for q in 1..P {
            acc[q - 1] = acc[q];
        }
    }
}
