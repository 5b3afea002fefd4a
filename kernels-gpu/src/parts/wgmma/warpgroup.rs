//! The Hopper block tile: two consumer warpgroups of 64 rows each over 128 x `COLS` tiles,
//! stages of 128-byte-swizzled 16-bit rows (64 K elements), their `wgmma` matrix
//! descriptors (`Descriptors`) and a warpgroup's accumulators as a type (`WarpgroupTile`:
//! `m64n256k16`, `m64n192k16`, `m64n128k16` or `m64n64k16`).
use crate::device::shared::shared_address;
use crate::device::wgmma::{self, Descriptor, Swizzle};
use crate::element::{Element, WgmmaInput};
use crate::parts::schedule::split_tail::{self, Slice};
use crate::parts::wgmma::epilogue::epilogue;
use crate::problem::COut;
pub(crate) const BM: u32 = 128;
pub(crate) const BN: u32 = 256;
pub(crate) const BK: u32 = 64;
pub(crate) const STAGES: u32 = 4;

/// Bytes of a 128-byte swizzle atom: 8 rows of 128 bytes, aligned to its size.
pub(crate) const ATOM: u32 = 1024;
/// Bytes of one stage's A (`BM` rows of `BK` 16-bit elements: one 128-byte row each) and
/// B (`BN / 64` panels of `BK` rows of 128 bytes).
pub(crate) const A_STAGE: u32 = BM * BK * 2;
pub(crate) const PANEL: u32 = BK * 128;
pub(crate) const B_STAGE: u32 = BK * BN * 2;

/// Stages of a 128 x `cols` block tile that 192 KiB of shared memory hold, A's 16 KiB and
/// B's `cols / 64` panels of 8 KiB each: 4 for 256 columns and for 192, 6 for 128, 8 for 64.
pub(crate) const fn stages_for(cols: u32) -> u32 {
    192 * 1024 / (A_STAGE + BK * cols * 2)
}

/// A warpgroup's operands in stage 0, as descriptors of the first K step, each operand as
/// its tile lies: K-major (128-byte rows of 64 K elements, 8 rows an atom; a K step of 16 is
/// 32 bytes along the rows), or MN-major where `A_MN` / `B_MN` (64-element panels of 128-byte
/// rows, one per K, 8 K rows an atom; a K step is two atoms down the panels). A row-major A
/// is K-major, a row-major B MN-major; their transposes the other way round.
#[derive(Clone, Copy)]
pub(crate) struct Descriptors<const A_MN: bool, const B_MN: bool> {
    a: Descriptor,
    b: Descriptor,
}

/// Bytes from one K step of 16 to the next in a 128-byte-swizzled tile of 16-bit rows,
/// MN-major (two atoms down a panel) or K-major (32 bytes along the rows).
pub(crate) const fn k_step(mn_major: bool) -> u32 {
    if mn_major { 2 * ATOM } else { 32 }
}

/// The descriptor of a 128-byte-swizzled operand tile at shared address `at` (1024-aligned):
/// MN-major (64-element panels of 128-byte K rows, the next panel `PANEL` further) or
/// K-major (128-byte rows of K, 8 rows an atom).
#[inline(always)]
pub(crate) fn operand(at: u32, mn_major: bool) -> Descriptor {
    match mn_major {
        true => Descriptor::new(at, PANEL, ATOM, Swizzle::B128),
        false => Descriptor::new(at, 16, ATOM, Swizzle::B128),
    }
}

impl<const A_MN: bool, const B_MN: bool> Descriptors<A_MN, B_MN> {
    /// Bytes from one K step of 16 to the next.
    const fn step(mn_major: bool) -> u32 {
        k_step(mn_major)
    }

    /// The operand whose tile starts at shared address `at`.
    #[inline(always)]
    fn operand(at: u32, mn_major: bool) -> Descriptor {
        operand(at, mn_major)
    }

