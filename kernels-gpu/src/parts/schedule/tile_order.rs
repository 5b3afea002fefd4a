//! The order of block tiles: one per block on a grid of tiles (every kernel's unless its
//! spec says otherwise), or, for the Hopper kernels, on a persistent grid every
//! `gridDim.x`-th tile, grouped by rows for L2.
use crate::device::thread::{block_idx_x, block_idx_y, block_idx_z, grid_dim_x};
use crate::element::Element;
#[cfg(not(target_arch = "nvptx64"))]
use crate::parts::schedule::plan::{Overflow, Plan, PlanInput, Unplannable};
use crate::parts::schedule::split_tail::{self, Slice};
use crate::parts::wgmma::warpgroup::BM;
use crate::problem::Gemm;
/// Rows of block tiles a persistent grid walks through together (column by column within
/// the group): a wave of 132 blocks then reads 8 row panels of A and ~17 column panels of
/// B instead of 1 or 2 of A and all of B's, which keeps them in L2.
const GROUP: u32 = 8;

/// The block tiles one block computes, in order.
#[derive(Clone, Copy)]
pub(crate) struct TileOrder {
    persistent: bool,
    /// Columns of a block tile (`BN`, or 128: `wgmma_128x128`, `wgmma_3xtf32`).
    cols: u32,
    tiles_m: u32,
    tiles_n: u32,
    /// Products a persistent grid walks through (one after the other); 1 otherwise.
    batch: u32,
    /// Slices of K of each tile of the last wave (`split_tail`); 1: none split.
    splits: u32,
    /// Tiles down and across of a cluster's square (persistent in clusters of two or four
    /// blocks: [`TileOrder::of_clusters`]); `(1, 1)`: no clusters.
    square: (u32, u32),
}

/// A block's unit of work: a tile (`(z, row0, col0)` as [`TileOrder::at`] gives it), its
/// stages of K `(first, end)`, and where it is a slice of a split tile, which.
#[derive(Clone, Copy)]
pub(crate) struct Unit {
    pub(crate) tile: (u32, u32, u32),
    pub(crate) phases: (u32, u32),
    pub(crate) slice: Option<Slice>,
}

impl TileOrder {
    /// The order of block tiles of `cols` columns (and `BM` rows) over an `m x n` C (of
    /// `batch` products where `persistent`).
    #[inline(always)]
    pub(crate) fn of_width(persistent: bool, (m, n): (u32, u32), batch: u32, cols: u32) -> Self {
        Self {
            persistent,
            cols,
            tiles_m: m.div_ceil(BM),
            tiles_n: n.div_ceil(cols),
            batch: if persistent { batch.max(1) } else { 1 },
            splits: 1,
            square: (1, 1),
        }
    }

    /// The persistent order of squares of `rows x cols` block tiles (`(2, 1)`: pairs one
    /// above the other; `(2, 2)`: 2 x 2) for a grid of clusters of `rows cols` blocks
    /// (`crate::device::cluster`): the squares go to the clusters as tiles go to blocks, and
    /// rank `r` of a cluster computes the tile `r % rows` tiles down and `r / rows` across
    /// each square. The blocks of a column of the square need the same columns of B at the
    /// same phases, those of a row the same rows of A.
    #[inline(always)]
    pub(crate) fn of_clusters(
        (m, n): (u32, u32),
        batch: u32,
        cols: u32,
        (rows, across): (u32, u32),
    ) -> Self {
        Self {
            tiles_m: m.div_ceil(rows * BM),
            tiles_n: n.div_ceil(across * cols),
            square: (rows, across),
            ..Self::of_width(true, (m, n), batch, cols)
        }
    }

    /// Blocks of a cluster.
    #[inline(always)]
    fn cluster(&self) -> u32 {
        self.square.0 * self.square.1
    }

    /// This block's first unit (its cluster's, in clusters) and the step between its units.
    #[inline(always)]
    fn first_step(&self) -> (u32, u32) {
        let cluster = self.cluster();
        (block_idx_x() / cluster, (grid_dim_x() / cluster).max(1))
    }

    /// The same order with the last wave's tiles cut into `splits` slices of K (the launch's
    /// `Problem::ctas`, planned by `split_tail::plan`); 0 or 1 splits none.
    #[inline(always)]
    pub(crate) fn split(self, splits: u32) -> Self {
        Self {
            splits: splits.max(1),
            ..self
        }
    }

    /// Tiles of the whole batch.
    #[inline(always)]
    fn tiles(&self) -> u32 {
        self.tiles_m * self.tiles_n * self.batch
    }

    /// Tiles cut into slices: the last wave's, where the order is split.
    #[inline(always)]
    fn tails(&self) -> u32 {
        match self.splits {
            1 => 0,
            _ => split_tail::tail(self.tiles(), grid_dim_x()),
        }
    }

    /// How many tiles this block computes.
    #[inline(always)]
    pub(crate) fn len(&self) -> u32 {
        if !self.persistent {
            return 1;
        }
        let (first, step) = self.first_step();
        let tails = self.tails();
        (self.tiles() - tails + tails * self.splits)
            .saturating_sub(first)
            .div_ceil(step)
    }

