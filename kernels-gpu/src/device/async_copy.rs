//! Asynchronous copies from global to shared memory (PTX `cp.async`, compute capability 8.0
//! and newer): the copy engine moves 16 bytes per instruction without passing through
//! registers; `commit_group` closes a batch and `wait_group::<N>` waits until at most N
//! batches of this thread are still in flight. Only the sm_80 module contains kernels that
//! use them. On the host (CPU executor) a copy happens at once, with bounds checks.

/// `cp.async.$cache` of `$size` bytes (an immediate) from global `$src` into shared memory
/// at `$dst`, a generic pointer (`ptr`, converted first) or a shared address (`at`): `$bytes`
/// of the source are read (0 or `$size`), the rest of the destination zero-filled.
#[cfg(target_arch = "nvptx64")]
macro_rules! cp_async {
    ($cache:literal, $size:literal, ptr $dst:expr, $src:expr, $bytes:expr) => {
        cp_async!(
            @ $cache, $size, "{{ .reg .u64 %cp_s, %cp_g; cvta.to.shared.u64 %cp_s, {dst}; ",
            "%cp_s", [in(reg64) $dst as u64], $src, $bytes
        )
    };
    ($cache:literal, $size:literal, at $dst:expr, $src:expr, $bytes:expr) => {
        cp_async!(@ $cache, $size, "{{ .reg .u64 %cp_g; ", "{dst}", [in(reg32) $dst], $src, $bytes)
    };
    (
        @ $cache:literal, $size:literal, $open:literal, $to:literal, [$($dst:tt)*], $src:expr,
        $bytes:expr
    ) => {
        // SAFETY: writes `$size` shared bytes at the destination and reads `$bytes` global
        // bytes at `$src` (none where 0): valid and aligned by the enclosing function's
        // contract, the destination unread until a wait covers the copy.
        unsafe {
            core::arch::asm!(
                concat!(
                    $open, "cvta.to.global.u64 %cp_g, {src}; cp.async.", $cache,
                    ".shared.global [", $to, "], [%cp_g], ", $size, ", {bytes}; }}"
                ),
                dst = $($dst)*,
                src = in(reg64) $src as u64,
                bytes = in(reg32) $bytes,
            )
        }
    };
}

/// `cp_async!` `.ca` of one element of `$t` (4 or 8 bytes; the copy size is an immediate,
/// one arm per size).
#[cfg(target_arch = "nvptx64")]
macro_rules! copy_element {
    ($t:ty, $kind:ident $dst:expr, $src:expr, $bytes:expr) => {
        match size_of::<$t>() {
            8 => cp_async!("ca", "8", $kind $dst, $src, $bytes),
            4 => cp_async!("ca", "4", $kind $dst, $src, $bytes),
            _ => super::thread::trap(),
        }
    };
}

/// Starts copying 16 bytes from global `src` to shared `dst`.
///
/// # Safety
/// `dst` points into the block's shared memory and `src` to 16 readable bytes of global
/// memory, both 16-byte aligned; nobody reads `dst` before a `wait_group` that covers this
/// copy and a barrier.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn copy16<T>(dst: *mut T, src: *const T) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: writes the 16 shared bytes at `dst` and reads the 16 global bytes at `src`,
    // both valid, 16-byte aligned and `dst` unread until waited for (the caller's
    // contract).
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 %cp_s, %cp_g; cvta.to.shared.u64 %cp_s, {dst}; cvta.to.global.u64 %cp_g, {src}; cp.async.cg.shared.global [%cp_s], [%cp_g], 16; }}",
            dst = in(reg64) dst as u64,
            src = in(reg64) src as u64,
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        super::host::check_global(src as usize, 16, "read (cp.async)");
        // SAFETY: `src` lies in a launch buffer (checked above), `dst` in the block's
        // shared region (the caller's contract): 16 bytes each, in distinct allocations.
        unsafe { core::ptr::copy_nonoverlapping(src.cast::<u8>(), dst.cast::<u8>(), 16) };
    }
}

/// [`copy16`] of the first `bytes` (0 or 16) of `src`, the rest of the 16 filled with zeros
/// (`cp.async`'s source size): edge tiles load whole chunks without reading past A or B.
///
/// # Safety
/// As [`copy16`], where `bytes` is 16; with 0, `src` is not read (it must still be a
/// global address).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn copy16_or_zero<T>(dst: *mut T, src: *const T, bytes: u32) {
    #[cfg(target_arch = "nvptx64")]
    cp_async!("cg", "16", ptr dst, src, bytes);
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if bytes == 16 {
            // SAFETY: with `bytes` 16 the caller's contract is `copy16`'s.
            unsafe { copy16(dst, src) };
        } else {
            assert_eq!(bytes, 0, "cp.async source size must be 0 or 16 here");
            // SAFETY: `dst` is 16 writable bytes of the block's shared region (the caller's
            // contract).
            unsafe { core::ptr::write_bytes(dst.cast::<u8>(), 0, 16) };
        }
    }
}

