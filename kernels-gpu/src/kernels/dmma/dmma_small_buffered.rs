//! `dmma_buffered`'s register-buffered mainloop on `dmma_small`'s 64 x 64 block tiles: 4
//! warps of 32 x 32 hold half the fragments of a 64 x 32 warp tile, so three blocks fit
//! an SM, and a product has four times the blocks of 128 x 64 tiles.
//!
//! Launch rules ([`SPEC`]): 128 threads, a grid of 64 x 64 tiles, three blocks per SM; the
//! sm_90a module.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Buffered};
use crate::problem::{Gemm, kernel};

// Launch: `wide_tile::spec`'s for the body's tile.
kernel! {
    SPEC = wide_tile::spec(("dmma_small_buffered", file!()), "`dmma_buffered`'s mainloop on 64 x 64 block tiles, three blocks per SM",
        (Arch::Sm90a, Elem::F64, Precision::Exact), (64, 64, 16, 3, 2), 3).with_ptx(&[PtxFacts::all(&[Barriers(12)])]);
    fn dmma_small_buffered(Gemm<f64>) = wide_tile::strided::<f64, Dmma, Dmma, Buffered, 64, 64, 16, 3, 2>;
    entries dmma_small_buffered_f64: f64;
}