    /// This block's `i`-th unit of `phases` stages of K: a whole tile, or (past the tiles
    /// before the last wave) slice `j % splits` of tail tile `j / splits`.
    #[inline(always)]
    pub(crate) fn unit(&self, i: u32, phases: u32) -> Unit {
        let whole = |tile| Unit {
            tile,
            phases: (0, phases),
            slice: None,
        };
        if !self.persistent || self.splits == 1 {
            return whole(self.at(i));
        }
        let u = block_idx_x() + i * grid_dim_x();
        let tails = self.tails();
        let before = self.tiles() - tails;
        if u < before {
            return whole(self.tile(u));
        }
        let j = u - before;
        let slice = Slice {
            tile: j / self.splits,
            tails,
            index: j % self.splits,
            splits: self.splits,
        };
        Unit {
            tile: self.tile(before + slice.tile),
            phases: slice.phases(phases),
            slice: Some(slice),
        }
    }

    /// This block's `i`-th tile: `(z, row0, col0)`, its product in the batch (`blockIdx.z`
    /// on a grid of tiles) and its origin.
    #[inline(always)]
    pub(crate) fn at(&self, i: u32) -> (u32, u32, u32) {
        if !self.persistent {
            return (block_idx_z(), block_idx_y() * BM, block_idx_x() * self.cols);
        }
        let (first, step) = self.first_step();
        self.tile(first + i * step)
    }

    /// Tile `t` of a persistent grid's order.
    #[inline(always)]
    fn tile(&self, t: u32) -> (u32, u32, u32) {
        // (Divisors kept non-zero for the compiler: a launch has tiles, and `t` is one.)
        let per_product = (self.tiles_m * self.tiles_n).max(1);
        let (z, t) = (t / per_product, t % per_product);
        // Squares: as many rows of tiles in a group, fewer rows of squares; rank `r` of a
        // cluster `r % rows` tiles down and `r / rows` across its square.
        let (down, across) = self.square;
        let rank = block_idx_x() % self.cluster();
        let (group, height, width) = (GROUP / down, down * BM, across * self.cols);
        let per_group = group * self.tiles_n.max(1);
        let first_row = (t / per_group) * group;
        let rows = self.tiles_m.saturating_sub(first_row).clamp(1, group);
        let within = t % per_group;
        (
            z,
            (first_row + within % rows) * height + rank % down * BM,
            (within / rows) * width + rank / down * self.cols,
        )
    }

    /// `gemm` moved to product `z` of the batch, where the entry point has not done it (a
    /// persistent grid is one block deep).
    #[inline(always)]
    pub(crate) fn product<T: Element>(&self, gemm: &Gemm<T>, z: u32) -> Gemm<T> {
        if !self.persistent {
            return *gemm;
        }
        gemm.strided_product(z)
    }
}

/// A grid of tiles: `ceil(n / cols) x ceil(m / rows)` blocks, the batch deep; the workspace
/// holds the tensor maps, if any.
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan_tiles(input: &PlanInput) -> Plan {
    let (m, n, _) = input.mnk;
    let (rows, cols) = input.tile;
    let grid = (
        n.div_ceil(cols as usize),
        m.div_ceil(rows as usize),
        input.batch,
    );
    Plan::single(grid, input.maps)
}

/// A persistent grid of clusters of `rows x cols` blocks on squares of as many tiles
/// ([`TileOrder::of_clusters`]): as many clusters as are resident at once (the host lowers
/// it to what the driver says fits), at most one per square, 1D.
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan_clusters(input: &PlanInput, (down, across): (u32, u32)) -> Result<Plan, Unplannable> {
    let (m, n, _) = input.mnk;
    let (rows, cols) = input.tile;
    let batch = input.batch;
    let cluster = (down * across) as usize;
    let squares =
        n.div_ceil((across * cols) as usize) * m.div_ceil((down * rows) as usize) * batch as usize;
    if cluster * squares > u32::MAX as usize {
        let mnk = input.mnk;
        let count = Overflow::BatchTiles {
            batch,
            tiles: cluster * squares,
        };
        return Err(Unplannable { mnk, count });
    }
    let resident = (input.sms * input.per_sm / cluster as u32).max(1);
    Ok(Plan::single(
        (cluster * squares.min(resident as usize), 1, 1),
        input.maps,
    ))
}

/// A persistent grid: as many blocks as are resident at once, at most one per tile of the
/// whole batch, 1 deep; the kernels count those tiles in 32 bits.
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan_persistent(input: &PlanInput) -> Result<Plan, Unplannable> {
    let (m, n, _) = input.mnk;
    let (rows, cols) = input.tile;
    let batch = input.batch;
    let tiles = n.div_ceil(cols as usize) * m.div_ceil(rows as usize) * batch as usize;
    if tiles > u32::MAX as usize {
        let mnk = input.mnk;
        let count = Overflow::BatchTiles { batch, tiles };
        return Err(Unplannable { mnk, count });
    }
    let resident = (input.sms * input.per_sm).max(1);
    Ok(Plan::single(
        (tiles.min(resident as usize), 1, 1),
        input.maps,
    ))
}
