//! `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (compute capability 7.5 and newer; used from
//! the sm_80 module): a warp loads four 8 x 8 matrices of 16-bit elements from shared memory
//! straight into the register layout of `mma` fragments. Lane `8 i + r` gives the address
//! of row `r` of matrix `i` (16 bytes, 16-byte aligned); lane `l` receives, in register `i`,
//! row `l / 4`, elements `2 (l % 4)` and `2 (l % 4) + 1` of matrix `i` (the first in the low
//! half). With `.trans` it receives the transpose's: elements `(2 (l % 4), l / 4)` and
//! `(2 (l % 4) + 1, l / 4)`, which turns rows of a row-major B into the column pairs `mma`
//! wants.
//!
//! On the host (CPU executor) it is a warp-wide exchange of the lanes' row addresses, after
//! which each lane reads its elements from shared memory, every row checked to lie inside
//! the block's shared region.

macro_rules! ldmatrix_x4 {
    ($(#[$doc:meta])* $name:ident, $shape:literal, $trans:literal) => {
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name<T>(row: *const T) -> [u32; 4] {
            #[cfg(target_arch = "nvptx64")]
            {
                let mut r = [0u32; 4];
                // SAFETY: the caller's contract; a warp-wide read of shared memory.
                unsafe {
                    core::arch::asm!(
                        concat!("{{ .reg .u64 %lm_s; cvta.to.shared.u64 %lm_s, {p}; ldmatrix.sync.aligned.m8n8.x4", $shape, ".shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [%lm_s]; }}"),
                        p = in(reg64) row as u64,
                        r0 = out(reg32) r[0],
                        r1 = out(reg32) r[1],
                        r2 = out(reg32) r[2],
                        r3 = out(reg32) r[3],
                    );
                }
                r
            }
            #[cfg(not(target_arch = "nvptx64"))]
            emulate(row.cast(), $trans)
        }
    };
}

ldmatrix_x4!(
    /// Loads four 8 x 8 matrices; `row` is this lane's row address (see the module docs).
    ///
    /// # Safety
    /// `row` points to 16 readable, 16-byte-aligned bytes of the block's shared memory,
    /// written before the last barrier; every lane of the warp calls it (warp-uniform control
    /// flow).
    x4,
    "",
    false
);
ldmatrix_x4!(
    /// [`x4`] with `.trans`: each matrix transposed on the way.
    ///
    /// # Safety
    /// As [`x4`].
    x4_trans,
    ".trans",
    true
);

macro_rules! ldmatrix_x4_at {
    ($(#[$doc:meta])* $name:ident, $shape:literal, $trans:literal) => {
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(row: u32) -> [u32; 4] {
            #[cfg(target_arch = "nvptx64")]
            {
                let mut r = [0u32; 4];
                // SAFETY: the caller's contract; a warp-wide read of shared memory.
                unsafe {
                    core::arch::asm!(
                        concat!("ldmatrix.sync.aligned.m8n8.x4", $shape, ".shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];"),
                        a = in(reg32) row,
                        r0 = out(reg32) r[0],
                        r1 = out(reg32) r[1],
                        r2 = out(reg32) r[2],
                        r3 = out(reg32) r[3],
                    );
                }
                r
            }
            #[cfg(not(target_arch = "nvptx64"))]
            emulate(super::host::shared_byte(row, 16), $trans)
        }
    };
}

ldmatrix_x4_at!(
    /// [`x4`] from a shared-state-space address ([`super::shared::shared_address`]): kernels
    /// that compute their rows' addresses once and step them by constants, with no
    /// generic-to-shared conversion per load.
    ///
    /// # Safety
    /// As [`x4`], for the 16 bytes at shared address `row`.
    x4_at,
    "",
    false
);
ldmatrix_x4_at!(
    /// [`x4_trans`] from a shared-state-space address (see [`x4_at`]).
    ///
    /// # Safety
    /// As [`x4`], for the 16 bytes at shared address `row`.
    x4_trans_at,
    ".trans",
    true
);

/// The host's `ldmatrix` (see the module documentation).
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulate(row: *const u8, trans: bool) -> [u32; 4] {
    let addr = row as usize as u64;
    let all = super::host::warp_exchange([
        addr as u32,
        (addr >> 32) as u32,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ]);
    let me = super::host::current();
    let (start, len) = (me.shared as usize, me.shared_len);
    let row_of = |lane: usize| {
        let a = all[lane][0] as usize | (all[lane][1] as usize) << 32;
        assert!(
            a >= start && a + 16 <= start + len && a.is_multiple_of(16),
            "ldmatrix: lane {lane}'s row at {a:#x} is not 16 aligned bytes inside the block's shared memory ({start:#x}, {len} bytes)"
        );
        a as *const u16
    };
    // SAFETY: checked above to lie inside the block's shared region.
    let at = |lane: usize, col: usize| unsafe { row_of(lane).add(col).read() } as u32;
    let l = super::host::lane_id() as usize;
    let mut r = [0u32; 4];
    for (i, r) in r.iter_mut().enumerate() {
        let (lo, hi) = if trans {
            // Transposed: (row 2 (l % 4) [+ 1], column l / 4) of matrix i.
            (
                at(8 * i + 2 * (l % 4), l / 4),
                at(8 * i + 2 * (l % 4) + 1, l / 4),
            )
        } else {
            (
                at(8 * i + l / 4, 2 * (l % 4)),
                at(8 * i + l / 4, 2 * (l % 4) + 1),
            )
        };
        *r = lo | hi << 16;
    }
    r
}
