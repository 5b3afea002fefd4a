//! Shared memory: typed tiles carved, one after another, from the launch-sized region
//! (CUDA's `extern __shared__`, PTX `.extern .shared`), whose byte count the host chooses
//! at launch. A kernel's shared bytes are therefore a launch rule, stated by the host next
//! to the kernel's declaration. On the host every carve and every access is checked.
use super::vector::{Pack2, Pack4, read2, read4, write4};
#[cfg(target_arch = "nvptx64")]
use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;
use core::marker::PhantomData;

#[cfg(target_arch = "nvptx64")]
#[repr(align(32))]
struct Align32;

/// Hands out consecutive tiles of the launch-sized shared region.
pub struct SharedArena<T> {
    next: *mut T,
    /// Elements of T left in the region (host only; unknown on the GPU).
    #[cfg(not(target_arch = "nvptx64"))]
    left: usize,
}

impl<T: Copy> SharedArena<T> {
    /// The start of the launch-sized shared region.
    ///
    /// # Safety
    /// The launch must provide at least as many shared bytes as the tiles later carved
    /// from this arena cover (checked on the host).
    #[inline(always)]
    pub unsafe fn launch_sized() -> Self {
        // Request 32-byte alignment first: packed groups (f64 x 4) then always fit.
        #[cfg(target_arch = "nvptx64")]
        return Self {
            next: {
                let _ = gpu_launch_sized_workgroup_mem::<Align32>();
                gpu_launch_sized_workgroup_mem::<T>()
            },
        };
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let me = super::host::current();
            assert!(
                me.shared.align_offset(align_of::<T>()) == 0,
                "shared region misaligned"
            );
            Self {
                next: me.shared.cast(),
                left: me.shared_len / size_of::<T>(),
            }
        }
    }

    /// The next `rows x cols` row-major tile.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn tile(&mut self, rows: u32, cols: u32) -> SharedTile<T> {
        let len = rows as usize * cols as usize;
        #[cfg(not(target_arch = "nvptx64"))]
        {
            assert!(
                len <= self.left,
                "shared memory out of bounds: a {rows}x{cols} tile needs {len} elements, the launch-sized region has {} left",
                self.left
            );
            self.left -= len;
        }
        let tile = SharedTile {
            base: self.next,
            rows,
            cols,
            _marker: PhantomData,
        };
        // Pointer arithmetic only; the launch-size contract of `launch_sized` makes it valid.
        self.next = self.next.wrapping_add(len);
        tile
    }

    /// The next `len` elements as a raw region whose shared address ([`shared_address`]) is
    /// a multiple of `align` bytes (a power of two, at least `size_of::<T>()`): for operands
    /// whose layout depends on address bits, such as swizzled `wgmma` tiles. Up to `align -
    /// size_of::<T>()` bytes are skipped first, which the launch must also provide.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn aligned(&mut self, align: u32, len: u32) -> *mut T {
        let skip = (align - shared_address(self.next) % align) % align;
        let skip = skip as usize / size_of::<T>();
        #[cfg(not(target_arch = "nvptx64"))]
        {
            assert!(
                skip + len as usize <= self.left,
                "shared memory out of bounds: {len} elements aligned to {align} bytes need {} elements, the launch-sized region has {} left",
                skip + len as usize,
                self.left
            );
            self.left -= skip + len as usize;
        }
        let region = self.next.wrapping_add(skip);
        self.next = region.wrapping_add(len as usize);
        region
    }
}

/// The shared-state-space address of a pointer into the block's shared memory (PTX
/// `cvta.to.shared`): what `wgmma` descriptors and `mbarrier`s take. On the host: the byte
/// offset in the block's shared region, which the executor's emulations read the same way.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn shared_address<T>(ptr: *const T) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let address: u32;
        // SAFETY: an address conversion; no memory is touched.
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 %sa_s; cvta.to.shared.u64 %sa_s, {p}; cvt.u32.u64 {a}, %sa_s; }}",
                p = in(reg64) ptr as u64,
                a = out(reg32) address,
            );
        }
        address
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let me = super::host::current();
        let offset = (ptr as usize).wrapping_sub(me.shared as usize);
        assert!(
            offset <= me.shared_len,
            "shared_address of a pointer outside the block's shared region"
        );
        offset as u32
    }
}

