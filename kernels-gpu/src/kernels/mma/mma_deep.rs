//! Tensor cores, fifth rung: `mma_wide` with K steps of 64 per phase (3 stages instead of 4:
//! half the barriers and waits per `mma`) and each K step's fragments loaded one step
//! ahead, so the `ldmatrix` latency hides behind the previous step's 32 `mma` instead of
//! stalling the warp (one block of 8 warps per SM has few others to switch to).
//!
//! Launch rules ([`SPEC`]): as `mma_wide`, with 3 stages of 64 K steps (156,672 bytes).
use crate::catalogue::KernelSpec;
use crate::catalogue::PtxFact::{Barriers, Has};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT};
use crate::element::Half;
#[cfg(target_arch = "nvptx64")]
use crate::element::{Bf16, Narrow};
use crate::parts::mma::async_pipeline::pipelined;
use crate::parts::mma::tensor_tile::tensor_spec;
use crate::parts::mma::tensor_tile::{F32_C, NARROW_C_STORES};
use crate::problem::{Gemm, entry_points};

const BN: u32 = 256;
const BK: u32 = 64;
const STAGES: u32 = 3;

pub const SPEC: KernelSpec = KernelSpec {
    ptx: &[
        PtxFacts::all(&[Barriers(3)]),
        F32_C,
        PtxFacts::only(SIXTEEN_BIT, &[Has("cp.async.wait_group 1")]),
        NARROW_C_STORES,
    ],
    ..tensor_spec(
        ("mma_deep", file!()),
        "`mma_wide` with 64 K steps per phase (3 stages) and fragments loaded a K step ahead",
        (BN, BK, STAGES),
    )
};

/// # Safety
/// See the entry points; 256 threads per block; T is f16 or bf16.
#[inline(always)]
pub unsafe fn mma_deep<T: Half>(gemm: Gemm<T>) {
    // SAFETY: the entry point's contract holds, with T f16 or bf16 (the only entries); the launch
    // follows SPEC (`tensor_spec`): 256 threads, one block per 128 x 256 tile and 3 stages of BK =
    // 64 for a 256-wide tile, what `pipelined` needs (its `one_stage` fallback takes less).
    unsafe { pipelined::<T, BN, 8, BK, STAGES, true>(gemm) }
}

entry_points!(mma_deep; mma_deep_f16: f16, mma_deep_bf16: Bf16, mma_deep_f16_f16: Narrow<f16>, mma_deep_bf16_bf16: Narrow<Bf16>);
