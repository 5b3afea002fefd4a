//! f64 on the FP64 tensor cores (DMMA, compute capability 9.0): `mma.sync.aligned.m16n8k8
//! .row.col.f64` on `wide_tile`'s block tile, 128 x 64 by 16 along K, 4 warps, a 3-stage
//! `cp.async` pipeline. Every product and sum is an IEEE f64 operation rounded to nearest;
//! only the order of the sums differs from the SIMT kernels'.
//!
//! Launch rules ([`SPEC`]): 128 threads, a grid of 128 x 64 tiles, 92,176 shared bytes,
//! two blocks per SM; the sm_90a module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Steps8};
use crate::problem::{Gemm, kernel};

// Launch: `wide_tile::spec`'s for the body's tile.
kernel! {
    SPEC = wide_tile::spec(("dmma", file!()), "f64 on the FP64 tensor cores: `mma.sync` m16n8k8 f64 on 128 x 64 tiles, a 3-stage `cp.async` pipeline",
        (Arch::Sm90a, Elem::F64, Precision::Exact), (128, 64, 16, 3, 4), 2).with_ptx(&[PtxFacts::all(&[Barriers(4)])]);
    fn dmma(Gemm<f64>) = wide_tile::strided::<f64, Dmma, Dmma, Steps8, 128, 64, 16, 3, 4>;
    entries dmma_f64: f64;
}