    /// Stages of A and B at `a_all` and `b_all`, for warpgroup `warpgroup` (rows `64 w..`:
    /// 64 rows of 128 bytes K-major, one panel MN-major, 8 KiB either way).
    #[inline(always)]
    pub(crate) fn of(a_all: *mut u8, b_all: *mut u8, warpgroup: u32) -> Self {
        Self {
            a: Self::operand(shared_address(a_all) + warpgroup * PANEL, A_MN),
            b: Self::operand(shared_address(b_all), B_MN),
        }
    }

    /// Issues stage `s`'s four `wgmma`s (one per 32-byte K slice of the 128-byte rows: K = 64
    /// of a 16-bit type, 32 of TF32) as one batch, into a warpgroup tile `W` (64 x 256, or
    /// for 16-bit types 64 x 128 or 64 x 64); stages of B are `W::COLS` columns wide.
    ///
    /// # Safety
    /// As [`Element::wgmma_m64n256`]: the stage is complete and visible to `wgmma`.
    #[inline(always)]
    pub(crate) unsafe fn multiply<T: WgmmaInput, W: WarpgroupTile>(&self, acc: &mut W, s: u32) {
        wgmma::fence(acc);
        for step in 0..BK / 16 {
            let a_k = self.a.advanced(s * A_STAGE + Self::step(A_MN) * step);
            let b_k = self.b.advanced(s * W::B_STAGE + Self::step(B_MN) * step);
            // SAFETY: `mma`'s points: a_k, b_k lie in stage s, complete and visible (this
            // contract); the same descriptors in the whole warpgroup; the fence above; the caller
            // keeps stage and accumulators until a `wait_group` retires the batch.
            unsafe { acc.mma::<T, A_MN, B_MN>(a_k, b_k) };
        }
        wgmma::commit_group();
    }

    /// [`Descriptors::multiply`] for TF32 (both operands K-major: `A_MN` and `B_MN` false)
    /// with A from registers, K steps `first` and `first + 1` of stage `s` as one batch:
    /// `a[i]` is this thread's fragment of the warpgroup's A for step `first + i` (8
    /// elements: 32 bytes along B's 128-byte rows), `wgmma::m64n256k8_tf32_rs`.
    ///
    /// # Safety
    /// As [`Descriptors::multiply`] for B.
    #[inline(always)]
    pub(crate) unsafe fn multiply_tf32_rs(
        &self,
        acc: &mut [f32; 128],
        s: u32,
        first: u32,
        a: [[u32; 4]; 2],
    ) {
        wgmma::fence(acc);
        for i in 0..2 {
            let step = first + i as u32;
            let b_k = self.b.advanced(s * B_STAGE + Self::step(B_MN) * step);
            // SAFETY: `m64n256k8_tf32_rs`'s points: B of stage s is complete and visible (this
            // contract), the same descriptor in all 128 threads, after the fence above, kept until
            // a `wait_group`.
            unsafe { wgmma::m64n256k8_tf32_rs(acc, a[i], b_k) };
        }
        wgmma::commit_group();
    }
}

/// A consumer warpgroup's tile of accumulators, 64 rows by `COLS` columns of D: 64 x 256
/// (`m64n256k16`, 128 f32 a thread), 64 x 192 (`m64n192k16`, 96 a thread), 64 x 128
/// (`m64n128k16`, 64 a thread) or 64 x 64 (`m64n64k16`, 32 a thread). The block tile (two warpgroups, 128 rows) is as wide, and so
/// are B's stages.
pub(crate) trait WarpgroupTile: wgmma::Accumulators + Sized {
    /// Columns of D.
    const COLS: u32;
    /// All zeros.
    const ZERO: Self;

    /// Bytes of one stage of B: `BK` rows of `COLS` 16-bit elements.
    const B_STAGE: u32 = BK * Self::COLS * 2;

