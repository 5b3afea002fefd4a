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
use crate::catalogue::{Arch, Shared};
use crate::element::Element;
use crate::element::{Bf16, Narrow};
use crate::parts::simt::block_tile;
use crate::parts::simt::block_tile::RowMajor;
use crate::parts::simt::block_tile::{VECTORS_F32, VECTORS_F64};
use crate::parts::simt::register_stages::pipelined;
use crate::problem::{Gemm, kernel};

// Launch: `block_tile::spec`'s, two stages as `pipelined` needs.
kernel! {
    SPEC = block_tile::spec(("double_buffered", file!()), "two shared stages; the next phase's loads in flight (registers) during the multiply-adds; one barrier per phase",
        Arch::Sm70, (128, 128), Shared::stages(2, 8), Some(2)).with_ptx(&[PtxFacts::all(&[Barriers(2), AtLeast("fma.rn.f", 512)]), VECTORS_F32, VECTORS_F64]);
    fn double_buffered<T: Element>(Gemm<T>) = pipelined::<T, RowMajor, { SPEC.rows() }, { SPEC.cols() }, { SPEC.bk() }, false>;
    entries double_buffered_f32: f32, double_buffered_f64: f64, double_buffered_f16: f16, double_buffered_bf16: Bf16, double_buffered_f16_f16: Narrow<f16>, double_buffered_bf16_bf16: Narrow<Bf16>;
}