/// A row-major tile in shared memory, visible to every thread of the block.
#[derive(Clone, Copy)]
pub struct SharedTile<T> {
    base: *mut T,
    #[cfg_attr(target_arch = "nvptx64", allow(dead_code))]
    rows: u32,
    cols: u32,
    _marker: PhantomData<T>,
}

impl<T: Copy> SharedTile<T> {
    /// Rows `row0..row0 + rows` as a tile of their own (e.g. one stage of several).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn window(&self, row0: u32, rows: u32) -> SharedTile<T> {
        #[cfg(not(target_arch = "nvptx64"))]
        assert!(
            row0 + rows <= self.rows,
            "shared memory out of bounds: rows {row0}..{} of a {}x{} tile",
            row0 + rows,
            self.rows,
            self.cols
        );
        SharedTile {
            // Pointer arithmetic only: the rows lie inside this tile.
            base: self.base.wrapping_add(row0 as usize * self.cols as usize),
            rows,
            cols: self.cols,
            _marker: PhantomData,
        }
    }

    /// Bytes from one row to the next.
    #[inline(always)]
    pub fn row_bytes(&self) -> u32 {
        self.cols * size_of::<T>() as u32
    }

    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    fn offset(&self, row: u32, col: u32) -> usize {
        #[cfg(not(target_arch = "nvptx64"))]
        assert!(
            row < self.rows && col < self.cols,
            "shared memory out of bounds: ({row}, {col}) in a {}x{} tile",
            self.rows,
            self.cols
        );
        (row * self.cols + col) as usize
    }

    /// # Safety
    /// `(row, col)` lies inside the tile (checked on the host), and no other thread of the
    /// block writes this element between the last barrier and the next.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn get(&self, row: u32, col: u32) -> T {
        // SAFETY: the caller's contract: `(row, col)` is in the tile (`offset` asserts it
        // on the host), so in the launch-sized region, and unwritten until the next
        // barrier.
        unsafe { *self.base.add(self.offset(row, col)) }
    }

    /// # Safety
    /// `(row, col)` lies inside the tile (checked on the host), and no other thread of the
    /// block reads or writes this element between the last barrier and the next.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn set(&self, row: u32, col: u32, value: T) {
        // SAFETY: the caller's contract: `(row, col)` is in the tile (`offset` asserts it
        // on the host), and no other thread reads or writes it until the next barrier.
        unsafe { *self.base.add(self.offset(row, col)) = value }
    }
}

impl<T: Copy> SharedTile<T> {
    /// Elements `(row, col)` and `(row, col + 1)` of a tile of a 16-bit type as one 32-bit
    /// read, the first in the low half (a tensor-core fragment register).
    ///
    /// # Safety
    /// As [`SharedTile::get`] for the two elements; `col` and the tile's row length are even
    /// (so the read is 4-byte aligned).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn get_pair_bits(&self, row: u32, col: u32) -> u32 {
        // A constant: no code for 16-bit types (other types have no tensor-core kernel).
        if size_of::<T>() != 2 {
            super::thread::trap();
        }
        let at = self.offset(row, col + 1) - 1;
        // SAFETY: the caller's contract: `(row, col..col + 2)` lie in the tile (`offset`
        // asserts it on the host), one 4-byte-aligned `u32` of a 2-byte `T` (checked
        // above).
        unsafe { super::vector::read_packed(self.base.add(at).cast::<u32>()) }
    }
}