    /// D += A B for one K step (`Element::wgmma_m64n256`, `wgmma_m64n128` or
    /// `wgmma_m64n64`).
    ///
    /// # Safety
    /// As [`Element::wgmma_m64n256`].
    unsafe fn mma<T: WgmmaInput, const A_MN: bool, const B_MN: bool>(
        &mut self,
        a: Descriptor,
        b: Descriptor,
    );

    /// [`epilogue`] of this tile.
    ///
    /// # Safety
    /// As [`epilogue`].
    unsafe fn store<T: Element>(
        &self,
        out: &COut<T::Acc, T::Out>,
        mn: (u32, u32),
        at: (u32, u32),
        t: u32,
    );

    /// `split_tail::finish` of consumer warp `warp`'s 16 rows of this tile (lane `lane`):
    /// true where they are now the whole sum, to store.
    ///
    /// # Safety
    /// As `split_tail::finish`.
    unsafe fn finish_slice(
        &mut self,
        workspace: *mut f32,
        slice: Slice,
        warp: u32,
        lane: u32,
    ) -> bool;

    /// TF32's accumulators (`wgmma_tf32`'s mainloop: 64 x 256 only), as this tile; traps for
    /// the narrower tiles, which no TF32 kernel uses.
    fn from_tf32(acc: [f32; 128]) -> Self;
}

/// The tile of `$len` accumulators a thread: `$cols` columns, multiplied by `$mma`; TF32's
/// accumulators through `$from_tf32`.
macro_rules! warpgroup_tile {
    ($len:literal, $cols:literal, $mma:ident, $from_tf32:expr) => {
        impl WarpgroupTile for [f32; $len] {
            const COLS: u32 = $cols;
            const ZERO: Self = [0.0; $len];

            /// # Safety
            /// As [`WarpgroupTile::mma`] (the contract of `T`'s `wgmma` of this shape).
            #[inline(always)]
            unsafe fn mma<T: WgmmaInput, const A_MN: bool, const B_MN: bool>(
                &mut self,
                a: Descriptor,
                b: Descriptor,
            ) {
                // SAFETY: the caller's points for `WarpgroupTile::mma` (warpgroup-wide, after
                // `fence`, operands complete, visible and kept until a `wait_group`) are those of
                // `T`'s `wgmma` of this shape.
                unsafe { T::$mma::<A_MN, B_MN>(self, a, b) }
            }

            /// # Safety
            /// As [`WarpgroupTile::store`] ([`epilogue`]'s contract).
            #[inline(always)]
            unsafe fn store<T: Element>(
                &self,
                out: &COut<T::Acc, T::Out>,
                mn: (u32, u32),
                at: (u32, u32),
                t: u32,
            ) {
                // SAFETY: `store`'s points are `epilogue`'s (C m x n at ldc, these elements this
                // thread's only), for this tile's accumulators.
                unsafe { epilogue::<T, $len>(out, self, mn, at, t) }
            }

            /// # Safety
            /// As [`WarpgroupTile::finish_slice`].
            #[inline(always)]
            unsafe fn finish_slice(
                &mut self,
                workspace: *mut f32,
                slice: Slice,
                warp: u32,
                lane: u32,
            ) -> bool {
                // SAFETY: the caller's points are `finish`'s, for this tile's accumulators.
                unsafe { split_tail::finish::<$len>(self, workspace, slice, warp, lane) }
            }

            #[inline(always)]
            fn from_tf32(acc: [f32; 128]) -> Self {
                $from_tf32(acc)
            }
        }
    };
}
warpgroup_tile!(128, 256, wgmma_m64n256, |acc| acc);
warpgroup_tile!(96, 192, wgmma_m64n192, |_| crate::device::thread::trap());
warpgroup_tile!(64, 128, wgmma_m64n128, |_| crate::device::thread::trap());
warpgroup_tile!(32, 64, wgmma_m64n64, |_| crate::device::thread::trap());
