//! Tensor cores, sixth rung: `mma_deep`'s pipeline (64 K steps per phase, 3 stages,
//! fragments a K step ahead) on `mma_async`'s 128 x 128 tiles, with launch bounds asking
//! for two blocks per SM (at most 128 registers): 16 warps per SM instead of 8, to hide
//! latency by switching warps rather than by tile size.
//!
//! Launch rules ([`SPEC`]): as `mma_async`, with 3 stages of 64 K steps (107,520 bytes: two
//! blocks fit an SM's 228 KiB).
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{KernelSpec, PerAcc};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::mma::async_pipeline::pipelined;
use crate::parts::mma::tensor_tile::tensor_spec;
use crate::parts::mma::tensor_tile::{F32_C, NARROW_C_STORES};
use crate::problem::{Gemm, kernel};

const BN: u32 = 128;
const BK: u32 = 64;
const STAGES: u32 = 3;

// Launch: `tensor_spec`'s for the body's tile and stages; `pipelined`'s `one_stage` fallback takes less.
kernel! {
    SPEC = KernelSpec { min_blocks_per_sm: PerAcc { f32: Some(2), f64: None },
        ..tensor_spec(("mma_deep128", file!()), "`mma_deep`'s pipeline on 128 x 128 tiles, two blocks (16 warps) per SM", (BN, BK, STAGES)) }
        .with_ptx(&[PtxFacts::all(&[Barriers(3)]), F32_C, NARROW_C_STORES]);
    fn mma_deep128<T: Half>(Gemm<T>) = pipelined::<T, BN, 4, BK, STAGES, true>;
    entries mma_deep128_f16: f16, mma_deep128_bf16: Bf16, mma_deep128_f16_f16: Narrow<f16>, mma_deep128_bf16_bf16: Narrow<Bf16>;
}
