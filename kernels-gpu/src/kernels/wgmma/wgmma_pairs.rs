//! Tensor cores on Hopper, `wgmma_persistent` in clusters of two: the two blocks of a
//! cluster compute 128 x 256 tiles one above the other, which read the same 64 x 256 of B
//! each phase, and each block's producer copies half of it into both blocks' shared memory
//! with one TMA multicast (two panels of B, or half the rows of a transposed B's box).
//!
//! Why: a phase's copies are 128 rows of A and 256 of B, and TMA's cost is by the row: a
//! 128-byte row off the 32-byte sectors (a leading dimension of 3000 16-bit elements)
//! touches five sectors, and B's rows so cost `wgmma_persistent` 17% at 3000^3 (A's
//! nothing). Multicast halves the rows of B each block's TMA unit issues, and each B panel
//! is read from L2 once for two tiles.
//!
//! A stage of a block is free when both blocks' consumers are done with it (the other
//! block's producer writes it too): each consumer warp arrives on both blocks' `empty`
//! barriers. The blocks meet at a cluster barrier after initialising their barriers and
//! before either returns.
//!
//! Launch rules ([`SPEC`]): as `wgmma_persistent`, in clusters of two blocks along a 1D
//! grid of `2 min(pairs of tiles, SMs / 2)` blocks; a transposed B's tensor map in boxes of
//! 128 rows.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised_pairs};
use crate::parts::wgmma::warpgroup::{BN, STAGES};
use crate::problem::{Gemm, kernel};

// Launch: `warp_specialised::spec`'s for the body's tile width and stages in clusters of two, and
// the host writes A's and B's tensor maps into the workspace wherever `tma::reads` holds.
kernel! {
    SPEC = spec(("wgmma_pairs", file!()), "`wgmma_persistent` in clusters of two blocks on tiles one above the other, each block's producer copying half of B into both by TMA multicast: half the rows of B per block's TMA",
        (BN, STAGES), Grid::PersistentPairs);
    fn wgmma_pairs<T: Half>(Gemm<T>) = warp_specialised_pairs::<T, [f32; 128], STAGES>;
    strided entries wgmma_pairs_f16: f16, wgmma_pairs_bf16: Bf16, wgmma_pairs_f16_f16: Narrow<f16>, wgmma_pairs_bf16_bf16: Narrow<Bf16>;
}
