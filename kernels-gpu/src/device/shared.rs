//! Shared memory: typed tiles carved, one after another, from the launch-sized region
//! (CUDA's `extern __shared__`, PTX `.extern .shared`), whose byte count the host chooses
//! at launch. A kernel's shared bytes are therefore a launch rule, stated by the host next
//! to the kernel's declaration.
use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;
use core::marker::PhantomData;

/// Hands out consecutive tiles of the launch-sized shared region.
pub struct SharedArena<T> {
    next: *mut T,
}

impl<T: Copy> SharedArena<T> {
    /// The start of the launch-sized shared region.
    ///
    /// # Safety
    /// The launch must provide at least as many shared bytes as the tiles later carved
    /// from this arena cover.
    #[inline(always)]
    pub unsafe fn launch_sized() -> Self {
        Self {
            next: gpu_launch_sized_workgroup_mem::<T>(),
        }
    }

    /// The next `rows x cols` row-major tile.
    #[inline(always)]
    pub fn tile(&mut self, rows: u32, cols: u32) -> SharedTile<T> {
        let tile = SharedTile {
            base: self.next,
            cols,
            _marker: PhantomData,
        };
        // Pointer arithmetic only; the launch-size contract of `launch_sized` makes it valid.
        self.next = self.next.wrapping_add(rows as usize * cols as usize);
        tile
    }
}

/// A row-major tile in shared memory, visible to every thread of the block.
#[derive(Clone, Copy)]
pub struct SharedTile<T> {
    base: *mut T,
    cols: u32,
    _marker: PhantomData<T>,
}

impl<T: Copy> SharedTile<T> {
    /// # Safety
    /// `(row, col)` lies inside the tile, and no other thread of the block writes this
    /// element between the last barrier and the next.
    #[inline(always)]
    pub unsafe fn get(&self, row: u32, col: u32) -> T {
        unsafe { *self.base.add((row * self.cols + col) as usize) }
    }

    /// # Safety
    /// `(row, col)` lies inside the tile, and no other thread of the block reads or writes
    /// this element between the last barrier and the next.
    #[inline(always)]
    pub unsafe fn set(&self, row: u32, col: u32, value: T) {
        unsafe { *self.base.add((row * self.cols + col) as usize) = value }
    }
}
