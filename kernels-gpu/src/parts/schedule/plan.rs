//! A product's launch as its schedule plans it on the host: the grid, the `Problem::ctas`
//! the kernel reads, a fix-up launch, the workspace and its counters. [`Grid::plan`](crate::catalogue::Grid::plan) asks
//! the kernel's schedule; each schedule's rule lives in its own file beside the device code
//! that follows it, so the two cannot drift apart.
use core::fmt;

/// What a schedule plans a launch from: the shape, the kernel's block tile and element
/// sizes, and the device's SMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanInput {
    /// C is `m x n`, the inner dimension `k` (each at most `i32::MAX`).
    pub mnk: (usize, usize, usize),
    /// Products in the batch (at least 1).
    pub batch: u32,
    /// The block tile, `rows x cols` of C.
    pub tile: (u32, u32),
    /// Bytes of an input element.
    pub elem_bytes: usize,
    /// The device's SMs.
    pub sms: u32,
    /// Blocks of the kernel resident per SM, as its launch bounds ask (1 without bounds).
    pub per_sm: u32,
    /// Accumulators of tensor maps at the workspace's start (0 for a kernel without TMA).
    pub maps: usize,
}

impl PlanInput {
    /// The shape in the kernels' 32-bit counts (valid: each dimension fits `i32`).
    pub fn mnk32(&self) -> (u32, u32, u32) {
        let (m, n, k) = self.mnk;
        (m as u32, n as u32, k as u32)
    }
}

/// A second, 1D launch that finishes the product: `blocks` blocks of `threads`, no shared
/// memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixupLaunch {
    pub blocks: u32,
    pub threads: u32,
}

/// A schedule's launch of one product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The main launch's grid: x and y (before the device's limits are checked), and z, the
    /// batch, or 1 where the blocks walk the batch themselves.
    pub grid: (usize, usize, u32),
    /// `Problem::ctas` for every launch, where the schedule sets it (slices of K, or the
    /// sharing wave's blocks).
    pub ctas: Option<u32>,
    /// The launch after the main one, where the shape needs it.
    pub fixup: Option<FixupLaunch>,
    /// Accumulators of workspace (0: none), tensor maps included.
    pub workspace: usize,
    /// Where the accumulators that must be zero at launch start, and how many: counters the
    /// kernel leaves zero.
    pub zeroed: (usize, usize),
}

impl Plan {
    /// A plan of one launch on `grid`, with `workspace` and nothing zeroed.
    pub fn single(grid: (usize, usize, u32), workspace: usize) -> Self {
        Self {
            grid,
            ctas: None,
            fixup: None,
            workspace,
            zeroed: (0, 0),
        }
    }
}

/// Why a schedule cannot plan an `m x n x k` product: one of its counts does not fit the
/// kernels' 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unplannable {
    pub mnk: (usize, usize, usize),
    pub count: Overflow,
}

/// The count of [`Unplannable`] that would overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// A persistent grid's tiles of the whole batch.
    BatchTiles { batch: u32, tiles: usize },
    /// Stream-K's tiles and split phases on `ctas` blocks.
    TilesAndPhases { ctas: u32 },
}

/// The reason, to follow the kernel's name.
impl fmt::Display for Unplannable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (m, n, k) = self.mnk;
        match self.count {
            Overflow::BatchTiles { batch, tiles } => write!(
                f,
                "counts the tiles of the whole batch in 32 bits; {batch} x {m}x{n}x{k} has {tiles}"
            ),
            Overflow::TilesAndPhases { ctas } => write!(
                f,
                "counts tiles and phases in 32 bits; {m}x{n}x{k} on {ctas} blocks needs more"
            ),
        }
    }
}
