//! Global-memory access by element index. On the GPU a plain load or store (the kernel's
//! own bounds checks keep it in range); on the host the CPU executor also checks that the
//! element lies inside one of the launch's buffers, so an indexing bug is reported
//! instead of reading or writing whatever lies there.
use super::vector::{Pack2, Pack4, read2, read4, write2, write4};

/// Element `index` of the global buffer at `ptr`.
///
/// # Safety
/// `ptr + index` is inside the buffer `ptr` points into.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load<T: Copy>(ptr: *const T, index: usize) -> T {
    #[cfg(not(target_arch = "nvptx64"))]
    check(ptr, index, 1, "read");
    // SAFETY: the caller's contract: `ptr + index` is an element of `ptr`'s buffer (checked
    // above on the host), so the offset stays in bounds and the read is valid.
    unsafe { *ptr.add(index) }
}

/// Writes element `index` of the global buffer at `ptr`.
///
/// # Safety
/// `ptr + index` is inside the buffer `ptr` points into, and no other thread of the launch
/// accesses that element.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store<T>(ptr: *mut T, index: usize, value: T) {
    #[cfg(not(target_arch = "nvptx64"))]
    check(ptr, index, 1, "write");
    // SAFETY: the caller's contract: an element of the buffer (checked above on the host)
    // that no other thread of the launch accesses, so the write is in bounds and unraced.
    unsafe { *ptr.add(index) = value }
}

/// Elements `index..index + N` (N = 1, 2 or 4) as one access: what an epilogue that
/// stores N at a time reads back for `beta C`.
///
/// # Safety
/// As [`load4`] (for N = 4), [`load2`] (N = 2) or [`load`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_n<T: Pack2 + Pack4, const N: usize>(ptr: *const T, index: usize) -> [T; N] {
    // N is a constant: one branch survives.
    match N {
        4 => {
            // SAFETY: N = 4: the caller's contract is `load4`'s.
            let v = unsafe { load4(ptr, index) };
            core::array::from_fn(|j| v[j])
        }
        2 => {
            // SAFETY: N = 2: the caller's contract is `load2`'s.
            let v = unsafe { load2(ptr, index) };
            core::array::from_fn(|j| v[j])
        }
        // SAFETY: other N: each element `index + j` is in the buffer (`load`'s contract).
        _ => core::array::from_fn(|j| unsafe { load(ptr, index + j) }),
    }
}

/// Elements `index..index + $n` of a `$pack` type as one access: `$load` reads them with
/// `$read`, `$store` writes them with `$write`.
macro_rules! vectors {
    ($($pack:ident, $n:literal: $load:ident, $read:ident, $store:ident, $write:ident;)*) => {$(
        #[doc = concat!("Elements `index..index + ", $n, "` as one access.")]
        ///
        /// # Safety
        #[doc = concat!(
            "The ", $n, " elements are inside the buffer, and `ptr + index` is aligned to ",
            $n, " elements (see [`super::vector`])."
        )]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $load<T: $pack>(ptr: *const T, index: usize) -> [T; $n] {
            #[cfg(not(target_arch = "nvptx64"))]
            check(ptr, index, $n, "read");
            // SAFETY: the caller's contract: elements of the buffer (checked above on the
            // host), aligned to the group as the packed read needs on the GPU.
            unsafe { $read(ptr.add(index)) }
        }

        #[doc = concat!("Writes elements `index..index + ", $n, "` as one access.")]
        ///
        /// # Safety
        #[doc = concat!(
            "As [`", stringify!($load), "`], and no other thread of the launch accesses these ",
            "elements."
        )]
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $store<T: $pack>(ptr: *mut T, index: usize, value: [T; $n]) {
            #[cfg(not(target_arch = "nvptx64"))]
            check(ptr, index, $n, "write");
            // SAFETY: the caller's contract: group-aligned elements of the buffer (checked
            // above on the host) that no other thread accesses, as the packed write needs.
            unsafe { $write(ptr.add(index), value) }
        }
    )*};
}

vectors! {
    Pack2, 2: load2, read2, store2, write2;
    Pack4, 4: load4, read4, store4, write4;
}

