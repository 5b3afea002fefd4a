//! The Tensor Memory Accelerator (sm_90): `cp.async.bulk.tensor.3d` copies a box of a
//! 3D tensor (a 2D one is one plane deep) from global to shared memory as one asynchronous operation, described by a
//! tensor map the host made (`cuTensorMapEncodeTiled`: base, sizes, strides, box, swizzle),
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

/// The host's tensor map (CPU executor only): `dims[2]` planes (a batch of matrices,
/// `strides[1]` bytes apart) of a row-major tensor of `elem_bytes` elements, `dims[0..2] =
/// [columns, rows]`, rows `strides[0]` bytes apart, copied in boxes of `boxes = [columns,
/// rows]` (one plane deep); `swizzle` is 128 (bytes) or 0. A 2D map has one plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct EmulatedMap {
    pub base: u64,
    pub dims: [u64; 3],
    pub strides: [u64; 2],
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
        let [x, y, z] = self.dims;
        let words = [self.base, x, y, z, self.strides[0], self.strides[1]];
        for (i, w) in words.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&w.to_ne_bytes());
        }
        let halves = [self.boxes[0], self.boxes[1], self.elem_bytes, self.swizzle];
        for (i, h) in halves.iter().enumerate() {
            out[48 + 4 * i..52 + 4 * i].copy_from_slice(&h.to_ne_bytes());
        }
        out
    }
}

/// Starts copying the box at column `x`, row `y` (elements) of plane `z` of the 3D tensor
/// `map` describes (a batch of matrices) into shared memory at `dst`, counting its bytes
/// towards `bar`'s transaction count.
///
/// # Safety
/// `map` points to a 3D tensor map in global memory, 64-byte aligned; `dst` to the box's
/// bytes in shared memory, 1024-byte aligned for the 128-byte swizzle (128 otherwise); `bar`
/// is an initialised mbarrier whose phase expects these bytes; nobody reads `dst` before
/// waiting for that phase.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_3d(dst: *mut u8, map: *const u8, (x, y, z): (u32, u32, u32), bar: *mut u64) {
    let (to, at) = (
        super::shared::shared_address(dst),
        super::shared::shared_address(bar),
    );
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract makes the tensor map at `map`, the box's shared bytes
    // at `to` and the initialised mbarrier at `at` valid; only that box and barrier are
    // written.
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}, {z}}}], [{b}];",
            d = in(reg32) to,
            m = in(reg64) map as u64,
            x = in(reg32) x,
            y = in(reg32) y,
            z = in(reg32) z,
            b = in(reg32) at,
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    emulate(to, map, (x, y, z), at);
}

/// [`load_3d`] into every block of the cluster whose rank is a bit of `ranks`: the box lands
/// at `dst`'s offset in each one's shared memory, and its bytes count towards the mbarrier
/// at `bar`'s offset there (`.multicast::cluster`). One read of global memory for all.
///
/// # Safety
/// As [`load_3d`], in each block of `ranks`: its barrier at that offset initialised and
/// published by a cluster barrier, its phase expecting these bytes, and nobody there
/// reading the box before waiting for it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_3d_multicast(
    dst: *mut u8,
    map: *const u8,
    (x, y, z): (u32, u32, u32),
    bar: *mut u64,
    ranks: u16,
) {
    let (to, at) = (
        super::shared::shared_address(dst),
        super::shared::shared_address(bar),
    );
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: as `load_3d`, in every block of `ranks` (the caller's contract).
    unsafe {
        core::arch::asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{x}, {y}, {z}}}], [{b}], {k};",
            d = in(reg32) to,
            m = in(reg64) map as u64,
            x = in(reg32) x,
            y = in(reg32) y,
            z = in(reg32) z,
            b = in(reg32) at,
            k = in(reg16) ranks,
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let data = gather(to, map, (x, y, z));
        for rank in (0..16).filter(|r| ranks >> r & 1 == 1) {
            super::host::cluster_async(rank).copy(at, to, data.clone());
        }
    }
}

/// Whether TMA reads the A and B of `p` at `a` and `b` (addresses) through 16-bit tensor
/// maps: bases 16-byte aligned, every row and batch stride a whole number of 16-byte units
/// below 2^40 bytes (the driver's rules), and the products of a batch (unless shared) at
/// least a whole operand apart, rows times leading dimension: planes closer than that read
/// wrong elements on an H200 (product 1 of two 1 x 8 rows 16 bytes apart, rows 32 bytes
/// apart), though the driver encodes the map. The host makes maps exactly where this holds,
/// and the kernels take their other path where it does not.
#[inline(always)]
pub fn reads(p: &crate::problem::Problem, (a, b): (u64, u64), elem_bytes: u64) -> bool {
    let s = p.strides();
    let (a_rows, b_rows) = match (s.a_t, s.b_t) {
        (false, false) => (p.m, p.k),
        (false, true) => (p.m, p.n),
        (true, false) => (p.k, p.k),
        (true, true) => (p.k, p.n),
    };
    let batch = p.batch;
    reads_operand(a, (a_rows, p.lda), p.batch_stride_a, batch, elem_bytes)
        && reads_operand(b, (b_rows, p.ldb), p.batch_stride_b, batch, elem_bytes)
}

/// [`reads`] for one operand at address `base`: `rows` rows `ld` elements apart as stored,
/// products `batch_stride` elements apart in a batch of `batch`.
#[inline(always)]
pub fn reads_operand(
    base: u64,
    (rows, ld): (u32, u32),
    batch_stride: u64,
    batch: u32,
    elem_bytes: u64,
) -> bool {
    let stride = |elems: u64| {
        let bytes = elems * elem_bytes;
        bytes.is_multiple_of(16) && bytes < 1 << 40
    };
    let apart =
        stride(batch_stride) && (batch_stride == 0 || batch_stride >= rows as u64 * ld as u64);
    base.is_multiple_of(16) && stride(ld as u64) && (batch <= 1 || apart)
}

#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulate(to: u32, map: *const u8, (x, y, z): (u32, u32, u32), bar: u32) {
    let data = gather(to, map, (x, y, z));
    super::host::block_async().copy(bar, to, data);
}

/// The box's bytes as they land at shared address `to` (swizzled where the map says).
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn gather(to: u32, map: *const u8, (x, y, z): (u32, u32, u32)) -> Vec<u8> {
    use super::host::check_global;
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
        if row >= map.dims[1] || z as u64 >= map.dims[2] {
            continue; // zeros outside the tensor
        }
        let inside = (map.dims[0].saturating_sub(x as u64) as usize).min(box_x);
        if inside == 0 {
            continue;
        }
        let plane = z as u64 * map.strides[1];
        let src = (map.base + plane + row * map.strides[0] + x as u64 * e as u64) as usize;
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
    data
}
