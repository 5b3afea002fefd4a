//! Tensor cores, seventh rung: `mma_deep`'s block tile and pipeline (128 x 256 tiles, 64 x
//! 64 warp tiles, 3 stages of 64 K steps, fragments a K step ahead) with the tiles stored
//! swizzled instead of padded, every shared address worked out once, and the barrier moved
//! before each phase's last K step.
//!
//! Nsight Compute on `mma_deep` (bf16 4096^3, H200) counted 4.5 instructions issued per
//! `mma`: each `ldmatrix` and `cp.async` turned a 64-bit generic address into a shared one
//! and recomputed its row and column, and the two warps of a scheduler mostly waited on that
//! integer arithmetic (the tensor pipe 42% busy). Here:
//! - A's rows are 128 bytes (64 K) and B's 512 (256 columns), unpadded; the 16-byte chunk
//!   `c` of row `r` is stored at chunk `c ^ (r % 8)`. The 8 rows an `ldmatrix` phase reads
//!   (8 consecutive rows, one chunk each) and the 32 chunks a warp's `cp.async` writes (whole
//!   rows) fall on distinct banks (padded rows straddled 128-byte lines: the copies took
//!   twice the wavefronts).
//! - Each lane's `ldmatrix` rows are 4 shared addresses for A (one per K step: the swizzle
//!   is an XOR) and 4 for B (one per pair of n8 tiles), worked out before the mainloop; the
//!   m16 tiles, K steps and stages are offsets from them (`ldmatrix [r + imm]`).
//! - Each thread's `cp.async` chunks have fixed places in a stage (4 of A, 8 of B) and come
//!   from two global pointers stepped by a phase; the row and column checks are hoisted.
//! - The wait and barrier for the next stage come before the last K step's `mma` (its
//!   fragments are already loaded, so every warp is done reading the stage, which the next
//!   copies refill): the next phase's first fragments load behind those 32 `mma` instead of
//!   stalling every warp after the barrier.
//!
//! Measured (H200, bf16 4096^3, TFLOP/s): `mma_deep` 273; swizzle and addresses 356 (2.1x
//! fewer instructions); the barrier moved 374. Spreading the copies over the K steps
//! instead of one burst lost (332) and was dropped.
//!
//! Launch rules ([`SPEC`]): 256 threads, grid `ceil(n / 256) x ceil(m / 128)`, 3 stages of
//! 48 KiB (+ 128 bytes of alignment: 147,584 bytes, within an A100's 163 KiB); only in the
//! sm_80 module; f16, bf16. Launches whose rows are not 16-byte chunks (K or N not a multiple
//! of 8, inputs not 16-byte aligned) take `mma_ldmatrix`'s one-stage loop on the same tile.
use crate::catalogue::PtxFact::{Barriers, Has, Line};
use crate::catalogue::{KernelSpec, Shared};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT};
use crate::device::async_copy::{commit_group, copy16_or_zero_at, wait_group};
use crate::device::ldmatrix;
use crate::device::shared::{SharedArena, shared_address};
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::mma::async_pipeline::chunked;
use crate::parts::mma::fragments::LDMATRIX_TRANS;
use crate::parts::mma::fragments::Ldmatrix;
use crate::parts::mma::one_stage::one_stage;
use crate::parts::mma::tensor_tile;
use crate::parts::mma::tensor_tile::{BM, Lane, MT, THREADS, tensor_spec};
use crate::parts::mma::tensor_tile::{F32_C, NARROW_C_STORES};
use crate::problem::{Gemm, entry_points};

const BN: u32 = 256;
const BK: u32 = 64;
const STAGES: u32 = 3;
/// `mma` tiles of 8 columns per warp (64 columns).
const NT: usize = 8;
/// Bytes of a stage: A (128 x 64) and B (64 x 256), 16-bit.
const A_BYTES: u32 = BM * BK * 2;
const STAGE_BYTES: u32 = A_BYTES + BK * BN * 2;
/// Row lengths in bytes.
const A_ROW: u32 = BK * 2;
const B_ROW: u32 = BN * 2;
/// The region's alignment: the swizzle pattern repeats every 8 rows of 128 bytes.
const ALIGN: u32 = 128;

pub const SPEC: KernelSpec = KernelSpec {
    shared: Shared::InputElements(STAGES * (BM * BK + BK * BN) + ALIGN / 2),
    ptx: &[
        PtxFacts::all(&[Barriers(4)]),
        F32_C,
        PtxFacts::only(
            SIXTEEN_BIT,
            &[
                Has(LDMATRIX_TRANS),
                Has("cp.async.wait_group 1"),
                Has("cp.async.cg.shared.global [%r"),
                Line(&["ldmatrix", "}, [%r"]),
            ],
        ),
        NARROW_C_STORES,
    ],
    ..tensor_spec(
        ("mma_swizzled", file!()),
        "`mma_deep` with XOR-swizzled, unpadded tiles, shared addresses worked out once (half the instructions, conflict-free copies) and the barrier before each phase's last K step",
        (BN, BK, STAGES),
    )
};

