//! The Tensor Memory Accelerator (sm_90): `cp.async.bulk.tensor.2d` copies a box of a 2D
//! tensor from global to shared memory as one asynchronous operation, described by a tensor
//! map the host made (`cuTensorMapEncodeTiled`: base, sizes, row stride, box, swizzle),
//! which the kernel reads from global memory. Elements of the box outside the tensor are
//! filled with zeros, so edge tiles need no checks. The copy's bytes count towards an
//! [`mbarrier`](super::mbarrier)'s transaction count; waiting on that barrier's phase makes
//! them visible.
//!
//! The box lands row after row (its inner dimension contiguous); with the 128-byte swizzle
//! (rows of exactly 128 bytes) the 16-byte chunk `c` of the row at shared address `r` goes
//! to chunk `c ^ ((r >> 7) % 8)`, the layout `wgmma`'s 128-byte-swizzle descriptors read.
//!
//! On the host (CPU executor) the driver's tensor-map format is not public, so the CPU
//! executor writes an [`EmulatedMap`] of its own where the GPU path writes the driver's; the
//! copy gathers the box (zeros outside the tensor, every global read checked), swizzles it,
//! and hands it to the block's barrier state, which delivers it when the phase completes.

/// The host's tensor map (CPU executor only): a row-major 2D tensor of `elem_bytes`
/// elements, `dims = [columns, rows]`, `row_stride` bytes apart, copied in boxes of
/// `boxes = [columns, rows]`; `swizzle` is 128 (bytes) or 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct EmulatedMap {
    pub base: u64,
    pub dims: [u64; 2],
    pub row_stride: u64,
    pub boxes: [u32; 2],
    pub elem_bytes: u32,
    pub swizzle: u32,
}

/// Bytes of a tensor map, the driver's and the emulated one alike.
pub const MAP_BYTES: usize = 128;

#[cfg(not(target_arch = "nvptx64"))]
impl EmulatedMap {
    /// The map as the global memory the kernel reads holds it (native byte order).
    pub fn to_bytes(&self) -> [u8; MAP_BYTES] {
        let mut out = [0u8; MAP_BYTES];
        let words = [self.base, self.dims[0], self.dims[1], self.row_stride];
        for (i, w) in words.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&w.to_ne_bytes());
        }
        let halves = [self.boxes[0], self.boxes[1], self.elem_bytes, self.swizzle];
        for (i, h) in halves.iter().enumerate() {
            out[32 + 4 * i..36 + 4 * i].copy_from_slice(&h.to_ne_bytes());
        }
        out
    }
}

/// Starts copying the box at `(x, y)` (column, row: elements) of the tensor `map` describes
/// into shared memory at `dst`, counting its bytes towards `bar`'s transaction count.
///
/// # Safety
/// `map` points to a tensor map in global memory, 64-byte aligned; `dst` to the box's bytes
/// in shared memory, 1024-byte aligned for the 128-byte swizzle (128 otherwise); `bar` is an
/// initialised mbarrier whose phase expects these bytes; nobody reads `dst` before waiting
/// for that phase.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_2d(dst: *mut u8, map: *const u8, (x, y): (u32, u32), bar: *mut u64) {
    let (to, at) = (
        super::shared::shared_address(dst),
        super::shared::shared_address(bar),
    );
    #[cfg(target_arch = "nvptx64")]
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}}}], [{b}];",
            d = in(reg32) to,
            m = in(reg64) map as u64,
            x = in(reg32) x,
            y = in(reg32) y,
            b = in(reg32) at,
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    emulate(to, map, (x, y), at);
}

#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulate(to: u32, map: *const u8, (x, y): (u32, u32), bar: u32) {
    use super::host::{block_async, check_global};
    check_global(map as usize, MAP_BYTES, "read (tensor map)");
    // SAFETY: 128 readable bytes (checked); the executor wrote an `EmulatedMap` there.
    let map = unsafe { map.cast::<EmulatedMap>().read_unaligned() };
    let e = map.elem_bytes as usize;
    let [box_x, box_y] = map.boxes.map(|b| b as usize);
    let row_bytes = box_x * e;
    assert!(
        map.swizzle == 0 || (map.swizzle == 128 && row_bytes == 128 && to.is_multiple_of(1024)),
        "TMA: a 128-byte swizzle needs 128-byte box rows and a 1024-byte aligned destination"
    );
    let mut data = vec![0u8; row_bytes * box_y];
    for r in 0..box_y {
        let row = y as u64 + r as u64;
        if row >= map.dims[1] {
            continue; // zeros outside the tensor
        }
        let inside = (map.dims[0].saturating_sub(x as u64) as usize).min(box_x);
        if inside == 0 {
            continue;
        }
        let src = (map.base + row * map.row_stride + x as u64 * e as u64) as usize;
        check_global(src, inside * e, "read (TMA)");
        for b in 0..inside * e {
            let plain = r * row_bytes + b;
            let at = if map.swizzle == 128 {
                plain ^ (((plain >> 7) & 7) << 4)
            } else {
                plain
            };
            // SAFETY: inside a buffer of the launch (checked above).
            data[at] = unsafe { *(src as *const u8).add(b) };
        }
    }
    block_async().copy(bar, to, data);
}
