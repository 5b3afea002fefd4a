//! Tensor cores, second rung: `mma_sync` with its fragments loaded by `ldmatrix` (four 8 x 8
//! matrices per instruction, straight into the fragment layout; B transposed on the way by
//! `.trans`, so its column pairs need no 16-bit reads): per K step of 16 a warp issues 6
//! `ldmatrix` (4 for A's m16 tiles, 2 for B's pairs of n8 tiles) instead of 32 shared loads.
//! The 16-byte rows of a phase of 8 lanes fall in distinct banks: A's rows are 80 bytes
//! apart, B's 272 (both padded by 16 bytes).
//!
//! Launch rules ([`SPEC`]): as `mma_sync`.
use crate::catalogue::KernelSpec;
use crate::device::ldmatrix;
use crate::element::Element;
#[cfg(target_arch = "nvptx64")]
use crate::element::{Bf16, Narrow};
use crate::mma_sync::{one_stage, tensor_spec};
use crate::problem::{Gemm, entry_points};
use crate::tensor_tile::{Fragments, Lane, MT, Stage};

pub const SPEC: KernelSpec = tensor_spec(
    ("mma_ldmatrix", file!()),
    "`mma_sync` with fragments loaded by `ldmatrix` (`.trans` for B): 6 instructions per 16 `mma` instead of 32 loads",
    (128, 32, 1),
);

/// Fragments loaded by `ldmatrix`.
pub struct Ldmatrix;

impl Fragments for Ldmatrix {
    #[inline(always)]
    unsafe fn load<T: Element, const NT: usize>(
        stage: &Stage<T>,
        kk: u32,
        me: Lane,
    ) -> ([[u32; 4]; MT], [[u32; 2]; NT]) {
        // Lane l gives row l % 8 of matrix l / 8: matrices 0-3 are (rows 0-7, K 0-7), (rows
        // 8-15, K 0-7), (rows 0-7, K 8-15), (rows 8-15, K 8-15) of an m16 tile, which is
        // the order of A's fragment registers.
        let (r8, half) = (me.lane % 8 + 8 * ((me.lane / 8) % 2), 8 * (me.lane / 16));
        let mut af = [[0u32; 4]; MT];
        for (i, f) in af.iter_mut().enumerate() {
            let row = me.warp_row + 16 * i as u32 + r8;
            *f = unsafe { ldmatrix::x4(stage.a.row16(row, kk + half)) };
        }
        // B: matrices (K 0-7, tile j), (K 8-15, tile j), (K 0-7, tile j + 1), (K 8-15, tile
        // j + 1), transposed: the two registers of tile j, then those of j + 1.
        let mut bf = [[0u32; 2]; NT];
        for j in (0..NT).step_by(2) {
            let col = me.warp_col + 8 * j as u32 + half;
            let r = unsafe { ldmatrix::x4_trans(stage.b.row16(kk + r8, col)) };
            bf[j] = [r[0], r[1]];
            bf[j + 1] = [r[2], r[3]];
        }
        (af, bf)
    }
}

/// # Safety
/// See the entry points; 256 threads per block; T is f16 or bf16.
#[inline(always)]
pub unsafe fn mma_ldmatrix<T: Element>(gemm: Gemm<T>) {
    unsafe { one_stage::<T, Ldmatrix, 128, 4>(gemm) }
}

entry_points!(mma_ldmatrix; mma_ldmatrix_f16: f16, mma_ldmatrix_bf16: Bf16, mma_ldmatrix_f16_f16: Narrow<f16>, mma_ldmatrix_bf16_bf16: Narrow<Bf16>);
