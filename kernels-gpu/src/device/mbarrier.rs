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

/// `mbarrier.init`: `count` arrivals complete a phase. Call from one thread, then
/// [`fence_init`] and a block barrier before anyone uses it.
///
/// # Safety
/// `bar` is 8-byte aligned in the block's shared memory, used for nothing else.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn init(bar: *mut u64, count: u32) {
    let at = shared_address(bar);
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: writes the 8-byte mbarrier at shared address `at`: aligned, in the block's
    // shared memory and used for nothing else (the caller's contract).
    unsafe {
        core::arch::asm!("mbarrier.init.shared::cta.b64 [{a}], {c};", a = in(reg32) at, c = in(reg32) count);
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::block_async().init(at, count);
}

/// `fence.mbarrier_init.release.cluster`: makes this thread's `init`s visible to the
/// asynchronous proxy (the TMA unit), before the block barrier that publishes them.
#[inline(always)]
pub fn fence_init() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a memory fence.
    unsafe {
        core::arch::asm!("fence.mbarrier_init.release.cluster;")
    }
}

/// `mbarrier.arrive`: one arrival.
///
/// # Safety
/// `bar` was initialised ([`init`]) and published by a barrier.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn arrive(bar: *mut u64) {
    let at = shared_address(bar);
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: updates only the mbarrier at `at`, which the caller initialised and published
    // by a barrier (the contract).
    unsafe {
        core::arch::asm!("mbarrier.arrive.shared::cta.b64 _, [{a}];", a = in(reg32) at);
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::block_async().arrive(at, 0);
}

/// `mbarrier.arrive.expect_tx`: one arrival, and `bytes` more to be delivered by
/// asynchronous copies before the phase completes.
///
/// # Safety
/// As [`arrive`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn arrive_expect_tx(bar: *mut u64, bytes: u32) {
    let at = shared_address(bar);
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: as in `arrive`; the expected byte count is state of that mbarrier only.
    unsafe {
        core::arch::asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{a}], {b};",
            a = in(reg32) at,
            b = in(reg32) bytes
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::block_async().arrive(at, bytes);
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
