//! Tensor cores on Hopper, `wgmma_persistent` in clusters of four: the blocks of a cluster
//! compute a 2 x 2 square of 128 x 256 tiles. The two blocks of a column of the square read
//! the same 64 x 256 of B each phase, the two of a row the same 128 x 64 of A; each block's
//! producer copies half of its B into its column's blocks and half of its A into its row's
//! with TMA multicast (two panels of B or half the rows of a transposed B's box; one panel
//! of A or a box of 64 rows).
//!
//! Why: TMA and L2 feed the persistent kernels their operands at a rate that bounds them
//! (`wgmma_pairs_128x192` at 3000^3 and at 3072 x 3072 x 3008 moved L2 to the SMs at the
//! same 8.3 TB/s, its time following the bytes), and rows off the 32-byte sectors cost more
//! bytes. In a square each block issues half the rows of A and of B, and each is read from
//! L2 once for two tiles: per tile and phase 24 KiB, against `wgmma_pairs`' 32 and
//! `wgmma_persistent`'s 48.
//!
//! A stage of a block is free when the consumers of the three blocks that write it (the
//! block, its column partner and its row partner) are done with it: each consumer warp
//! arrives on those three blocks' `empty` barriers. The blocks meet at a cluster barrier
//! after initialising their barriers and before any returns.
//!
//! Launch rules ([`SPEC`]): as `wgmma_persistent`, in clusters of four blocks along a 1D
//! grid of `4 min(squares of tiles, resident clusters)` blocks; A's tensor map in boxes of
//! 64 rows, a transposed B's in boxes of 128 rows.
use crate::catalogue::Grid;
use crate::element::Half;
use crate::element::{Bf16, Narrow};
use crate::parts::wgmma::warp_specialised::{spec, warp_specialised_quads};
use crate::parts::wgmma::warpgroup::{BN, STAGES};
use crate::problem::{Gemm, kernel};

// Launch: `warp_specialised::spec`'s for the body's tile width and stages in clusters of four, and
// the host writes A's and B's tensor maps into the workspace wherever `tma::reads` holds.
kernel! {
    SPEC = spec(("wgmma_quads", file!()), "`wgmma_persistent` in clusters of four blocks on 2 x 2 tiles, each block's producer copying half of A into its row's blocks and half of B into its column's by TMA multicast: half the rows of A and of B per block's TMA",
        (BN, STAGES), Grid::PersistentQuads);
    fn wgmma_quads<T: Half>(Gemm<T>) = warp_specialised_quads::<T, [f32; 128], STAGES>;
    strided entries wgmma_quads_f16: f16, wgmma_quads_bf16: Bf16, wgmma_quads_f16_f16: Narrow<f16>, wgmma_quads_bf16_bf16: Narrow<Bf16>;
}
