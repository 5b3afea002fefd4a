//! `dmma_buffered` in K steps of 4 (`mma.sync.aligned.m16n8k4.row.col.f64`, SASS
//! `DMMA.16x8x4`, which the FP64 tensor pipe runs at the rate of m16n8k8: 66.7 against 66.8
//! TFLOP/s in a register-only probe, H200): a step's fragments take half the registers, so
//! two steps' fit whole ([`wide_tile`]'s `buffered4`), and the next step's loads need not
//! wait for the `mma`s still reading the registers they would overwrite.
//!
//! Launch rules ([`SPEC`]): as `dmma_buffered`.
use crate::catalogue::PtxFact::{Barriers, Calls, Count, Has, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, Precision};
use crate::parts::mma::schemes::Dmma;
use crate::parts::mma::wide_tile::{self, Buffered4};
use crate::problem::{Gemm, kernel};

// The local depot holds the interior call's copy of the problem (written before each
// orientation's call), and nothing else: no register of a mainloop spills, and no block
// reads the depot back.
const PTX: &[PtxFacts] = &[PtxFacts::all(&[
    Barriers(4),
    Calls(4),
    Count("wide_tile11interior_k4", 4),
    Has(".local .align 8 .b8 \t__local_depot"),
    Lacks("ld.local"),
])];

// Launch: `wide_tile::spec`'s for the body's tile.
kernel! {
    SPEC = wide_tile::spec(("dmma_k4", file!()), "`dmma_buffered` in K steps of 4 (`mma.sync` m16n8k4 f64): half the fragment registers a step, two steps held whole",
        (Arch::Sm90a, Elem::F64, Precision::Exact), (128, 64, 16, 3, 4), 2).with_ptx(PTX);
    fn dmma_k4(Gemm<f64>) = wide_tile::strided::<f64, Dmma, Dmma, Buffered4, 128, 64, 16, 3, 4>;
    entries dmma_k4_f64: f64;
}