/// Where chunk `chunk` (16 bytes) of row `row` of a tile with `row_bytes`-byte rows is
/// stored: the chunk's low 3 bits XOR the row's.
#[inline(always)]
const fn swizzled(row: u32, chunk: u32, row_bytes: u32) -> u32 {
    row * row_bytes + ((chunk ^ (row % 8)) * 16)
}

/// # Safety
/// See the entry points; 256 threads per block; T is f16 or bf16; the launch provides
/// [`SPEC`]'s shared memory.
#[inline(always)]
pub unsafe fn mma_swizzled<T: Half>(gemm: Gemm<T>) {
    let (a, b, c, m, n, k) = gemm.plain();
    if !chunked(a, b, n, k) {
        // SAFETY: the entry point's contract holds with T f16 or bf16; the launch's 256 threads and
        // shared bytes (more than one stage of a 256-wide tile) on the 128 x 256 grid are what
        // `one_stage` needs.
        return unsafe { one_stage::<T, Ldmatrix, BN, NT>(gemm) };
    }
    let tid = thread_idx_x();
    let me = Lane::of::<BN>(tid);
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // SAFETY: the launch provides the stages and the alignment slack.
    let mut arena = unsafe { SharedArena::<T>::launch_sized() };
    let base = shared_address(arena.aligned(ALIGN, STAGES * STAGE_BYTES / 2));

    // SAFETY: `chunked` held above: K and N multiples of 8, A and B 16-byte aligned, which
    // `Copies::phase` relies on; `base` is the 128-aligned stages' shared address.
    let mut copies = unsafe { Copies::of((a, b), (m, n, k), (row0, col0), base, tid) };

    // This lane's `ldmatrix` rows (see `mma_ldmatrix`: lane l gives row l % 8 of matrix l /
    // 8). A: rows warp_row + r8 (+ 16 per m16 tile), chunk 2 step + half (+ 0); B: K rows
    // r8 (+ 16 per step), chunks of the pairs of n8 tiles.
    let (r8, half) = (me.lane % 8 + 8 * ((me.lane / 8) % 2), me.lane / 16);
    let a_rd: [u32; 4] =
        core::array::from_fn(|s| swizzled(me.warp_row + r8, 2 * s as u32 + half, A_ROW));
    let b_rd: [u32; NT / 2] = core::array::from_fn(|p| {
        A_BYTES + swizzled(r8, me.warp_col / 8 + 2 * p as u32 + half, B_ROW)
    });

    // The fragments of K step `step` of the stage at shared address `here`.
    let load = |here: u32, step: u32| {
        let a_at = here + a_rd[step as usize];
        // SAFETY: rows warp_row + r8 + 16 i < BM at chunk 2 step + half < 8 of A in the stage at
        // `here`, which has landed (wait and barrier before its first read); every lane of the warp
        // loads (uniform loops).
        let af: [[u32; 4]; MT] =
            core::array::from_fn(|i| unsafe { ldmatrix::x4_at(a_at + 16 * A_ROW * i as u32) });
        let mut bf = [[0u32; 2]; NT];
        for p in 0..NT / 2 {
            // SAFETY: as for A: rows r8 + 16 step < BK at a chunk < 32 of B's 512-byte rows.
            let r = unsafe { ldmatrix::x4_trans_at(here + b_rd[p] + 16 * B_ROW * step) };
            bf[2 * p] = [r[0], r[1]];
            bf[2 * p + 1] = [r[2], r[3]];
        }
        (af, bf)
    };

    let phases = k.div_ceil(BK);
    // Prologue: the first STAGES - 1 phases in flight, one group each (empty past the end,
    // so every wait below counts the same groups); once the first has landed, the next.
    for s in 0..STAGES - 1 {
        if s < phases {
            copies.phase(s, s);
        }
        commit_group();
    }
    wait_group::<1>();
    sync_threads();
    if STAGES - 1 < phases {
        copies.phase(STAGES - 1, STAGES - 1);
    }
    commit_group();
    let mut acc = [[[0.0; 4]; NT]; MT];
    let mut next = load(base, 0);
    // Phase p's stage is p % STAGES; at its last K step the copies of phase p + STAGES
    // go into that same stage.
    let mut read = 0;
    for phase in 0..phases {
        let here = base + read * STAGE_BYTES;
        for step in 0..BK / 16 {
            let fragments = next;
            if step + 1 < BK / 16 {
                next = load(here, step + 1);
            } else {
                // Every warp has read this stage (this step's fragments are loaded) and
                // the next has landed: the next phase's first fragments load behind this
                // step's `mma`, and the copies refill this stage.
                wait_group::<1>();
                sync_threads();
                if phase + STAGES < phases {
                    copies.phase(phase + STAGES, read);
                }
                commit_group();
                read = if read + 1 == STAGES { 0 } else { read + 1 };
                if phase + 1 < phases {
                    next = load(base + read * STAGE_BYTES, 0);
                }
            }
            tensor_tile::mma_step::<T, NT>(&mut acc, (&fragments.0, &fragments.1));
        }
    }
    // SAFETY: C is `m x n` row-major (SPEC is not strided: a dense launch); `me`'s fragments of
    // this block's tile are written by this thread only.
    unsafe { tensor_tile::epilogue::<T, NT>(c, &acc, (m, n), (row0, col0), me) };
}

