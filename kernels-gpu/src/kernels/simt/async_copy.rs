//! Asynchronous copies (sm_80 and newer) on top of fragment double buffering: B's tiles go
//! from global to shared memory through `cp.async`, without registers and without shared
//! stores, while A, which must be transposed on the way, still goes through registers. The
//! next phase's copy of B starts at the top of each phase and is waited for just before the
//! barrier; A's loads come in two parts as in `fragment_buffered`. The mainloop runs two
//! phases per iteration, so which stage is read and which is filled is a constant: no stage
//! arithmetic and no fragment register moves at the loop's back edge (1139 instructions per
//! phase instead of 1167 for f32; measured +3-4 points of cuBLAS on an H200, more than the
//! 2.4% fewer instructions: the barrier-to-barrier code is one straight block).
//!
//! Why only B: the register-staged kernels at BK = 16 hold the next phase's A and B in
//! registers; at the 128-register cap ptxas then issues the loads late, just before their
//! stores, and their latency shows (Nsight Compute: 0.38 cycles "long scoreboard" per
//! instruction). Copying A asynchronously as well, one 4-byte copy per element scattered
//! into A^T, cost more address arithmetic than it saved (measured 83-86% of cuBLAS against
//! 88-90% for `fragment_buffered_k16`, H200).
//!
//! Interior blocks of f32/f64 products with K a multiple of BK take this path; edge blocks,
//! and f16/bf16 inputs (widened on the way), run `fragment_buffered`'s checked mainloop on
//! the same shared layout. Per block, so every barrier stays in uniform control flow.
//!
//! Launch rules ([`SPEC`]): 256 threads, block tile 128 x 128 stepping BK = 16,
//! grid `ceil(n / 128) x ceil(m / 128)`, shared bytes `2 * (BK * (BM + 4) + BK * BN) *
//! size_of(Acc)`; only in the sm_80 PTX module.
use crate::catalogue::Arch;
use crate::catalogue::PtxFact::{AtLeast, Barriers};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT, WIDE};
use crate::element::Element;
use crate::element::{Bf16, Narrow};
use crate::parts::simt::async_stages::COPIES;
use crate::parts::simt::async_stages::async_pipelined;
use crate::parts::simt::block_tile;
use crate::parts::simt::block_tile::WarpTiled;
use crate::parts::simt::block_tile::{VECTORS_F32, VECTORS_F64};
use crate::parts::simt::fragment_stages::padded_stages;
use crate::problem::{Gemm, kernel};

// Launch: `block_tile::spec`'s: the two padded stages `async_pipelined` (and its checked fallback) needs.
kernel! {
    SPEC = block_tile::spec(("async_copy", file!()), "B copied by `cp.async` (no registers, no shared stores), A still through registers; two phases per mainloop iteration (constant stages)",
        Arch::Sm80, (128, 128), padded_stages(16), Some(2))
        .with_ptx(&[PtxFacts::only(WIDE, &[Barriers(14), AtLeast("fma.rn.f", 1024)]), PtxFacts::only(SIXTEEN_BIT, &[Barriers(2), AtLeast("fma.rn.f", 64)]), COPIES, VECTORS_F32, VECTORS_F64]);
    fn async_copy<T: Element>(Gemm<T>) = async_pipelined::<T, WarpTiled, { SPEC.rows() }, { SPEC.cols() }, { SPEC.bk() }, 2, false>;
    entries async_copy_f32: f32, async_copy_f64: f64, async_copy_f16: f16, async_copy_bf16: Bf16, async_copy_f16_f16: Narrow<f16>, async_copy_bf16_bf16: Narrow<Bf16>;
}
