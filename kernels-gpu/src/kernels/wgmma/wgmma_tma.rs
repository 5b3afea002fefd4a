//! Tensor cores on Hopper, second `wgmma` rung: `wgmma_async`'s tiles and `wgmma`s, loaded
//! by the Tensor Memory Accelerator and run warp-specialised. A producer warpgroup (one of
//! its threads, in fact) issues per stage one TMA copy of A's 128 x 64 box and four of B's
//! 64 x 64 panels, which land already 128-byte swizzled and zero-filled past the edges of A
//! and B; two consumer warpgroups only wait and multiply. Stages hand over through
//! mbarriers: `full[s]` completes when stage `s`'s bytes have landed (the producer's
//! `arrive.expect_tx` and the copies' transaction count), `empty[s]` when all 256 consumer
//! threads have finished its `wgmma`s. No block-wide barrier in the mainloop, no copy
//! instructions or address arithmetic in the consumers, and all four stages ahead.
//!
//! `setmaxnreg` moves registers from the producer warpgroup (down to 40) to the consumers (up
//! to 232), whose 128 accumulators per thread need them; the launch bounds (384 threads,
//! one block per SM) cap the kernel at 168 before that.
//!
//! Every form of the product: each operand is loaded as it is stored, a row-major A as
//! K-major 128 x 64 boxes and a transposed one as two MN-major 64 x 64 panels, a row-major B
//! as four MN-major panels and a transposed one as one K-major 256 x 64 box, and multiplied
//! with the matching transpose immediates (one mainloop per pair, chosen per tile); the
//! tensor maps carry the leading dimensions and the batch (a third dimension), and the
//! epilogue applies alpha and beta at C's leading dimension.
//!
//! Dense row-major launches whose inputs TMA cannot read (K or N not a multiple of 8, a
//! misaligned input: the host then writes no tensor maps, `device::tma::reads`) take
//! `mma_ldmatrix`'s one-stage `mma.sync` loop over the block tile's two 128 x 128 halves,
//! the producer warpgroup only meeting its barriers; the host does not choose these kernels
//! for the other forms there.
//!
//! Launch rules ([`SPEC`]): 384 threads, grid `ceil(n / 256) x ceil(m / 128) x batch`, 4 stages of
//! 48 KiB, 1 KiB to align them and the 8 mbarriers (197,696 bytes), the two tensor maps in
//! the workspace; only in the sm_90a module; f16, bf16.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised};
use crate::parts::wgmma::warpgroup::{BN, STAGES};
use crate::problem::{Gemm, kernel};

// Launch: `warp_specialised::spec`'s for the body's tile width and stages, and the host writes A's
// and B's tensor maps into the workspace wherever `tma::reads` holds.
kernel! {
    SPEC = spec(("wgmma_tma", file!()), "`wgmma_async`'s tiles loaded by TMA (swizzled, zero-filled edges) on mbarriers, warp-specialised: a producer warpgroup issues the copies, 2 consumer warpgroups multiply; `setmaxnreg` 40 / 232",
        (BN, STAGES), Grid::Tiles);
    fn wgmma_tma<T: Half>(Gemm<T>) = warp_specialised::<T, false, false, [f32; 128], STAGES>;
    strided entries wgmma_tma_f16: f16, wgmma_tma_bf16: Bf16, wgmma_tma_f16_f16: Narrow<f16>, wgmma_tma_bf16_bf16: Narrow<Bf16>;
}