/// [`copy16_or_zero`] into shared address `dst` ([`super::shared::shared_address`]): kernels
/// that compute their chunks' addresses once, with no generic-to-shared conversion per copy.
///
/// # Safety
/// As [`copy16_or_zero`], for the 16 bytes at shared address `dst`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn copy16_or_zero_at<T>(dst: u32, src: *const T, bytes: u32) {
    #[cfg(target_arch = "nvptx64")]
    cp_async!("cg", "16", at dst, src, bytes);
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: `shared_byte` asserts that the 16 bytes lie in the block's shared region;
    // `src` and `bytes` pass the caller's contract on.
    unsafe {
        copy16_or_zero(super::host::shared_byte(dst, 16), src.cast::<u8>(), bytes)
    }
}

instructions! {
    /// Closes the current batch of this thread's copies.
    fn commit_group() = "cp.async.commit_group;";
    /// Waits until at most `N` of this thread's committed batches are still in flight.
    fn wait_group<const N>() = "cp.async.wait_group {N};";
}

/// Starts copying one 4- or 8-byte element from global `src` to shared `dst` (`cp.async.ca`
/// of that size), or writes zeros there where `inside` is false: the copies of a tile whose
/// rows do not come in 16-byte chunks.
///
/// # Safety
/// `dst` points into the block's shared memory and, where `inside`, `src` to a readable
/// element of global memory, both aligned to the element's size (4 or 8 bytes); nobody
/// reads `dst` before a `wait_group` that covers this copy and a barrier.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn copy_element_or_zero<T>(dst: *mut T, src: *const T, inside: bool) {
    let bytes = if inside { size_of::<T>() as u32 } else { 0 };
    #[cfg(target_arch = "nvptx64")]
    copy_element!(T, ptr dst, src, bytes);
    #[cfg(not(target_arch = "nvptx64"))]
    {
        assert!(
            matches!(size_of::<T>(), 4 | 8),
            "cp.async of one element copies 4 or 8 bytes"
        );
        if inside {
            super::host::check_global(src as usize, size_of::<T>(), "read (cp.async)");
            // SAFETY: `src` is an element of a launch buffer (checked above), `dst` one of
            // the block's shared region, both aligned for `T` (the caller's contract).
            unsafe { core::ptr::copy_nonoverlapping(src, dst, 1) };
        } else {
            let _ = bytes;
            // SAFETY: `dst` is one writable element of the block's shared region (the
            // caller's contract).
            unsafe { core::ptr::write_bytes(dst.cast::<u8>(), 0, size_of::<T>()) };
        }
    }
}

/// [`copy_element_or_zero`] into shared address `dst` (see [`copy16_or_zero_at`]).
///
/// # Safety
/// As [`copy_element_or_zero`], for the element at shared address `dst`.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn copy_element_or_zero_at<T>(dst: u32, src: *const T, inside: bool) {
    #[cfg(target_arch = "nvptx64")]
    {
        let bytes = if inside { size_of::<T>() as u32 } else { 0 };
        copy_element!(T, at dst, src, bytes);
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: `shared_byte` asserts that the element lies in the block's shared region, the
    // caller's contract that it is aligned; `src` and `inside` pass that contract on.
    unsafe {
        let to = super::host::shared_byte(dst, size_of::<T>()).cast::<T>();
        copy_element_or_zero(to, src, inside)
    }
}

/// The `cp.async` pipeline of `STAGES` stages over `steps` steps (`WAIT` is `STAGES - 2`):
/// the prologue starts stages `0..STAGES - 1`; step `s` waits for this thread's copies of
/// stage `s`, meets `barrier` (after it everyone's copies have landed and everyone is done
/// with the slot refilled next), starts stage `s + STAGES - 1`, and calls `consume(s)`.
/// `fill(s)` starts and commits stage `s`'s copies; past the last step an empty group keeps
/// the count the waits expect.
#[inline(always)]
pub fn pipeline<const STAGES: u32, const WAIT: u32>(
    steps: u32,
    fill: impl Fn(u32),
    barrier: impl Fn(),
    mut consume: impl FnMut(u32),
) {
    const { assert!(WAIT + 2 == STAGES) };
    for s in 0..STAGES - 1 {
        if s < steps {
            fill(s);
        } else {
            commit_group();
        }
    }
    for s in 0..steps {
        wait_group::<WAIT>();
        barrier();
        if s + STAGES - 1 < steps {
            fill(s + STAGES - 1);
        } else {
            commit_group();
        }
        consume(s);
    }
}
