//! Split-K with a fix-up launch: a grid of column strips by slices of K ([`splits`], the
//! slices from [`k_slice`](crate::parts::schedule::k_slice)); with more than one slice, each
//! block writes its slice's sums to its plane of the workspace (`splits` planes of C), and a
//! second launch ([`add_slices`]) adds the planes in K order and writes C, so the result does
//! not depend on timing.
use crate::device::global::{load, store};
use crate::device::thread::{block_idx_x, thread_idx_x};
use crate::element::{Accumulator, Element};
#[cfg(not(target_arch = "nvptx64"))]
use crate::parts::schedule::plan::{FixupLaunch, Plan, PlanInput};
use crate::problem::Gemm;

/// Threads of the fix-up launch.
pub const FIXUP_THREADS: u32 = 256;

/// Slices of K for an `m x k` A (elements of `elem_bytes`) over `strips` column strips on
/// `sms` SMs: about four blocks per SM in all, each slice at least 256 K rows, and the
/// slices' sums (written and read once more) at most an eighth of B's bytes.
pub fn splits((m, k): (usize, usize), strips: usize, elem_bytes: usize, sms: usize) -> usize {
    let wanted = (4 * sms).div_ceil(strips.max(1));
    let by_k = k / 256;
    let by_traffic = k * elem_bytes / (64 * m.max(1));
    wanted.min(by_k).min(by_traffic).max(1)
}

/// The launch of an `m x n` C in strips of the tile's columns: `strips x splits` blocks, and
/// where there is more than one slice, the planes and the fix-up (`ceil(m n /
/// FIXUP_THREADS)` blocks).
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan(input: &PlanInput) -> Plan {
    let (m, n, k) = input.mnk;
    let strips = n.div_ceil(input.tile.1 as usize);
    let splits = splits((m, k), strips, input.elem_bytes, input.sms as usize);
    let plane = m * n;
    let fixup = (splits > 1).then(|| FixupLaunch {
        blocks: plane.div_ceil(FIXUP_THREADS as usize) as u32,
        threads: FIXUP_THREADS,
    });
    let workspace = if splits > 1 { splits * plane } else { 0 };
    Plan {
        ctas: Some(splits as u32),
        fixup,
        ..Plan::single((strips, splits, input.batch), workspace)
    }
}

/// The fix-up: adds the `splits` (`Problem::ctas`) slices' sums of each element of C in K
/// order and writes C.
///
/// # Safety
/// After the split launch with the same problem, which wrote every plane of the `splits x
/// m x n` workspace; C dense `m x n`; `FIXUP_THREADS` threads per block, grid `ceil(m n /
/// FIXUP_THREADS)`.
#[inline(always)]
pub unsafe fn add_slices<T: Element>(g: Gemm<T>) {
    let (_, _, c, m, n, _) = g.plain();
    let plane = m as usize * n as usize;
    let i = block_idx_x() as usize * FIXUP_THREADS as usize + thread_idx_x() as usize;
    if i >= plane {
        return;
    }
    let mut sum = T::Acc::ZERO;
    for s in 0..g.p.ctas.max(1) as usize {
        // SAFETY: s < splits and i < m n: inside the `splits x m x n` workspace that the split
        // launch wrote in the launch before (this fn's contract).
        sum = sum + unsafe { load(g.workspace.cast_const(), s * plane + i) };
    }
    // SAFETY: i < m n is inside C; one thread per element.
    unsafe { store(c, i, T::out(sum)) };
}
