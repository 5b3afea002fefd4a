//! `dmma_warps` on 64 x 64 block tiles (4 warps, 3 blocks per SM): four times the blocks of
//! `dmma`'s 128 x 64 tiles for a product, so a 1024^3 one fills 1.9 waves of 132 SMs
//! instead of 128 blocks on 264 slots.
//!
//! Launch rules ([`SPEC`]): 128 threads, a grid of 64 x 64 tiles, 61,456 shared bytes,
//! three blocks per SM; the sm_90a module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Steps16};
use crate::problem::{Gemm, kernel};

// Launch: `wide_tile::spec`'s for the body's tile.
kernel! {
    SPEC = wide_tile::spec(("dmma_small", file!()), "`dmma_warps` on 64 x 64 block tiles, three blocks per SM: more blocks for smaller products",
        (Arch::Sm90a, Elem::F64, Precision::Exact), (64, 64, 16, 3, 2), 3).with_ptx(&[PtxFacts::all(&[Barriers(4)])]);
    fn dmma_small(Gemm<f64>) = wide_tile::strided::<f64, Dmma, Dmma, Steps16, 64, 64, 16, 3, 2>;
    entries dmma_small_f64: f64;
}
