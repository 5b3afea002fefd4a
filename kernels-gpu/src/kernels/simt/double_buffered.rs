//! Double buffering: two shared stages; while the block multiplies out of one, each thread
//! already has the next phase's global loads in flight (into registers) and stores them into
//! the other stage afterwards, so one barrier per phase suffices and global latency hides
//! behind the multiply-adds. Same layout and edge handling as `vectorized`.
//!
//! Launch rules ([`SPEC`]): 256 threads in a 1D block, block tile 128 x 128
//! stepping BK = 8, grid `ceil(n / 128) x ceil(m / 128)`, shared bytes
//! `2 * (BK * BM + BK * BN) * size_of(Acc)`.
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, KernelSpec, Shared};
use crate::element::Element;
#[cfg(target_arch = "nvptx64")]
use crate::element::{Bf16, Narrow};
use crate::parts::simt::block_tile::RowMajor;
use crate::parts::simt::block_tile::{VECTORS_F32, VECTORS_F64};
use crate::parts::simt::register_stages::pipelined;
use crate::problem::{Gemm, entry_points};

pub const SPEC: KernelSpec = KernelSpec {
    ptx: &[
        PtxFacts::all(&[Barriers(2), AtLeast("fma.rn.f", 512)]),
        VECTORS_F32,
        VECTORS_F64,
    ],
    ..crate::parts::simt::block_tile::spec(
        ("double_buffered", file!()),
        "two shared stages; the next phase's loads in flight (registers) during the multiply-adds; one barrier per phase",
        Arch::Sm70,
        (128, 128),
        Shared::Stages {
            stages: 2,
            bk: 8,
            a_pad: 0,
        },
        Some(2),
    )
};

/// # Safety
/// See the entry points; 256 threads per block.
#[inline(always)]
pub unsafe fn double_buffered<T: Element>(g: Gemm<T>) {
    // SAFETY: the entry point's contract holds; the launch follows SPEC (`block_tile::spec`): 256
    // threads = (128 / 8) (128 / 8), one block per 128 x 128 tile and two stages of BK = 8 (A^T and
    // B), what `pipelined` needs.
    unsafe { pipelined::<T, RowMajor, { SPEC.rows() }, { SPEC.cols() }, { SPEC.bk() }, false>(g) }
}

entry_points!(double_buffered;
    double_buffered_f32: f32, double_buffered_f64: f64, double_buffered_f16: f16, double_buffered_bf16: Bf16, double_buffered_f16_f16: Narrow<f16>, double_buffered_bf16_bf16: Narrow<Bf16>);