/// `$get` (and `$set`): elements `(row, col..col + $n)` of a tile of a `$pack` type as one
/// access, with `$read` (and `$write`).
macro_rules! packed_access {
    ($($pack:ident, $n:literal: $get:ident $read:ident $(, $set:ident $write:ident)?;)*) => {$(
        impl<T: $pack> SharedTile<T> {
            #[doc = concat!("Elements `(row, col..col + ", $n, ")` as one access.")]
            ///
            /// # Safety
            #[doc = concat!(
                "As [`SharedTile::get`] for the ", $n, " elements; `col` and the tile's row ",
                "length are multiples of ", $n, ", and the arena is 16-byte aligned ",
                "([`SharedArena::launch_sized`])."
            )]
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn $get(&self, row: u32, col: u32) -> [T; $n] {
                let at = self.offset(row, col + ($n - 1)) - ($n - 1);
                // SAFETY: the caller's contract: the elements lie in the tile (`offset`
                // asserts it on the host), group-aligned, and unwritten until the next
                // barrier.
                unsafe { $read(self.base.add(at)) }
            }
            $(
                #[doc = concat!("Writes `(row, col..col + ", $n, ")` as one access.")]
                ///
                /// # Safety
                #[doc = concat!(
                    "As [`SharedTile::set`] for the ", $n, " elements, aligned as for ",
                    "[`SharedTile::", stringify!($get), "`]."
                )]
                #[inline(always)]
                #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
                pub unsafe fn $set(&self, row: u32, col: u32, value: [T; $n]) {
                    let at = self.offset(row, col + ($n - 1)) - ($n - 1);
                    // SAFETY: the caller's contract: the elements lie in the tile (`offset`
                    // asserts it on the host), group-aligned, and no other thread accesses
                    // them.
                    unsafe { $write(self.base.add(at), value) }
                }
            )?
        }
    )*};
}

