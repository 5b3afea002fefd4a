//! Schedules: which tiles (and which slice of K) a block computes, and how the parts of a split tile come together.
//! Each file holds both halves of its schedule: the blocks' mapping on the device, and the
//! launch ([`plan::Plan`]) the host sizes from the same arithmetic.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod decode_split;
#[cfg(not(target_arch = "nvptx64"))]
pub mod plan;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod split_k;
pub mod split_k_fixup;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod split_k_strips;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod split_tail;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod stream_k;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod tile_order;

/// Slice `split` of `splits` of K: `chunk = ceil(k / splits)` rounded up to a multiple of
/// `granule` K steps, so the last slices may be short or empty; `(k0, k1)`.
#[inline(always)]
pub fn k_slice(k: u32, splits: u32, split: u32, granule: u32) -> (u32, u32) {
    let chunk = k.div_ceil(splits).next_multiple_of(granule);
    let k0 = (split * chunk).min(k);
    (k0, (k0 + chunk).min(k))
}

#[cfg(not(target_arch = "nvptx64"))]
use crate::catalogue::Grid;

/// The launch each grid's schedule plans, on the host.
#[cfg(not(target_arch = "nvptx64"))]
impl Grid {
    /// The launch this grid's schedule plans for `input`.
    pub fn plan(&self, input: &plan::PlanInput) -> Result<plan::Plan, plan::Unplannable> {
        match *self {
            Grid::Tiles => Ok(tile_order::plan_tiles(input)),
            Grid::Persistent => tile_order::plan_persistent(input),
            Grid::PersistentPairs => tile_order::plan_clusters(input, (2, 1)),
            Grid::PersistentQuads => tile_order::plan_clusters(input, (2, 2)),
            Grid::PersistentSplit => split_tail::plan(input),
            Grid::StreamK { .. } => stream_k::plan(input),
            Grid::SplitK { .. } => Ok(split_k_fixup::plan(input)),
            Grid::SplitKLastBlock { per_sm } => Ok(decode_split::plan(input, per_sm)),
            Grid::SplitKStrips => Ok(split_k_strips::plan(input)),
        }
    }
}
