//! Global-memory access by element index. On the GPU a plain load or store (the kernel's
//! own bounds checks keep it in range); on the host the CPU executor also checks that the
//! element lies inside one of the launch's buffers, so an indexing bug is reported
//! instead of reading or writing whatever lies there.

/// Element `index` of the global buffer at `ptr`.
///
/// # Safety
/// `ptr + index` is inside the buffer `ptr` points into.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load<T: Copy>(ptr: *const T, index: usize) -> T {
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::check_global(ptr.wrapping_add(index) as usize, size_of::<T>(), "read");
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
    super::host::check_global(ptr.wrapping_add(index) as usize, size_of::<T>(), "write");
    unsafe { *ptr.add(index) = value }
}
