//! f32 products at FP32-class accuracy on the TF32 tensor cores, when the caller asks
//! ([`Precision::Tf32x3`]): each input x split into big = tf32(x) and small = tf32(x - big)
//! as its fragment is read, and three `mma`s per tile, small x big, big x small, then
//! big x big (small x small, about 2^-22 of the product, is dropped). `mma_tf32`'s tile
//! and pipeline otherwise.
//!
//! The three `mma`s of a K step of 8 start from zero and their sum is added to the
//! accumulators with an FP32 add, rounded to nearest. Accumulating in the `mma`s instead
//! (measured, H200) made the error grow with K, to 10x an FP32 kernel's at K = 4096 and
//! 20x at 14336: the tensor cores' additions do not round to nearest, and over thousands
//! of them the bias adds up.
//!
//! Inf and NaN: where big is not finite (x is Inf or NaN, or rounds past f32's range: |x|
//! above `(2 - 2^-11) 2^127`, whose products are then Inf, unlike `wgmma_3xtf32`'s) small
//! is 0. A cross term can still be Inf x 0 = NaN where IEEE gives Inf (an Inf in A against
//! an element of B that TF32 holds exactly), so a block whose sums hold a NaN runs its
//! mainloop once more in plain TF32 (big x big: Inf x b as IEEE says) and takes that sum
//! for each NaN element; NaNs IEEE asks for (a NaN input, Inf x 0, Inf - Inf) are NaN in
//! TF32 too. Only blocks with a NaN pay for it.
//!
//! Launch rules ([`SPEC`]): as `mma_tf32`.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Elem, Precision};
use crate::device::mma::{m16n8k8_tf32, round_tf32};
use crate::parts::mma::schemes::Tf32;
use crate::parts::mma::wide_tile::{self, Scheme, Steps8};
use crate::problem::{Gemm, kernel};

/// `mma_tf32`'s tile and pipeline.
const BN: u32 = 128;
const BK: u32 = 32;
const DEPTH: u32 = 3;

/// `[big, small]` TF32 parts of each input.
pub struct Tf32x3;

impl Scheme for Tf32x3 {
    const REPAIR: bool = true;
    type Acc = f32;
    type Frag = [u32; 2];
    #[inline(always)]
    fn prepare(x: f32) -> [u32; 2] {
        // (Not `wgmma_tf32::split_tf32`: its range fix-ups, here in the mainloop, halved the
        // speed, H200: 17.5 TFLOP/s at 4096^3 against 30.9.)
        let big = round_tf32(x);
        let rest = x - f32::from_bits(big);
        let small = if rest.is_finite() {
            round_tf32(rest)
        } else {
            0
        };
        [big, small]
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn mma(a: [[u32; 2]; 4], b: [[u32; 2]; 2], c: [f32; 4]) -> [f32; 4] {
        let (a_big, a_small) = (a.map(|x| x[0]), a.map(|x| x[1]));
        let (b_big, b_small) = (b.map(|x| x[0]), b.map(|x| x[1]));
        let p = m16n8k8_tf32(a_small, b_big, [0.0; 4]);
        let p = m16n8k8_tf32(a_big, b_small, p);
        let p = m16n8k8_tf32(a_big, b_big, p);
        [c[0] + p[0], c[1] + p[1], c[2] + p[2], c[3] + p[3]]
    }
}

// Launch: `wide_tile::spec`'s for the body's tile.
kernel! {
    SPEC = wide_tile::spec(("mma_3xtf32", file!()), "FP32-class accuracy on TF32 tensor cores when asked: inputs split into two TF32 parts, three `mma`s per tile",
        (Arch::Sm80, Elem::F32, Precision::Tf32x3), (128, BN, BK, DEPTH, 4), 1).with_ptx(&[PtxFacts::all(&[Barriers(4)])]);
    fn mma_3xtf32(Gemm<f32>) = wide_tile::pipelined::<f32, Tf32x3, Tf32, Steps8, 128, BN, BK, DEPTH, 4, false, false>;
    entries mma_3xtf32_f32: f32;
}
