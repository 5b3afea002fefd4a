//! Tensor cores, first rung (sm_80 and newer): f16/bf16 inputs multiplied by `mma.sync
//! .m16n8k16` with f32 accumulators, instead of widened to f32 for the SIMT pipes.
//!
//! The block tile of `tensor_tile` in one stage: each phase loads the 16-bit tiles through
//! registers (4 elements per access in interior blocks, checked element by element at the
//! edges), a barrier, 32 `mma` per warp, a barrier. The fragments are read from shared
//! memory element-wise: per K step of 16 a warp issues 16 32-bit reads for A and 16 16-bit
//! reads for B (its pairs run down a column) for 16 `mma`.
//!
//! Launch rules ([`SPEC`]): 256 threads, grid `ceil(n / 128) x ceil(m / 128)`, one stage of
//! shared memory (`(128 x 40 + 32 x 136) x 2` bytes); only in the sm_80 module; f16, bf16.
use crate::catalogue::PtxFact::{Barriers, Has};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::mma::fragments::SharedLoads;
use crate::parts::mma::one_stage::one_stage;
use crate::parts::mma::tensor_tile::{BK, tensor_spec};
use crate::parts::mma::tensor_tile::{F32_C, NARROW_C_STORES};
use crate::problem::{Gemm, kernel};

/// The block tile's width and its `mma` tiles per warp along N.
const BN: u32 = 128;
const NT: usize = 4;

// Launch: `tensor_spec`'s for the body's tile and stages: one stage, what `one_stage` needs.
kernel! {
    SPEC = tensor_spec(("mma_sync", file!()), "tensor cores: `mma.sync` m16n8k16 (f32 accumulators), 16-bit tiles in shared memory, fragments read from it element-wise; 8 warps of 64 x 32", (BN, BK, 1))
        .with_ptx(&[PtxFacts::all(&[Barriers(2)]), F32_C, NARROW_C_STORES, PtxFacts::only(SIXTEEN_BIT, &[Has("ld.shared.b32"), Has("ld.shared.b16")])]);
    fn mma_sync<T: Half>(Gemm<T>) = one_stage::<T, SharedLoads, BN, NT>;
    entries mma_sync_f16: f16, mma_sync_bf16: Bf16, mma_sync_f16_f16: Narrow<f16>, mma_sync_bf16_bf16: Narrow<Bf16>;
}
