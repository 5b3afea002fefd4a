//! Thread/block coordinates and the block barrier.
//!
//! Safe functions: reading a special register or waiting at a barrier has no memory-safety
//! precondition. The barrier's correctness rule (every thread of the block reaches the
//! same barrier, so call it only in block-uniform control flow) is the caller's to keep;
//! the CPU executor reports a launch that breaks it.
#[cfg(target_arch = "nvptx64")]
use core::arch::nvptx;

macro_rules! special_registers {
    ($($(#[$doc:meta])* $name:ident => $intrinsic:ident, $field:ident[$axis:literal];)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: reads a PTX special register; no memory is touched.
            return unsafe { nvptx::$intrinsic() };
            #[cfg(not(target_arch = "nvptx64"))]
            return super::host::current().$field[$axis];
        }
    )*};
}

special_registers! {
    /// `threadIdx.x`
    thread_idx_x => _thread_idx_x, thread_idx[0];
    /// `threadIdx.y`
    thread_idx_y => _thread_idx_y, thread_idx[1];
    /// `blockIdx.x`
    block_idx_x => _block_idx_x, block_idx[0];
    /// `blockIdx.y`
    block_idx_y => _block_idx_y, block_idx[1];
    /// `blockIdx.z`: the product of a batch (`problem.rs`).
    block_idx_z => _block_idx_z, block_idx[2];
    /// `blockDim.x`
    block_dim_x => _block_dim_x, block_dim[0];
    /// `blockDim.y`
    block_dim_y => _block_dim_y, block_dim[1];
    /// `gridDim.x`
    grid_dim_x => _grid_dim_x, grid_dim[0];
    /// `gridDim.y`
    grid_dim_y => _grid_dim_y, grid_dim[1];
}

/// `__syncthreads()`: PTX `bar.sync 0`. Reach it from every thread of the block. On the
/// host the call site identifies the barrier, so threads waiting at two different
/// `sync_threads()` calls are reported as a divergent barrier.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a barrier has no memory-safety precondition; uniformity is documented above.
    unsafe {
        nvptx::_syncthreads()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::barrier(core::panic::Location::caller());
}

/// `__syncwarp()`: PTX `bar.warp.sync 0xffffffff`. The warp's 32 lanes meet, and the
/// shared-memory writes each made before it are seen by all of them after it (the lanes'
/// `cp.async` copies too, once each lane's `wait_group` covered its own). Reach it from every
/// lane of the warp; on the host, lanes waiting at two different calls are a divergence.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_warp() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a barrier has no memory-safety precondition; uniformity is documented above.
    unsafe {
        core::arch::asm!("bar.warp.sync 0xffffffff;")
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::warp_meet();
}

/// Stops the kernel; the launch reports an error to the host.
#[inline(always)]
pub fn trap() -> ! {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `trap` ends the thread; nothing follows it.
    unsafe {
        nvptx::trap()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("trap")
}
