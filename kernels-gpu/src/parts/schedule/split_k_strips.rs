//! Split-K over strips of whole `rows x cols` block tiles, in one launch: block `(x, y)`
//! takes strip `x` ([`origin`], row strips first) and slice `y` of K
//! ([`k_slice`](crate::parts::schedule::k_slice), `Problem::ctas` = [`splits`] of them). With
//! more than one slice, the workspace holds [`counters`] (zero at launch, left zero), then
//! per strip `splits` planes of [`strip_elements`]; the last block of a strip to finish adds
//! them in K order (`split_k::last_to_arrive`).
#[cfg(not(target_arch = "nvptx64"))]
use crate::parts::schedule::plan::{Plan, PlanInput};

/// Slices of K for an `m x n x k` product on `rows x cols` strips where `resident` blocks
/// fit on the GPU at once: as many as keep the grid to one wave, each slice at least 256 K
/// steps, and the slices' sums at most an eighth of A's bytes.
pub fn splits(
    (m, n, k): (usize, usize, usize),
    (rows, cols): (u32, u32),
    resident: usize,
) -> usize {
    let strips = m.div_ceil(rows as usize) * n.div_ceil(cols as usize);
    let wanted = resident / strips.max(1);
    let by_k = k / 256;
    let by_traffic = k / (8 * n.max(1).next_multiple_of(cols as usize));
    wanted.min(by_k).min(by_traffic).max(1)
}

/// Counters at the start of the workspace (one per strip), rounded up to 16 bytes of f32:
/// where the slices' planes begin.
pub fn counters((m, n): (usize, usize), (rows, cols): (u32, u32)) -> usize {
    (m.div_ceil(rows as usize) * n.div_ceil(cols as usize)).next_multiple_of(4)
}

/// Accumulators of a strip's plane: its elements, row-major.
pub const fn strip_elements((rows, cols): (u32, u32)) -> usize {
    (rows * cols) as usize
}

/// The first row and column of C in strip `strip` of an `m`-row C.
#[inline(always)]
pub fn origin(strip: u32, m: u32, (rows, cols): (u32, u32)) -> (u32, u32) {
    let row_strips = m.div_ceil(rows).max(1);
    (strip % row_strips * rows, strip / row_strips * cols)
}

/// The launch: `strips x splits` blocks, where `resident` is the SMs times the kernel's
/// blocks per SM; with more than one slice, the counters and planes.
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan(input: &PlanInput) -> Plan {
    use Plan;
    let (m, n, k) = input.mnk;
    let (rows, cols) = input.tile;
    let resident = input.sms * input.per_sm;
    let splits = splits((m, n, k), input.tile, resident as usize);
    let strips = m.div_ceil(rows as usize) * n.div_ceil(cols as usize);
    let (mut zeroed, mut workspace) = (0, 0);
    if splits > 1 {
        zeroed = counters((m, n), input.tile);
        workspace = zeroed + splits * strips * strip_elements(input.tile);
    }
    Plan {
        ctas: Some(splits as u32),
        zeroed: (0, zeroed),
        ..Plan::single((strips, splits, input.batch), workspace)
    }
}
