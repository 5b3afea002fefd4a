//! Decode products on Hopper's `wgmma` with the operands turned over: `C^T = B^T A^T`, so
//! that 64 columns of C are the instruction's M and C's rows (up to 16, or 32 in two boxes
//! of A) its N (`m64n16k16`, `m64n32k16`). `decode_tma`'s stages, strips, slices of K and
//! finish, with each warpgroup's two panels of B read by `wgmma` from the stage as TMA landed
//! it, through descriptors: no `ldmatrix`, no fragments in registers.
//!
//! Why: cuBLAS's decode kernels turn the operands over onto `wgmma` (ncu, H200, 16 x 6144 x
//! 4096 bf16: `nvjet_sm90_tss_64x16`, HBM 66% busy, against `decode_tma`'s 49%, whose warps
//! issue an instruction every 19.6 cycles). Measured: the same speed as `decode_tma` (H200,
//! back to back within 1% on every shape tried; call by call each kernel ahead in one of two
//! runs): the stream of B sets the time, not the multiply. The rule keeps `decode_tma`; this
//! kernel is the `wgmma` multiply a different stream can start from.
//!
//! B row-major is `wgmma`'s A MN-major (a panel's rows are K rows of 64 columns of C); B
//! stored `n x k` is its A K-major (a panel's rows are columns of C, 64 K each). A, row-major,
//! is `wgmma`'s B K-major either way: the 16 x 64 boxes TMA lands, 16 rows of C a box.
//!
//! The stages, their barriers, the sweeps and each pass's finish are
//! [`crate::parts::decode::tma_strip`]'s, as for `decode_tma`; this kernel is its `wgmma`
//! multiply.
//!
//! Launch rules ([`SPEC`]): `decode_tma`'s: 256 threads; grid `ceil(n / 256) x splits`
//! (`Problem::ctas`, one block per SM); the workspace's tensor maps, then the split's
//! counters (zero at launch) and planes; `decode_mma` where TMA cannot read the operands.
use crate::catalogue::PtxFact::{Barriers, Count, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::device::shared::SharedTile;
use crate::device::wgmma::{self, Accumulators, Descriptor};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::decode::tma_strip::{
    A_BYTES, PANEL, STAGE_K, StripKernel, StripStages, spec, strip,
};
use crate::parts::wgmma::warpgroup::{k_step, operand};
use crate::problem::{Gemm, kernel};

// Launch: `tma_strip::spec`'s, which are `tma_strip::strip`'s rules.
kernel! {
    SPEC = spec(("decode_wgmma", file!()), "`decode_tma` on `wgmma` with the operands turned over (C^T = B^T A^T: 64 columns of C as `wgmma`'s M, its 16 or 32 rows as N, `m64n16k16` / `m64n32k16`): each warpgroup's two panels of B read from the TMA stage through descriptors, no `ldmatrix`",
        &[PtxFacts::all(&[Barriers(28), Count("cp.async.bulk.tensor.3d", 44), Count("wgmma.mma_async.sync.aligned.m64n16k16", 16),
            Count("wgmma.mma_async.sync.aligned.m64n32k16", 16), Has("atom.acq_rel.gpu.global.add.u32"), Lacks(".local"), Lacks("call"),
            Has("mbarrier.try_wait.parity"), Has("mbarrier.arrive.expect_tx"), Lacks("ldmatrix")])]);
    fn decode_wgmma<T: Half>(Gemm<T>) = strip::<T, Turned16Or32>;
    entries decode_wgmma_f16: f16, decode_wgmma_bf16: Bf16, decode_wgmma_f16_f16: Narrow<f16>, decode_wgmma_bf16_bf16: Narrow<Bf16>;
}

/// The kernel on the strip: `wgmma` turned over, N = 16 for one box of A, 32 for two.
struct Turned16Or32;

impl StripKernel for Turned16Or32 {
    type Rows16 = Panels<false, [f32; 8]>;
    type Rows32 = Panels<false, [f32; 16]>;
    type Rows16BT = Panels<true, [f32; 8]>;
    type Rows32BT = Panels<true, [f32; 16]>;
}

/// A warpgroup's accumulators for one panel turned over: 64 columns of C by the sweep's rows
/// of C (`wgmma`'s N: 16, or 32 for two boxes of A).
trait Turned: Accumulators + Copy {
    const ZERO: Self;
    /// Boxes of A (16 rows of C each) that make `wgmma`'s N.
    const PASSES: u32;
    /// D += A B, one K step of 16 (`m64n16k16` or `m64n32k16`), A MN-major where `A_MN`.
    ///
    /// # Safety
    /// As `WgmmaInput::wgmma_m64n16`.
    unsafe fn mma<T: Half, const A_MN: bool>(&mut self, a: Descriptor, b: Descriptor);
    /// Accumulator `r`.
    fn at(&self, r: usize) -> f32;
}

impl Turned for [f32; 8] {
    const ZERO: Self = [0.0; 8];
    const PASSES: u32 = 1;
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn mma<T: Half, const A_MN: bool>(&mut self, a: Descriptor, b: Descriptor) {
        // SAFETY: the caller's contract.
        unsafe { T::wgmma_m64n16::<A_MN, false>(self, a, b) }
    }
    #[inline(always)]
    fn at(&self, r: usize) -> f32 {
        self[r]
    }
}

impl Turned for [f32; 16] {
    const ZERO: Self = [0.0; 16];
    const PASSES: u32 = 2;
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn mma<T: Half, const A_MN: bool>(&mut self, a: Descriptor, b: Descriptor) {
        // SAFETY: the caller's contract.
        unsafe { T::wgmma_m64n32::<A_MN, false>(self, a, b) }
    }
    #[inline(always)]
    fn at(&self, r: usize) -> f32 {
        self[r]
    }
}

/// A warpgroup's two panels of the stage (`2 warpgroup` and `2 warpgroup + 1`), turned over:
/// B's panel is `wgmma`'s A, K-major where B is stored `n x k` (a K step 32 bytes along the
/// rows), else MN-major (a K step two atoms down); A's boxes its B, K-major.
#[derive(Clone, Copy)]
struct Panels<const B_T: bool, W> {
    warp: u32,
    /// The lane's group and thread in group of the accumulators.
    gr_tq: (u32, u32),
    _acc: core::marker::PhantomData<W>,
}

impl<const B_T: bool, W: Turned> StripStages for Panels<B_T, W> {
    const B_T: bool = B_T;
    const PASSES: u32 = W::PASSES;
    type Acc = [W; 2];
    const ZERO: Self::Acc = [W::ZERO; 2];

    #[inline(always)]
    fn new(warp: u32, lane: u32) -> Self {
        Self {
            warp,
            gr_tq: (lane / 4, lane % 4),
            _acc: core::marker::PhantomData,
        }
    }

    #[inline(always)]
    unsafe fn multiply<T: Half>(&self, acc: &mut Self::Acc, stage: u32) {
        let warpgroup = self.warp / 4;
        let (b_step, a_step) = (k_step(!B_T), k_step(false));
        let a_rows = operand(stage, false);
        for (q, acc) in acc.iter_mut().enumerate() {
            wgmma::fence(acc);
            let panel = stage + Self::PASSES * A_BYTES + (2 * warpgroup + q as u32) * PANEL;
            let b_panel = operand(panel, !B_T);
            for step in 0..STAGE_K / 16 {
                let (a, b) = (
                    b_panel.advanced(b_step * step),
                    a_rows.advanced(a_step * step),
                );
                // SAFETY: the stage has landed (the contract: `full` waited, which makes
                // TMA's writes visible to `wgmma`); both descriptors lie in it (A's boxes of
                // 16 rows, 1024-aligned; this warpgroup's panel q), the same in the whole
                // warpgroup (every warp calls it), after the fence; the `wait_group` below
                // retires them before the stage is released.
                unsafe {
                    match B_T {
                        true => acc.mma::<T, false>(a, b),
                        false => acc.mma::<T, true>(a, b),
                    }
                };
            }
        }
        wgmma::commit_group();
        // (One wait retires both panels' batch; each call names one panel's registers, so
        // the compiler touches neither before it.)
        wgmma::wait_group::<0>(&mut acc[0]);
        wgmma::wait_group::<0>(&mut acc[1]);
    }

    /// Accumulator `4 j + 2 h + e` of panel q: column `64 (2 warpgroup + q) + 16 (warp % 4)
    /// + gr + 8 h` of the strip, row `8 j + 2 tq + e` of the sweep (pass `j / 2`).
    #[inline(always)]
    unsafe fn store_pass(&self, acc: &mut Self::Acc, p: u32, sums: &SharedTile<f32>) {
        let ((gr, tq), warp) = (self.gr_tq, self.warp);
        for (q, acc) in acc.iter().enumerate() {
            let col0 = 64 * (2 * (warp / 4) + q as u32) + 16 * (warp % 4) + gr;
            for jj in 0..2 {
                let j = 2 * p + jj;
                for h in 0..2 {
                    for e in 0..2 {
                        let value = acc.at((4 * j + 2 * h + e) as usize);
                        // SAFETY: row 8 jj + 2 tq + e < ROWS and column col0 + 8 h < STRIP:
                        // this lane's own element of the pass; the last reads of `sums`
                        // ended at `finish`'s closing barrier (the contract).
                        unsafe { sums.set(8 * jj + 2 * tq + e, col0 + 8 * h, value) };
                    }
                }
            }
        }
    }
}
