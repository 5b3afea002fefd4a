//! Tensor cores, fifth rung: `mma_wide` with K steps of 64 per phase (3 stages instead of 4:
//! half the barriers and waits per `mma`) and each K step's fragments loaded one step
//! ahead, so the `ldmatrix` latency hides behind the previous step's 32 `mma` instead of
//! stalling the warp (one block of 8 warps per SM has few others to switch to).
//!
//! Launch rules ([`SPEC`]): as `mma_wide`, with 3 stages of 64 K steps (156,672 bytes).
use crate::catalogue::PtxFact::{Barriers, Has};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::mma::async_pipeline::pipelined;
use crate::parts::mma::tensor_tile::tensor_spec;
use crate::parts::mma::tensor_tile::{F32_C, NARROW_C_STORES};
use crate::problem::{Gemm, kernel};

const BN: u32 = 256;
const BK: u32 = 64;
const STAGES: u32 = 3;

// Launch: `tensor_spec`'s for the body's tile and stages; `pipelined`'s `one_stage` fallback takes less.
kernel! {
    SPEC = tensor_spec(("mma_deep", file!()), "`mma_wide` with 64 K steps per phase (3 stages) and fragments loaded a K step ahead", (BN, BK, STAGES))
        .with_ptx(&[PtxFacts::all(&[Barriers(3)]), F32_C, NARROW_C_STORES, PtxFacts::only(SIXTEEN_BIT, &[Has("cp.async.wait_group 1")])]);
    fn mma_deep<T: Half>(Gemm<T>) = pipelined::<T, BN, 8, BK, STAGES, true>;
    entries mma_deep_f16: f16, mma_deep_bf16: Bf16, mma_deep_f16_f16: Narrow<f16>, mma_deep_bf16_bf16: Narrow<Bf16>;
}
