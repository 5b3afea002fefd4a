//! B streamed through a warp's pipe by `cp.async`: each lane copies its own 16-byte chunk of
//! every K row of a stage, so the decode mainloops read B without holding it in registers.
use crate::device::async_copy::commit_group;
use crate::device::shared::SharedTile;

/// Stage `s` of a lane's stream of B: the 16-byte chunk of columns `col..col + 8` of K rows
/// `k0 + s ROWS..` into slot `s % STAGES` of the pipe, at column `lane 8`; zeros past `k1` and
/// `n`. One `cp.async` group.
///
/// # Safety
/// N is a multiple of 8 and B 16-byte aligned (so an inside chunk is 16 aligned bytes of B's
/// row); `pipe` holds `STAGES ROWS` rows of the lane's 8 columns, and no one reads the slot
/// until this group is waited for.
#[inline(always)]
pub unsafe fn fill_stage<T: Copy, const STAGES: u32, const ROWS: u32>(
    pipe: &SharedTile<T>,
    b: *const T,
    (k0, k1, n): (u32, u32, u32),
    (col, lane): (u32, u32),
    s: u32,
) {
    let (slot, kk) = ((s % STAGES) * ROWS, k0 + s * ROWS);
    for r in 0..ROWS {
        let row = kk + r;
        let inside = row < k1 && col < n;
        let at = row as usize * n as usize + col as usize;
        let src = if inside { b.wrapping_add(at) } else { b };
        // SAFETY: row slot + r < STAGES ROWS, columns `lane 8..+ 8` of the pipe; where inside,
        // `src` is 16 aligned bytes of B (the contract), else unread; the slot is unread until
        // this group is waited for (the contract).
        unsafe { pipe.copy16_or_zero(slot + r, lane * 8, src, inside) };
    }
    commit_group();
}
