//! `shfl.sync.bfly.b32` (compute capability 7.0 and newer): every lane of a warp hands in a
//! 32-bit word and receives the word of lane `lane ^ mask`, without shared memory. The
//! epilogues use it to regroup the pairs of 16-bit values an `mma`/`wgmma` accumulator
//! layout gives each lane into four consecutive columns, so that a warp's stores fill
//! whole 32-byte sectors.
//!
//! On the host (CPU executor) it is one warp-wide exchange for all `N` words, after which
//! each lane takes its partner's: lanes that do not all reach the same call are reported
//! as a divergence fault, not a hang.

/// Each of `words` exchanged with lane `lane ^ mask` (`mask` < 32): one `shfl.sync.bfly.b32`
/// per word on the GPU, one exchange of all of them on the host (`N` at most
/// 12, the host's exchange width).
///
/// # Safety
/// Every lane of the warp calls it at the same place with the same `mask` (warp-uniform
/// control flow): a shuffle some lanes skip is undefined on the GPU.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn xor<const N: usize>(words: [u32; N], mask: u32) -> [u32; N] {
    #[cfg(target_arch = "nvptx64")]
    {
        words.map(|w| {
            let r: u32;
            // SAFETY: the caller's contract: all 32 lanes take part.
            unsafe {
                core::arch::asm!(
                    "shfl.sync.bfly.b32 {r}, {w}, {m}, 0x1f, 0xffffffff;",
                    r = out(reg32) r,
                    w = in(reg32) w,
                    m = in(reg32) mask,
                );
            }
            r
        })
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        use super::host::{EXCHANGE_WORDS, lane_id, warp_exchange};
        assert!(
            N <= EXCHANGE_WORDS && mask < 32,
            "shfl.sync.bfly: {N} words (at most {EXCHANGE_WORDS}) with mask {mask} (below 32)"
        );
        let mut mine = [0u32; EXCHANGE_WORDS];
        mine[..N].copy_from_slice(&words);
        let all = warp_exchange(mine);
        let partner = (lane_id() ^ mask) as usize;
        core::array::from_fn(|i| all[partner][i])
    }
}
