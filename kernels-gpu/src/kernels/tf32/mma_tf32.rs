//! f32 products in TF32, when the caller asks for them ([`Precision::Tf32`]): each element
//! of A and B rounded to TF32 (`cvt.rna.tf32.f32`) as its fragment is read, `mma.sync
//! .aligned.m16n8k8.row.col.f32.tf32.tf32.f32` on `wide_tile`'s block tile (128 x 128 by 32
//! along K, 8 warps, 3 stages), accumulated in f32.
//!
//! Launch rules ([`SPEC`]): 256 threads, a grid of 128 x 128 tiles, 107,520 shared bytes,
//! one block per SM; the sm_80 module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, Precision};
use crate::parts::mma::schemes::Tf32;
use crate::parts::mma::wide_tile::{self, Steps8};
use crate::problem::{Gemm, kernel};

const BN: u32 = 128;
const BK: u32 = 32;
const DEPTH: u32 = 3;

// Launch: `wide_tile::spec`'s for the body's tile.
kernel! {
    SPEC = wide_tile::spec(("mma_tf32", file!()), "f32 in TF32 when asked: inputs rounded by `cvt.rna.tf32`, `mma.sync` m16n8k8 on 128 x 128 tiles, 3 `cp.async` stages",
        (Arch::Sm80, Elem::F32, Precision::Tf32), (128, BN, BK, DEPTH, 4), 1).with_ptx(&[PtxFacts::all(&[Barriers(1)])]);
    fn mma_tf32(Gemm<f32>) = wide_tile::pipelined::<f32, Tf32, Tf32, Steps8, 128, BN, BK, DEPTH, 4, false, false>;
    entries mma_tf32_f32: f32;
}