/// Elements `(row, col..col + 4)` of a `rows x cols` row-major matrix, zero outside it; one
/// access of four where `vector` says the four are inside and aligned.
///
/// # Safety
/// `ptr` holds `rows * cols` elements; with `vector`, the four are inside and 4-aligned
/// (as for [`load4`]).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load4_or_zeros<T: crate::element::Element>(
    ptr: *const T,
    (row, col): (u32, u32),
    (rows, cols): (u32, u32),
    vector: bool,
) -> [T; 4] {
    let at = |c: u32| row as usize * cols as usize + c as usize;
    if vector {
        // SAFETY: with `vector`, the caller's contract: the four are inside and 4-aligned.
        return unsafe { load4(ptr, at(col)) };
    }
    let mut v = [T::ZERO; 4];
    for (j, x) in v.iter_mut().enumerate() {
        let c = col + j as u32;
        if row < rows && c < cols {
            // SAFETY: `(row, c)` is inside the `rows x cols` matrix (tested above), all of
            // which `ptr` holds (the caller's contract).
            *x = unsafe { load(ptr, at(c)) };
        }
    }
    v
}

/// Adds 1 to the counter at `ptr` and returns what it held before (`atomicAdd`, PTX
/// `atom.acq_rel.gpu.global.add.u32`): the ticket of a block arriving at a rendezvous
/// of the whole grid. Acquire-release at GPU scope, so whoever draws the last ticket sees
/// what the earlier drawers wrote before their [`fence_gpu`].
///
/// # Safety
/// `ptr` points to a `u32` of a global buffer that only atomics touch during the launch.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn take_ticket(ptr: *mut u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let old: u32;
        // SAFETY: an atomic add on the global u32 at `ptr`, which the caller's contract
        // makes valid, aligned and touched only by atomics during the launch.
        unsafe {
            core::arch::asm!(
                "atom.acq_rel.gpu.global.add.u32 {old}, [{ptr}], 1;",
                old = out(reg32) old,
                ptr = in(reg64) ptr as u64,
            )
        };
        old
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        super::host::check_global(ptr as usize, 4, "atomic add");
        // SAFETY: the caller's contract: an aligned u32 that only atomics touch.
        let counter = unsafe { core::sync::atomic::AtomicU32::from_ptr(ptr) };
        counter.fetch_add(1, core::sync::atomic::Ordering::AcqRel)
    }
}

/// `__threadfence()` (PTX `fence.acq_rel.gpu`): this thread's global writes before it are
/// seen by the whole GPU before its accesses after it.
#[inline(always)]
pub fn fence_gpu() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence has no memory-safety precondition.
    unsafe {
        core::arch::asm!("fence.acq_rel.gpu;")
    }
    #[cfg(not(target_arch = "nvptx64"))]
    core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
}

/// Elements `index..index + 4` as another block of this launch wrote them (volatile, not
/// served from this SM's L1): for 32-bit `T` on the GPU one access of four (PTX
/// `ld.volatile.global.v4.b32`).
///
/// # Safety
/// As [`load4`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load4_volatile<T: Pack4>(ptr: *const T, index: usize) -> [T; 4] {
    #[cfg(target_arch = "nvptx64")]
    if size_of::<T>() == 4 {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: the caller's: four aligned elements inside the buffer.
        unsafe {
            core::arch::asm!(
                "ld.volatile.global.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                p = in(reg64) ptr.add(index) as u64,
            );
            return core::mem::transmute_copy(&[a, b, c, d]);
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    check(ptr, index, 4, "read");
    // SAFETY: the caller's contract: the four elements are in the buffer (checked above on
    // the host), each aligned for `T`.
    core::array::from_fn(|j| unsafe { core::ptr::read_volatile(ptr.add(index + j)) })
}

/// Element `index` as another block of this launch wrote it: a volatile load (PTX
/// `ld.volatile.global`, not served from this SM's L1).
///
/// # Safety
/// As [`load`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_volatile<T: Copy>(ptr: *const T, index: usize) -> T {
    #[cfg(not(target_arch = "nvptx64"))]
    check(ptr, index, 1, "read");
    // SAFETY: the caller's contract: an element of the buffer (checked above on the host).
    unsafe { core::ptr::read_volatile(ptr.add(index)) }
}

/// The host's check that elements `index..index + n` of the buffer at `ptr` lie in one of the
/// launch's buffers, for an `access` that the fault names.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn check<T>(ptr: *const T, index: usize, n: usize, access: &str) {
    super::host::check_global(ptr.wrapping_add(index) as usize, n * size_of::<T>(), access);
}
