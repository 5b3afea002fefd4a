//! Tensor cores, second rung: `mma_sync` with its fragments loaded by `ldmatrix` (four 8 x 8
//! matrices per instruction, straight into the fragment layout; B transposed on the way by
//! `.trans`, so its column pairs need no 16-bit reads): per K step of 16 a warp issues 6
//! `ldmatrix` (4 for A's m16 tiles, 2 for B's pairs of n8 tiles) instead of 32 shared loads.
//! The 16-byte rows of a phase of 8 lanes fall in distinct banks: A's rows are 80 bytes
//! apart, B's 272 (both padded by 16 bytes).
//!
//! Launch rules ([`SPEC`]): as `mma_sync`.
use crate::catalogue::PtxFact::{Barriers, Count, Has};
use crate::catalogue::{PtxFacts, SIXTEEN_BIT};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::mma::fragments::Ldmatrix;
use crate::parts::mma::fragments::{LDMATRIX, LDMATRIX_TRANS};
use crate::parts::mma::one_stage::one_stage;
use crate::parts::mma::tensor_tile::tensor_spec;
use crate::parts::mma::tensor_tile::{F32_C, NARROW_C_STORES};
use crate::problem::{Gemm, kernel};

// Launch: `tensor_spec`'s for the body's tile and stages: one stage, what `one_stage` needs.
kernel! {
    SPEC = tensor_spec(("mma_ldmatrix", file!()), "`mma_sync` with fragments loaded by `ldmatrix` (`.trans` for B): 6 instructions per 16 `mma` instead of 32 loads", (128, 32, 1))
        .with_ptx(&[PtxFacts::all(&[Barriers(2)]), F32_C, NARROW_C_STORES,
            PtxFacts::only(SIXTEEN_BIT, &[Has(LDMATRIX), Has(LDMATRIX_TRANS), Count("mma.sync", 32), Count("ldmatrix.sync", 12)])]);
    fn mma_ldmatrix<T: Half>(Gemm<T>) = one_stage::<T, Ldmatrix, 128, 4>;
    entries mma_ldmatrix_f16: f16, mma_ldmatrix_bf16: Bf16, mma_ldmatrix_f16_f16: Narrow<f16>, mma_ldmatrix_bf16_bf16: Narrow<Bf16>;
}