packed_access! {
    Pack4, 4: get4 read4, set4 write4;
    Pack2, 2: get2 read2;
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl<T: Copy> SharedTile<T> {
    /// The address of `(row, col..)`, 16 bytes of which lie inside the tile (checked on the
    /// host): a lane's row for [`super::ldmatrix`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn row16(&self, row: u32, col: u32) -> *const T {
        let last = col + 16 / size_of::<T>() as u32 - 1;
        let at = self.offset(row, last) - (last - col) as usize;
        self.base.wrapping_add(at)
    }

    /// Starts an asynchronous copy of 16 bytes from `src` into `(row, col..)`, or of zeros
    /// where `inside` is false (see [`super::async_copy::copy16_or_zero`]).
    ///
    /// # Safety
    /// As [`super::async_copy::copy16_or_zero`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy16_or_zero(&self, row: u32, col: u32, src: *const T, inside: bool) {
        let dst = self.row16(row, col).cast_mut();
        // SAFETY: `copy16_or_zero`'s contract, the caller's, for the 16 bytes at `(row,
        // col..)` (`row16` asserts them in the tile on the host); with `inside` false `src`
        // is unread.
        unsafe { super::async_copy::copy16_or_zero(dst, src, if inside { 16 } else { 0 }) }
    }

    /// Starts an asynchronous copy of one element from `src` into `(row, col)`, or of zero
    /// where `inside` is false (see [`super::async_copy::copy_element_or_zero`]).
    ///
    /// # Safety
    /// As [`super::async_copy::copy_element_or_zero`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy_element_or_zero(&self, row: u32, col: u32, src: *const T, inside: bool) {
        // SAFETY: `(row, col)` is in the tile (the caller's contract; `offset` asserts it
        // on the host), so the offset stays in the shared region.
        let dst = unsafe { self.base.add(self.offset(row, col)) };
        // SAFETY: the caller's contract is `copy_element_or_zero`'s for that element.
        unsafe { super::async_copy::copy_element_or_zero(dst, src, inside) }
    }

    /// Starts the copies of the whole `rows x cols` tile, each element `(r, c)` from where
    /// `at(r, c)` says (if inside; zero otherwise): 16-byte chunks where `chunks`, else one
    /// element at a time, thread `tid` of `stride` taking every `stride`-th. The general copy,
    /// for stages that [`SharedTile::copy_rows`] cannot take (an operand's edge).
    ///
    /// # Safety
    /// As [`SharedTile::copy16_or_zero`] for each chunk (or [`SharedTile::copy_element_or_zero`]
    /// for each element); `cols` a multiple of the chunk's elements where `chunks`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy_each_or_zero(
        &self,
        (rows, cols): (u32, u32),
        chunks: bool,
        (tid, stride): (u32, u32),
        at: impl Fn(u32, u32) -> (bool, *const T),
    ) {
        let per = if chunks {
            (16 / size_of::<T>()) as u32
        } else {
            1
        };
        let mut e = tid;
        while e < rows * cols / per {
            let (r, c) = (e / (cols / per), e % (cols / per) * per);
            let (inside, src) = at(r, c);
            match chunks {
                // SAFETY: (r, c) lies inside the `rows x cols` tile at a chunk boundary (`cols`
                // a multiple of the chunk: this fn's contract); `at` gives a source meeting
                // `copy16_or_zero`'s contract (the caller's).
                true => unsafe { self.copy16_or_zero(r, c, src, inside) },
                // SAFETY: as above, element by element: `copy_element_or_zero`'s contract is
                // the caller's.
                false => unsafe { self.copy_element_or_zero(r, c, src, inside) },
            }
            e += stride;
        }
    }

    /// Starts the asynchronous copies of a `rows x width` tile from the rows of a row-major
    /// matrix at `src`, `ld` elements apart (tile element `(r, c)` from `src[r ld + c]`
    /// where `c < cols`, zeros past `cols`): runs of `per` elements (a 16-byte chunk, or one
    /// element), thread `tid` of `threads` taking the same run of every `threads / (width /
    /// per)`-th row, so one pointer steps down them (the per-copy index arithmetic and
    /// checks of a general copy were a third of `few_columns`' issue slots: Nsight Compute,
    /// f32 4096 x 63 x 4096, H200). With fewer runs than threads the threads past the
    /// tile's rows idle.
    ///
    /// # Safety
    /// As [`SharedTile::copy16_or_zero`] for each run (or [`SharedTile::copy_element_or_zero`]
    /// where `per` is 1); `per` is 1 or the 16-byte chunk, `width / per` divides `threads`;
    /// where `per` is a chunk, `cols` is a multiple of it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy_rows(
        &self,
        src: *const T,
        (rows, width): (u32, u32),
        (ld, cols): (usize, u32),
        per: u32,
        (tid, threads): (u32, u32),
    ) {
        let per_row = width / per;
        let step = threads / per_row;
        let (r0, c) = (tid / per_row, tid % per_row * per);
        let inside = c < cols;
        let mut from = match inside {
            true => src.wrapping_add(r0 as usize * ld + c as usize),
            false => src,
        };
        let runs = rows * per_row;
        // The destinations as shared addresses stepped by a constant (a generic pointer
        // converted in each `cp.async` cost registers and instructions: `mma_swizzled`'s
        // notes); the host still checks each against the tile.
        let to0 = shared_address(self.base) + (r0 * self.cols + c) * size_of::<T>() as u32;
        let pitch = step * self.row_bytes();
        for i in 0..runs.div_ceil(threads) {
            let r = r0 + i * step;
            if runs.is_multiple_of(threads) || r < rows {
                let to = match cfg!(target_arch = "nvptx64") {
                    true => to0 + i * pitch,
                    false => match per {
                        1 => shared_address(self.base.wrapping_add(self.offset(r, c))),
                        _ => shared_address(self.row16(r, c)),
                    },
                };
                // SAFETY: the caller's contract for each run: `to` is run `(r, c..)` of
                // this tile (checked on the host), `from` its source in row `r`, read only
                // where `inside`.
                unsafe {
                    match per {
                        1 => super::async_copy::copy_element_or_zero_at(to, from, inside),
                        _ => super::async_copy::copy16_or_zero_at(to, from, 16 * inside as u32),
                    }
                }
            }
            if inside {
                from = from.wrapping_add(step as usize * ld);
            }
        }
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl<T: Pack4> SharedTile<T> {
    /// Starts an asynchronous 16-byte copy from global `src` into `(row, col..)`: four
    /// elements of a 4-byte type, two of an 8-byte one.
    ///
    /// # Safety
    /// As [`super::async_copy::copy16`]; the 16 bytes lie inside the tile (checked on the host).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn copy16_from(&self, row: u32, col: u32, src: *const T) {
        let last = col + 16 / size_of::<T>() as u32 - 1;
        let at = self.offset(row, last) - (last - col) as usize;
        // SAFETY: `copy16`'s contract, the caller's; the 16 bytes at `(row, col..)` lie in
        // the tile (`offset` asserts it on the host), so `add` stays in the shared region.
        unsafe { super::async_copy::copy16(self.base.add(at), src) }
    }
}
