//! The decode split: a block of 4 warps owns a strip of 256 columns of C (8 per lane, one
//! 16-byte chunk of a row of B) and a slice of K, with as many slices per strip as keep the
//! grid to one wave. The decode kernels on `cp.async`, `mma.sync` and TMA share it, and the
//! host sizes their grids and workspaces with it.
use crate::catalogue::PtxFact::{Has, Lacks};
use crate::catalogue::PtxFacts;
#[cfg(not(target_arch = "nvptx64"))]
use crate::parts::schedule::plan::{Plan, PlanInput};
pub(crate) const WARPS: u32 = 4;
pub(crate) const THREADS: u32 = 32 * WARPS;
/// Columns per lane: one 16-byte chunk of a row of B.
pub(crate) const LANE_COLS: u32 = 8;
pub const STRIP: u32 = 32 * LANE_COLS;

/// What the PTX of every kernel on this split shows: B streamed by `cp.async`, the slices'
/// ticket taken with an acquire-release atomic, and everything inlined, nothing spilled.
pub const LAST_BLOCK_STREAMED: PtxFacts = PtxFacts::all(&[
    Has("cp.async.cg.shared.global"),
    Has("atom.acq_rel.gpu.global.add.u32"),
    Lacks(".local"),
    Lacks("call"),
]);

/// Warp `warp`'s share of K in slice `split` of `splits`: the slice as [`k_slice`] cuts it
/// in steps of `granule`, cut again into `WARPS` shares of whole steps; `(k0, k1)`, empty
/// for a share past the slice's end.
///
/// [`k_slice`]: crate::parts::schedule::k_slice
#[inline(always)]
pub fn warp_share(k: u32, (splits, split): (u32, u32), warp: u32, granule: u32) -> (u32, u32) {
    let (k_lo, k_hi) = crate::parts::schedule::k_slice(k, splits, split, granule);
    let share = (k_hi - k_lo).div_ceil(WARPS).next_multiple_of(granule);
    let k0 = (k_lo + warp * share).min(k_hi);
    (k0, (k0 + share).min(k_hi))
}

/// Blocks resident per SM that [`splits`] plans for (registers allow two).
pub const RESIDENT: usize = 2;

/// Slices of K for an `m x k` A over `strips` strips on `sms` SMs with `per_sm` blocks
/// resident on each ([`RESIDENT`] here and for `decode_mma`, 1 for `decode_tma`): as many
/// as keep the grid to one wave (a second, partial wave left most SMs idle for its length),
/// each slice at least 256 K rows (8 stages of each warp), and the slices' sums at most an
/// eighth of B's bytes.
pub fn splits((m, k): (usize, usize), strips: usize, (sms, per_sm): (usize, usize)) -> usize {
    let wanted = per_sm * sms / strips.max(1);
    let by_k = k / 256;
    let by_traffic = k / (16 * m.max(1));
    wanted.min(by_k).min(by_traffic).max(1)
}

/// Counters at the start of the workspace (one per strip and pass of `rows` rows of C),
/// rounded up to 16 bytes: where the slices' planes begin.
pub fn counters(m: usize, strips: usize, rows: usize) -> usize {
    (m.div_ceil(rows.max(1)) * strips).next_multiple_of(4)
}

/// The launch: `strips x splits` blocks (strips of the tile's columns, slices planned for
/// `per_sm` blocks per SM); the workspace after the tensor maps: with more than one slice,
/// the counters (zero at launch) then `splits` planes of C.
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan(input: &PlanInput, per_sm: u32) -> Plan {
    use Plan;
    let (m, n, k) = input.mnk;
    let (rows, cols) = input.tile;
    let strips = n.div_ceil(cols as usize);
    let splits = splits((m, k), strips, (input.sms as usize, per_sm as usize));
    let maps = input.maps;
    let zeroed = if splits > 1 {
        counters(m, strips, rows as usize)
    } else {
        0
    };
    let workspace = if splits > 1 {
        maps + zeroed + splits * m * n
    } else {
        maps
    };
    Plan {
        ctas: Some(splits as u32),
        zeroed: (maps, zeroed),
        ..Plan::single((strips, splits, input.batch), workspace)
    }
}
