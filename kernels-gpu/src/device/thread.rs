//! Thread/block coordinates and the block barrier.
//!
//! Safe wrappers: reading a special register or waiting at a barrier has no memory-safety
//! precondition. The barrier's correctness rule (every thread of the block reaches it, so
//! call it only in block-uniform control flow) is the caller's to keep.
use core::arch::nvptx;

macro_rules! special_registers {
    ($($(#[$doc:meta])* $name:ident => $intrinsic:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            // SAFETY: reads a PTX special register; no memory is touched.
            unsafe { nvptx::$intrinsic() }
        }
    )*};
}

special_registers! {
    /// `threadIdx.x`
    thread_idx_x => _thread_idx_x;
    /// `threadIdx.y`
    thread_idx_y => _thread_idx_y;
    /// `blockIdx.x`
    block_idx_x => _block_idx_x;
    /// `blockIdx.y`
    block_idx_y => _block_idx_y;
    /// `blockDim.x`
    block_dim_x => _block_dim_x;
    /// `blockDim.y`
    block_dim_y => _block_dim_y;
}

/// `__syncthreads()`: PTX `bar.sync 0`. Reach it from every thread of the block.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: a barrier has no memory-safety precondition; uniformity is documented above.
    unsafe { nvptx::_syncthreads() }
}

/// Stops the kernel; the launch reports an error to the host.
#[inline(always)]
pub fn trap() -> ! {
    // SAFETY: `trap` ends the thread; nothing follows it.
    unsafe { nvptx::trap() }
}