/// One thread's share of a phase's copies: A rows `tid / 8 + 32 i` (i < 4), chunk `tid %
/// 8`; B rows `tid / 32 + 8 i` (i < 8), chunk `tid % 32` (rows 32 and 8 apart keep the
/// swizzle, so each chunk's place in a stage is fixed).
struct Copies<T> {
    /// The next phase's first chunks (offset only where they lie inside A and B).
    a_next: *const T,
    b_next: *const T,
    /// The matrices themselves: the source of the chunks outside them (not read).
    a: *const T,
    b: *const T,
    /// Elements between this thread's rows of a phase.
    a_step: usize,
    b_step: usize,
    /// Elements between phases of B.
    b_phase: usize,
    a_dst: u32,
    b_dst: u32,
    a_rows: [bool; 4],
    b_col: bool,
    a_col: u32,
    b_row: u32,
    k: u32,
}

impl<T: Copy> Copies<T> {
    /// Thread `tid`'s copies for the block tile at `(row0, col0)` of the row-major
    /// `m x k` A and `k x n` B, into the stages from shared address `base`.
    ///
    /// # Safety
    /// As [`mma_swizzled`]'s launch: K and N multiples of 8, both inputs 16-byte aligned.
    #[inline(always)]
    unsafe fn of(
        (a, b): (*const T, *const T),
        (m, n, k): (u32, u32, u32),
        (row0, col0): (u32, u32),
        base: u32,
        tid: u32,
    ) -> Self {
        let (ar, ac) = (tid / 8, tid % 8);
        let (br, bc) = (tid / 32, tid % 32);
        let (ld_a, ld_b) = (k as usize, n as usize);
        let b_col = col0 + 8 * bc < n;
        Self {
            a_next: match row0 + ar < m {
                true => a.wrapping_add((row0 + ar) as usize * ld_a + 8 * ac as usize),
                false => a,
            },
            b_next: match b_col {
                true => b.wrapping_add(br as usize * ld_b + (col0 + 8 * bc) as usize),
                false => b,
            },
            a,
            b,
            a_step: 32 * ld_a,
            b_step: 8 * ld_b,
            b_phase: BK as usize * ld_b,
            a_dst: base + swizzled(ar, ac, A_ROW),
            b_dst: base + A_BYTES + swizzled(br, bc, B_ROW),
            a_rows: core::array::from_fn(|i| row0 + ar + 32 * (i as u32) < m),
            b_col,
            a_col: 8 * ac,
            b_row: br,
            k,
        }
    }

    /// Starts the copies of phase `phase` (each phase once, in order) into stage `stage`.
    #[inline(always)]
    fn phase(&mut self, phase: u32, stage: u32) {
        let k0 = phase * BK;
        let at = stage * STAGE_BYTES;
        let a_k = k0 + self.a_col < self.k;
        let mut from = self.a_next;
        for (i, &row_in) in self.a_rows.iter().enumerate() {
            let inside = row_in & a_k;
            let dst = self.a_dst + at + 32 * A_ROW * i as u32;
            let src = if inside { from } else { self.a };
            // SAFETY: `dst` is chunk (ar + 32 i, ac) of the stage's A, 16-byte aligned; where
            // inside, `src` is 16 aligned bytes of that row of A (`of`'s contract: K a multiple of
            // 8, `a` aligned), else unread; the stage is read after a wait and a barrier.
            unsafe { copy16_or_zero_at(dst, src, 16 * inside as u32) };
            from = from.wrapping_add(self.a_step);
        }
        let mut from = self.b_next;
        for i in 0..8u32 {
            let inside = self.b_col & (k0 + self.b_row + 8 * i < self.k);
            let dst = self.b_dst + at + 8 * B_ROW * i;
            let src = if inside { from } else { self.b };
            // SAFETY: as for A: chunk (br + 8 i, bc) of the stage's B; `src` is inside B and
            // aligned (N a multiple of 8), or unread.
            unsafe { copy16_or_zero_at(dst, src, 16 * inside as u32) };
            from = from.wrapping_add(self.b_step);
        }
        self.a_next = self.a_next.wrapping_add(BK as usize);
        self.b_next = self.b_next.wrapping_add(self.b_phase);
    }
}

const _: () = assert!(BM * BK / 8 == 4 * THREADS && BK * BN / 8 == 8 * THREADS);

entry_points!(mma_swizzled; mma_swizzled_f16: f16, mma_swizzled_bf16: Bf16, mma_swizzled_f16_f16: Narrow<f16>, mma_swizzled_bf16_bf16: Narrow<Bf16>);
