//! The persistent grid's last wave split over K. `tiles` tiles on `resident` blocks take
//! `ceil(tiles / resident)` waves; where the last one holds few tiles (`tiles % resident`,
//! or every tile where they fill less than one wave), most SMs idle through it. Those
//! [`tail`] tiles are cut into [`splits`] slices of K instead, at most one unit a block.
//!
//! A slice ends warp by warp, with no block waiting for another: each consumer warp writes
//! its 16 rows of partial sums to its plane and draws a ticket on its counter; the warp that
//! draws the last adds the planes in K order and stores C ([`finish`]), so the sum does not
//! depend on which slice arrives last.
//!
//! Workspace (f32), after the tensor maps: [`counters`] (one per tail tile and consumer
//! warp, zero at launch and left zero), then per tail tile, slice and warp a plane of the
//! warp's accumulators in register order.
use crate::device::global::{fence_gpu, load4_volatile, store, store4, take_ticket};
use crate::device::shuffle;
use crate::device::thread::sync_warp;
#[cfg(not(target_arch = "nvptx64"))]
use crate::parts::schedule::plan::{Plan, PlanInput, Unplannable};

/// Consumer warps of a 128-row tile, 16 rows each.
pub const WARPS: u32 = 8;
/// Fewest stages a slice multiplies: a shorter one would spend its time filling the
/// pipeline and writing its plane.
const MIN_PHASES: u32 = 4;
/// Most slices of a tile: each one's plane is a tile of f32 written and read back.
const MOST_SPLITS: u32 = 16;
/// 16-byte loads of a plane the last warp has in flight: half of the widest tile's (64 x
/// 256, 128 accumulators a thread).
const HALF_LOADS: usize = 16;

/// The tiles of the last wave of `tiles` on `blocks` blocks: `tiles % blocks`, or all of
/// them where they do not fill one.
#[inline(always)]
pub fn tail(tiles: u32, blocks: u32) -> u32 {
    if tiles < blocks {
        tiles
    } else {
        tiles % blocks.max(1)
    }
}

/// Slices of K per tail tile for `tiles` tiles on `resident` blocks, K in `phases` stages: as
/// many as the idle blocks of the last wave take, each slice at least [`MIN_PHASES`] stages,
/// at most [`MOST_SPLITS`]; 1 where the last wave is full or more than half full.
pub fn splits(tiles: u32, resident: u32, phases: u32) -> u32 {
    let tail = tail(tiles, resident);
    if tail == 0 {
        return 1;
    }
    (resident / tail)
        .min(phases / MIN_PHASES)
        .clamp(1, MOST_SPLITS)
}

/// Stages of K for elements of `elem_bytes`: 128 bytes of each operand's rows a stage.
pub fn phases(k: usize, elem_bytes: usize) -> u32 {
    k.div_ceil(128 / elem_bytes.clamp(1, 128))
        .min(u32::MAX as usize) as u32
}

/// Counters at the workspace's start (after the maps), one per tail tile and warp, rounded
/// up to 16 bytes: where the planes begin.
#[inline(always)]
pub fn counters(tails: u32) -> usize {
    (tails * WARPS).next_multiple_of(4) as usize
}

/// Accumulators of a warp's plane on tiles of `cols` columns: its 16 rows.
pub const fn plane(cols: u32) -> usize {
    16 * cols as usize
}

/// The launch: the persistent grid (`tile_order::plan_persistent`), its tail split where
/// [`splits`] says so (`Problem::ctas` = the slices, 1 otherwise; the grid then as many
/// blocks as units where the tiles fill less than a wave), with the counters and planes after
/// the tensor maps. K is in stages of 128 bytes of each operand's rows.
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan(input: &PlanInput) -> Result<Plan, Unplannable> {
    let plan = crate::parts::schedule::tile_order::plan_persistent(input)?;
    let (m, n, k) = input.mnk;
    let (rows, cols) = input.tile;
    // (`plan_persistent` checked that the batch's tiles fit 32 bits.)
    let tiles = (n.div_ceil(cols as usize) * m.div_ceil(rows as usize)) as u32 * input.batch;
    let resident = (input.sms * input.per_sm).max(1);
    let splits = splits(tiles, resident, phases(k, input.elem_bytes));
    if splits == 1 {
        return Ok(Plan {
            ctas: Some(1),
            ..plan
        });
    }
    let tails = tail(tiles, resident);
    let blocks = if tiles < resident {
        tiles * splits
    } else {
        resident
    };
    let zeroed = counters(tails);
    let planes = (tails * splits * WARPS) as usize * plane(cols);
    Ok(Plan {
        grid: (blocks as usize, 1, 1),
        ctas: Some(splits),
        fixup: None,
        workspace: input.maps + zeroed + planes,
        zeroed: (input.maps, zeroed),
    })
}

/// A unit of a split tile: the tile's place among the [`tail`] ones (`tile` of `tails`),
/// and the slice of K (`index` of `splits`).
#[derive(Clone, Copy)]
pub(crate) struct Slice {
    pub(crate) tile: u32,
    pub(crate) tails: u32,
    pub(crate) index: u32,
    pub(crate) splits: u32,
}

