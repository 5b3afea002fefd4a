//! Tensor cores, fourth rung: `mma_async`'s pipeline on a 128 x 256 block tile, each warp a
//! 64 x 64 warp tile of 4 x 8 `mma` tiles: per K step of 16 a warp loads 4 A and 4 B
//! `ldmatrix` for 32 `mma` (8 for 16 in `mma_async`), and each block reads A once for twice
//! the columns. 128 f32 accumulators per thread: one block of 8 warps per SM.
//!
//! Launch rules ([`SPEC`]): 256 threads, grid `ceil(n / 256) x ceil(m / 128)`, 4 stages of
//! shared memory (108,544 bytes); only in the sm_80 module; f16, bf16.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::mma::async_pipeline::{STAGES, pipelined};
use crate::parts::mma::tensor_tile::tensor_spec;
use crate::parts::mma::tensor_tile::{F32_C, NARROW_C_STORES};
use crate::problem::{Gemm, kernel};

const BN: u32 = 256;

// Launch: `tensor_spec`'s for the body's tile and stages; `pipelined`'s `one_stage` fallback takes less.
kernel! {
    SPEC = tensor_spec(("mma_wide", file!()), "`mma_async` on 128 x 256 block tiles, 64 x 64 warp tiles: 8 `ldmatrix` per 32 `mma`", (BN, 32, STAGES))
        .with_ptx(&[PtxFacts::all(&[Barriers(3)]), F32_C, NARROW_C_STORES]);
    fn mma_wide<T: Half>(Gemm<T>) = pipelined::<T, BN, 8, 32, STAGES, false>;
    entries mma_wide_f16: f16, mma_wide_bf16: Bf16, mma_wide_f16_f16: Narrow<f16>, mma_wide_bf16_bf16: Narrow<Bf16>;
}
