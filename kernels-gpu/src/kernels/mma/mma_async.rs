//! Tensor cores, third rung: `mma_ldmatrix`'s block tile fed by a 4-stage `cp.async`
//! pipeline. Both tiles go from global to shared memory as they are (16-byte copies, no
//! registers, no shared stores), three phases ahead of the `mma`: each phase waits until its
//! own copies have landed (`cp.async.wait_group 2`), meets the block at one barrier, starts
//! the copies of the phase three ahead into the stage the previous phase read, and multiplies.
//! Edge tiles copy zeros for the chunks outside A and B (`cp.async`'s source size 0).
//!
//! The copies need 16-byte chunks: K and N multiples of 8 and both inputs 16-byte aligned.
//! Other launches take `mma_ldmatrix`'s one-stage loop (the same for every block of the
//! launch, so every barrier stays uniform).
//!
//! Launch rules ([`SPEC`]): as `mma_sync`, with 4 stages of shared memory (75,776 bytes).
use crate::catalogue::PtxFact::{Barriers, Has};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::mma::async_pipeline::{STAGES, pipelined};
use crate::parts::mma::fragments::LDMATRIX_TRANS;
use crate::parts::mma::tensor_tile::tensor_spec;
use crate::parts::mma::tensor_tile::{F32_C, NARROW_C_STORES};
use crate::problem::{Gemm, kernel};

const BN: u32 = 128;

// Launch: `tensor_spec`'s for the body's tile and stages; `pipelined`'s `one_stage` fallback takes less.
kernel! {
    SPEC = tensor_spec(("mma_async", file!()), "`mma_ldmatrix` fed by a 4-stage `cp.async` pipeline: both tiles copied as they are, three phases ahead, one barrier per phase", (BN, 32, STAGES))
        .with_ptx(&[PtxFacts::all(&[Barriers(3)]), F32_C, NARROW_C_STORES,
            PtxFacts::only(SIXTEEN_BIT, &[Has(LDMATRIX_TRANS), Has("cp.async.cg.shared.global"), Has("cp.async.wait_group 2")])]);
    fn mma_async<T: Half>(Gemm<T>) = pipelined::<T, BN, 4, 32, STAGES, false>;
    entries mma_async_f16: f16, mma_async_bf16: Bf16, mma_async_f16_f16: Narrow<f16>, mma_async_bf16_bf16: Narrow<Bf16>;
}