impl Slice {
    /// This slice's stages of the tile's `phases`: `(first, end)`, never empty where
    /// `phases >= splits` ([`splits`] keeps at least [`MIN_PHASES`] each).
    #[inline(always)]
    pub(crate) fn phases(&self, phases: u32) -> (u32, u32) {
        let share = |i: u32| (phases as u64 * i as u64 / self.splits.max(1) as u64) as u32;
        (share(self.index), share(self.index + 1))
    }
}

/// Ends consumer warp `warp`'s part of a slice (lane `lane`, its 16 rows' partial sums in
/// `acc` in `wgmma`'s register order): writes them to its plane (register `4 c + e` of lane
/// `l` at `4 (32 c + l) + e`, so a warp's store is 512 contiguous bytes) and draws the
/// warp's ticket. For the warp that draws the last one, puts the sum of the slices' planes in
/// K order into `acc` and returns true: the caller stores it. Elsewhere returns false.
///
/// # Safety
/// Every lane of the warp calls it (it shuffles); `workspace` is the split's, after the tensor
/// maps: [`counters`] for `slice.tails`, zero at launch and touched only by this split, then
/// the planes of [`plan`] for tiles of `R / 2` columns (`R` accumulators a thread); the warp's
/// rows of the tile are its own in every slice.
#[inline(always)]
pub(crate) unsafe fn finish<const R: usize>(
    acc: &mut [f32; R],
    workspace: *mut f32,
    slice: Slice,
    warp: u32,
    lane: u32,
) -> bool {
    const { assert!(R.is_multiple_of(8) && R / 8 <= HALF_LOADS) };
    let Slice {
        tile,
        tails,
        index,
        splits,
    } = slice;
    let planes = workspace.wrapping_add(counters(tails));
    let plane_of = |p: u32| {
        let at = ((tile * splits + p) * WARPS + warp) as usize * 32 * R;
        planes.wrapping_add(at)
    };
    let own = plane_of(index);
    for c in 0..R / 4 {
        let v = [acc[4 * c], acc[4 * c + 1], acc[4 * c + 2], acc[4 * c + 3]];
        // SAFETY: this warp's plane of this slice (the contract's layout), 4 accumulators of
        // this lane inside its 32 R, 16-byte aligned (the planes start 16-byte aligned after
        // `counters`, and plane sizes are multiples of 4); no other lane or block writes them.
        unsafe { store4(own, place(c, lane), v) };
    }
    fence_gpu(); // this lane's plane before the warp's ticket
    sync_warp();
    let counter = workspace
        .cast::<u32>()
        .wrapping_add((tile * WARPS + warp) as usize);
    let mut ticket = 0;
    if lane == 0 {
        // SAFETY: this tile's and warp's counter (the contract: touched only by its tickets
        // until the last warp resets it).
        ticket = unsafe { take_ticket(counter) };
    }
    let mut mask = 16;
    while mask > 0 {
        // SAFETY: every lane of the warp is here (the contract), with the same mask.
        ticket += unsafe { shuffle::xor([ticket], mask) }[0];
        mask /= 2;
    }
    if ticket != splits - 1 {
        return false;
    }
    fence_gpu(); // the other slices' planes after their tickets
    // Every plane read back, this warp's own too: the sum then needs no registers beyond
    // `acc` and half a plane in flight.
    for p in 0..splits {
        // SAFETY: plane p < splits of this tile and warp, written (its ticket drawn after a
        // fence) by slice p, this warp's own included, before the last ticket.
        unsafe {
            add_half(acc, plane_of(p), lane, 0, p == 0);
            add_half(acc, plane_of(p), lane, 1, p == 0);
        }
    }
    if lane == 0 {
        // The next product on this stream finds it zero again.
        // SAFETY: every slice of the tile drew its ticket for this warp: nothing else touches
        // the counter in this launch.
        unsafe { store(counter, 0, 0u32) };
    }
    true
}

/// Where register `4 c` of lane `lane` lies in a warp's plane: its 16 bytes, then the next
/// lane's.
#[inline(always)]
fn place(c: usize, lane: u32) -> usize {
    (32 * c + lane as usize) * 4
}

/// Half `half` (0 or 1, a constant at the call) of a warp's plane read into `acc`: stored
/// where `first`, added otherwise. Loops of constant length and constant indices, so that
/// `acc` stays in registers.
///
/// # Safety
/// `plane` is a warp's plane of `32 R` accumulators that other warps wrote before a ticket
/// this warp drew after them (and a fence).
#[inline(always)]
unsafe fn add_half<const R: usize>(
    acc: &mut [f32; R],
    plane: *mut f32,
    lane: u32,
    half: usize,
    first: bool,
) {
    let mut got = [[0.0f32; 4]; HALF_LOADS];
    for v in 0..HALF_LOADS {
        if v < R / 8 {
            // SAFETY: register group `half R / 8 + v < R / 4` of this lane: inside the plane
            // (this contract), 16-byte aligned.
            got[v] = unsafe { load4_volatile(plane, place(half * R / 8 + v, lane)) };
        }
    }
    for v in 0..HALF_LOADS {
        if v < R / 8 {
            for e in 0..4 {
                let i = 4 * (half * R / 8 + v) + e;
                acc[i] = if first { got[v][e] } else { acc[i] + got[v][e] };
            }
        }
    }
}
