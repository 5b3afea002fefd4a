//! Decode products on the tensor cores: `decode_async`'s pipelines of B and its one-launch
//! split-K, with the multiply-adds done by `mma.sync` m16n8k16 on up to 16 rows of C (A's
//! rows past M are zeros). The SIMT kernels spend a fused multiply-add per row of C per
//! element of B, so at 8 to 16 rows they no longer keep up with HBM (`decode` reads B at
//! 0.4-0.9 TB/s there); here 16 rows cost what one does.
//!
//! A warp streams 16 K rows at a time of its block's 256-column strip: each lane copies its
//! own 16-byte chunk of each row (`cp.async`), three stages deep; once the lanes' copies of a
//! stage have landed (`wait_group`, then `__syncwarp` so every lane sees every lane's),
//! `ldmatrix.trans` turns the rows into B fragments for 32 `mma`s, A's fragment coming from
//! global memory (a few KiB, in L1). Rows of the stages are padded to 264 elements, so the
//! 8 rows an `ldmatrix` reads fall in different banks.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(n / 256) x splits` (as `decode_async`,
//! [`crate::parts::schedule::decode_split::splits`]); shared 99 KiB + 16 bytes; the workspace of
//! `decode_async` with passes of 16 rows; f16, bf16 (compute capability 8.0+).
use crate::catalogue::PtxFact::{Barriers, Has};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Arch, Candidate, Elem, Grid, KernelSpec, Shared, Threads, Tile};
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::decode::mma_strip::{self, PIPES, ROWS};
use crate::parts::mma::fragments::LDMATRIX_TRANS;
use crate::parts::mma::tensor_tile::MMA_16BIT;
use crate::parts::schedule::decode_split::{LAST_BLOCK_STREAMED, RESIDENT, STRIP, WARPS};
use crate::problem::{Gemm, kernel};

kernel! {
    SPEC = KernelSpec::new(("decode_mma", file!()), "`decode_async` on the tensor cores: `mma.sync` m16n8k16 on up to 16 rows of C, B fragments by `ldmatrix.trans` from the `cp.async` pipelines",
        Arch::Sm80, Threads::Fixed(WARPS * 32, 1), Tile::Fixed { rows: ROWS, cols: STRIP })
        .with_grid(Grid::SplitKLastBlock { per_sm: RESIDENT as u32 }).with_shared(Shared::Elements(PIPES + 4))
        .with_elements(&[Elem::F16, Elem::Bf16]).with_candidate(Candidate::WhenSideAtMost(16)).on_tensor_cores()
        .with_ptx(&[PtxFacts::all(&[Barriers(5), Has(MMA_16BIT), Has(LDMATRIX_TRANS), Has("cp.async.wait_group 1"), Has("bar.warp.sync")]), LAST_BLOCK_STREAMED]);
    fn decode_mma;
    entries decode_mma_f16: f16, decode_mma_bf16: Bf16, decode_mma_f16_f16: Narrow<f16>, decode_mma_bf16_bf16: Narrow<Bf16>;
}

/// # Safety
/// As [`mma_strip::product`].
#[inline(always)]
pub unsafe fn decode_mma<T: Half>(g: Gemm<T>) {
    // SAFETY: `product`'s contract is this fn's, which the entry point's contract and SPEC's launch
    // meet: 128 threads, `ceil(n / 256) x splits` blocks, PIPES + 4 accumulators, counters zero.
    unsafe { mma_strip::product(g) }
}
