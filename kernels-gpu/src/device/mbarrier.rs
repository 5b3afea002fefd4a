//! Shared-memory barriers with phases and transaction counts, PTX `mbarrier` (sm_90 forms;
//! used from the sm_90a module): an 8-byte object in shared memory that completes a phase
//! when its expected arrivals have arrived and the bytes it was told to expect
//! (`expect_tx`) have been delivered by asynchronous copies (TMA, `complete_tx`). A waiter
//! names the phase it waits for by its parity: [`wait`] with parity `p` returns once the
//! current phase's parity is no longer `p`.
//!
//! On the host (CPU executor) the block's barriers live in its [`BlockAsync`] state, keyed by
//! shared address: arrivals and byte counts as above, and a TMA copy's bytes are delivered
//! into shared memory when its barrier's phase completes. A waiting thread is suspended until
//! the phase completes; one whose phase can never complete (every other thread waits or has
//! returned) is a fault naming it. Each thread remembers the phases it has seen complete, so
//! that a `wgmma` reading TMA-delivered bytes its thread has not waited for is a fault.
//!
//! [`BlockAsync`]: super::host::BlockAsync
use super::shared::shared_address;

/// Functions of the mbarrier at `bar` and a `u32` argument where one is named: the PTX `$ptx`
/// with `{a}` its shared address, on the host `$host` of the block's barrier state.
macro_rules! operations {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident)?) = $ptx:literal, host $host:ident($value:expr);
    )*) => {$(
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(bar: *mut u64 $(, $arg: u32)?) {
            let at = shared_address(bar);
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: touches only the 8-byte mbarrier at shared address `at`, which the
            // caller's contract makes an aligned one of the block's, used for nothing else,
            // and initialised and published before any use but `init`; the argument is
            // state of that mbarrier only.
            unsafe {
                core::arch::asm!($ptx, a = in(reg32) at $(, $arg = in(reg32) $arg)?);
            }
            #[cfg(not(target_arch = "nvptx64"))]
            super::host::block_async().$host(at, $value);
        }
    )*};
}

operations! {
    /// `mbarrier.init`: `count` arrivals complete a phase. Call from one thread, then
    /// [`fence_init`] and a block barrier before anyone uses it.
    ///
    /// # Safety
    /// `bar` is 8-byte aligned in the block's shared memory, used for nothing else.
    fn init(count) = "mbarrier.init.shared::cta.b64 [{a}], {count};", host init(count);
    /// `mbarrier.arrive`: one arrival.
    ///
    /// # Safety
    /// `bar` was initialised ([`init`]) and published by a barrier.
    fn arrive() = "mbarrier.arrive.shared::cta.b64 _, [{a}];", host arrive(0);
    /// `mbarrier.arrive.expect_tx`: one arrival, and `bytes` more to be delivered by
    /// asynchronous copies before the phase completes.
    ///
    /// # Safety
    /// As [`arrive`].
    fn arrive_expect_tx(bytes) =
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{a}], {bytes};", host arrive(bytes);
}

/// One arrival on the mbarrier at `bar`'s offset in block `rank` of the cluster (`mapa`, then
/// `mbarrier.arrive.shared::cluster`, release at CTA scope): for a consumer telling another
/// block's producer that a stage its reads are done with may be copied over. (At cluster
/// scope the release is a `MEMBAR.ALL.GPU` before each arrival, which made `wgmma_pairs`
/// run at 55% of `wgmma_persistent`'s speed.)
///
/// # Safety
/// As [`arrive`], in block `rank` of the cluster (which has initialised its barrier there and
/// published it by a cluster barrier); that block has not returned.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn arrive_cluster(bar: *mut u64, rank: u32) {
    let at = shared_address(bar);
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: touches only the mbarrier at offset `at` of block `rank`'s shared memory, an
    // initialised one of that block, alive (the caller's contract).
    unsafe {
        core::arch::asm!(
            "{{ .reg .b32 %mc_a; mapa.shared::cluster.u32 %mc_a, {a}, {r}; mbarrier.arrive.shared::cluster.b64 _, [%mc_a]; }}",
            a = in(reg32) at,
            r = in(reg32) rank,
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::cluster_async(rank).arrive(at, 0);
}

instructions! {
    /// `fence.mbarrier_init.release.cluster`: makes this thread's `init`s visible to the
    /// asynchronous proxy (the TMA unit), before the block barrier that publishes them.
    fn fence_init() = "fence.mbarrier_init.release.cluster;";
}

/// Waits until the phase of parity `parity` has completed (`mbarrier.try_wait.parity` in a
/// loop): what that phase's copies delivered is then visible to this thread.
///
/// # Safety
/// As [`arrive`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn wait(bar: *mut u64, parity: u32) {
    let at = shared_address(bar);
    #[cfg(target_arch = "nvptx64")]
    loop {
        let done: u32;
        // SAFETY: reads only the mbarrier at `at`, initialised and published (the caller's
        // contract), into a predicate register.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred %mb_p; mbarrier.try_wait.parity.shared::cta.b64 %mb_p, [{a}], {p}; selp.u32 {d}, 1, 0, %mb_p; }}",
                a = in(reg32) at,
                p = in(reg32) parity,
                d = out(reg32) done,
            );
        }
        if done != 0 {
            break;
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::mbarrier_wait(at, parity);
}
