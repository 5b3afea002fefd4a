//! The stream-K schedule: the tiles of the whole waves each get a block of their own; the
//! phases (BK steps of K) of the tiles left over are shared out evenly and in order among
//! one more wave of blocks, which write their parts to a workspace; a second launch (the
//! fix-up) adds the parts in K order and writes C. No block waits on another. The same
//! arithmetic ([`Schedule`]) runs in both launches and on the host, which sizes them.
use crate::device::global::load;
use crate::device::thread::{block_idx_x, sync_threads, thread_idx_x};
use crate::element::{Accumulator, Element};
#[cfg(not(target_arch = "nvptx64"))]
use crate::parts::schedule::plan::{FixupLaunch, Overflow, Plan, PlanInput, Unplannable};
use crate::parts::simt::async_stages::tile_product;
use crate::parts::simt::block_tile::{Block, PairedLanes, ThreadMap, ThreadTile, epilogue_on};
use crate::problem::{COut, Gemm};
/// The K step of every stream-K kernel.
pub const BK: u32 = 16;
/// Workspace slots per block: its share of the split phases touches two tiles at most.
pub const SLOTS_PER_CTA: u32 = 2;
/// Threads of a fix-up block, and how many elements of a tile each adds.
pub const FIXUP_THREADS: u32 = 256;
const FIXUP_PER_THREAD: u32 = 4;
/// Parts of a tile a fix-up thread has in flight at once.
const FIXUP_GROUP: u32 = 4;

/// Fix-up blocks per split `rows x cols` tile.
pub const fn fixup_chunks((rows, cols): (u32, u32)) -> u32 {
    rows * cols / (FIXUP_THREADS * FIXUP_PER_THREAD)
}

/// How a launch of `ctas` blocks shares out the `BM x BN` tiles of C and their phases. The
/// same arithmetic runs in both kernels and on the host (which sizes both launches and
/// checks [`Schedule::fits`] first: the kernels count tiles and phases in 32 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Tiles per row of tiles.
    pub tiles_n: u32,
    pub ctas: u32,
    /// Phases per tile: `ceil(K / BK)`.
    pub phases: u32,
    /// Tiles computed whole, each by a block of its own: a multiple of `ctas` (all of them
    /// if K = 0).
    pub whole: u32,
    /// Tiles after those whose phases are shared out: fewer than `ctas`.
    pub split: u32,
}

impl Schedule {
    /// Whether [`Schedule::new`]'s counts fit its 32-bit fields for this shape and
    /// `bm x bn` tiles.
    pub fn fits((m, n, k): (u32, u32, u32), ctas: u32, (bm, bn): (u32, u32)) -> bool {
        let tiles = m.div_ceil(bm) as u64 * n.div_ceil(bn) as u64;
        let work = (tiles % ctas.max(1) as u64) * k.div_ceil(BK) as u64;
        tiles <= u32::MAX as u64 && work <= u32::MAX as u64
    }

    /// The schedule of an `m x n` C of `bm x bn` tiles with inner dimension `k` over `ctas`
    /// blocks (at least 1). Valid where [`Schedule::fits`].
    #[inline(always)]
    pub fn new((m, n, k): (u32, u32, u32), ctas: u32, (bm, bn): (u32, u32)) -> Self {
        let tiles_n = n.div_ceil(bn);
        let tiles = m.div_ceil(bm).wrapping_mul(tiles_n);
        let ctas = ctas.max(1);
        let phases = k.div_ceil(BK);
        // K = 0: nothing to share; every tile is written (zeros) whole.
        let split = if phases == 0 { 0 } else { tiles % ctas };
        Self {
            tiles_n,
            ctas,
            phases,
            whole: tiles - split,
            split,
        }
    }

    /// Phases shared out: `split * phases`.
    #[inline(always)]
    fn work(&self) -> u64 {
        self.split as u64 * self.phases as u64
    }

    /// `phases`, which is not 0 wherever a split phase exists; said so to the compiler,
    /// which otherwise compiles a division-by-zero panic into the kernels.
    #[inline(always)]
    fn split_phases(&self) -> u32 {
        self.phases.max(1)
    }

    /// Block `cta`'s share of the split phases, `[begin, end)` in split-phase order (tile
    /// after tile, each from K = 0). Shares differ in length by one phase at most, and
    /// none is longer than a tile (`split < ctas`), so a share touches two tiles at most.
    #[inline(always)]
    pub fn share(&self, cta: u32) -> (u32, u32) {
        let (w, ctas, cta) = (self.work(), self.ctas as u64, cta as u64);
        ((cta * w / ctas) as u32, ((cta + 1) * w / ctas) as u32)
    }

    /// The block whose share holds split phase `i` (`i < split * phases`).
    #[inline(always)]
    pub fn holder(&self, i: u32) -> u32 {
        (((i as u64 + 1) * self.ctas as u64 - 1) / self.work().max(1)) as u32
    }

    /// The first and last block whose shares touch split tile `t`; the tile is shared
    /// (and its parts go through the workspace) when they differ.
    #[inline(always)]
    pub fn holders(&self, t: u32) -> (u32, u32) {
        (
            self.holder(t * self.phases),
            self.holder((t + 1) * self.phases - 1),
        )
    }

    /// Workspace slot of block `cta`'s part of split tile `t`: `2 cta` when its share starts
    /// in that tile, `2 cta + 1` when it started in the tile before.
    #[inline(always)]
    pub fn slot(&self, cta: u32, t: u32) -> u32 {
        SLOTS_PER_CTA * cta + (self.share(cta).0 < t * self.phases) as u32
    }

    /// The block tile `tile` (in row-major tile order) of an `m x n` C.
    #[inline(always)]
    fn block<T: Element, const BM: u32, const BN: u32>(&self, g: &Gemm<T>, tile: u32) -> Block {
        let tiles_n = self.tiles_n.max(1); // 0 only for an empty C, which never launches
        Block::new::<T, BM, BN>(g, (tile / tiles_n, tile % tiles_n))
    }
}

/// The launch of one wave of `ctas` = SMs x resident blocks: `whole + ctas` blocks (`whole`
/// if nothing is split), and where tiles are split the fix-up (`split * fixup_chunks`
/// blocks) and `SLOTS_PER_CTA * ctas` tiles of workspace.
#[cfg(not(target_arch = "nvptx64"))]
pub fn plan(input: &PlanInput) -> Result<Plan, Unplannable> {
    let (rows, cols) = input.tile;
    let mnk = input.mnk32();
    let ctas = (input.sms * input.per_sm).max(1);
    if !Schedule::fits(mnk, ctas, (rows, cols)) {
        let mnk = input.mnk;
        let count = Overflow::TilesAndPhases { ctas };
        return Err(Unplannable { mnk, count });
    }
    let s = Schedule::new(mnk, ctas, (rows, cols));
    let fixup = (s.split > 0).then(|| FixupLaunch {
        blocks: s.split * fixup_chunks((rows, cols)),
        threads: FIXUP_THREADS,
    });
    let workspace = match fixup {
        Some(_) => (SLOTS_PER_CTA * ctas) as usize * (rows * cols) as usize,
        None => 0,
    };
    let sharing = if s.split > 0 { ctas } else { 0 };
    let grid = (s.whole as usize + sharing as usize, 1, input.batch);
    Ok(Plan {
        ctas: Some(ctas),
        fixup,
        ..Plan::single(grid, workspace)
    })
}

/// The stream-K kernel on `BM x BN` block tiles (`(BM / 8) * (BN / 8)` threads), aligned
/// edge blocks on the unchecked `EDGE` path if `EDGES` (`async_copy::tile_product`).
/// Blocks `0..whole` compute one whole tile each, as `paired_lanes` does; blocks `whole..
/// whole + ctas` (which the GPU starts as the whole tiles' blocks finish, in the last
/// wave) each take one share of the split tiles' phases: the end of one tile and the start
/// of the next at most, so two pieces.
///
/// # Safety
/// As the GEMM entry points, plus: the grid is `whole + ctas` blocks (1D; `ctas =
/// g.p.ctas`, as passed to the fix-up), [`Schedule::fits`] holds; the workspace (`partials`)
/// has room for `SLOTS_PER_CTA * ctas * BM * BN` accumulators, 16-byte aligned.
#[inline(always)]
pub(crate) unsafe fn stream_k_tiled<T: Element, const BM: u32, const BN: u32, const EDGES: bool>(
    g: Gemm<T>,
) {
    let (a, b, _, m, n, k) = g.plain();
    let out = g.c_out();
    let (partials, ctas) = (g.workspace, g.p.ctas);
    type M = PairedLanes;
    let s = Schedule::new((m, n, k), ctas, (BM, BN));
    let me = M::coords::<BM, BN>(thread_idx_x());
    let write_c = |blk: Block| {
        // SAFETY: `epilogue_on`'s terms: C `m x n`, rows `ldc` apart (the entry points'); only
        // one block writes tile `blk` to C (its own block, or the one whose share covers a
        // split tile whole: `slot` None), and `me` (in the thread grid) its thread tile.
        move |acc: &ThreadTile<T::Acc>| unsafe {
            epilogue_on::<_, _, BM, BN, EDGES>(&out, acc, (m, n), blk, me)
        }
    };
    let block = block_idx_x();
    if block < s.whole {
        let blk = s.block::<T, BM, BN>(&g, block);
        let phases = Some((0, s.phases));
        let mnk = (m, n, k);
        // SAFETY: `tile_product`'s terms: the entry points' (this fn's contract; the launch's
        // `padded_stages(BK)`), phases `0..s.phases` = all of K, and the same arguments in
        // every thread (from `g` and the block index).
        unsafe {
            tile_product::<T, M, BM, BN, BK, 2, false, EDGES>(
                (a, b),
                mnk,
                blk,
                phases,
                write_c(blk),
            )
        };
        return;
    }
    // A share of the split phases: one or two pieces, each inside one tile.
    let cta = block - s.whole;
    let (mut i, end) = s.share(cta);
    while i < end {
        let (t, p0) = (i / s.split_phases(), i % s.split_phases());
        let p1 = s.phases.min(p0 + (end - i));
        let blk = s.block::<T, BM, BN>(&g, s.whole + t);
        // A part (not the whole tile) goes to the block's workspace slot, as a BM x BN
        // row-major tile (whole, even for an edge tile: the fix-up writes only what lies
        // inside C).
        let slot = (p1 - p0 < s.phases).then(|| s.slot(cta, t));
        let finish = |acc: &ThreadTile<T::Acc>| match slot {
            None => write_c(blk)(acc),
            // SAFETY: `slot < SLOTS_PER_CTA * ctas` (`cta < ctas`), so `dst` and its BM x BN
            // tile lie in the workspace (the contract), 16-byte aligned for the interior
            // epilogue's runs; the slot is this block's alone (`Schedule::slot`).
            Some(slot) => unsafe {
                let dst = partials.add(slot as usize * (BM * BN) as usize);
                let raw = COut::<T::Acc, T::Acc>::raw(dst, BN);
                epilogue_on::<_, _, BM, BN, EDGES>(&raw, acc, (BM, BN), Block::whole::<BN>(), me)
            },
        };
        // The first piece's last reads of shared memory are done before the second's stores.
        sync_threads();
        let phases = Some((p0, p1));
        // SAFETY: as above, phases `p0..p1` inside the tile's `0..s.phases`; the barrier just
        // passed ends the last piece's shared reads, as a second run needs.
        unsafe {
            tile_product::<T, M, BM, BN, BK, 2, false, EDGES>(
                (a, b),
                (m, n, k),
                blk,
                phases,
                finish,
            )
        };
        i += p1 - p0;
    }
}

/// Adds the parts of every shared split `BM x BN` tile in K order and writes them to C:
/// block `x` takes chunk `x % chunks` of split tile `x / chunks` ([`fixup_chunks`]).
///
/// # Safety
/// The workspace as written by the stream-K launch of `ctas` blocks on these tiles for
/// this shape, which finished before this launch; `c` is `m x n`; `FIXUP_THREADS` threads
/// per block. A and B are not read.
#[inline(always)]
pub(crate) unsafe fn fixup_tiled<T: Element, const BM: u32, const BN: u32>(g: Gemm<T>) {
    type A<T> = <T as Element>::Acc;
    let (_, _, _, m, n, k) = g.plain();
    let out = g.c_out();
    let (partials, ctas) = (g.workspace.cast_const(), g.p.ctas);
    let s = Schedule::new((m, n, k), ctas, (BM, BN));
    let chunks = fixup_chunks((BM, BN));
    let (t, chunk) = (block_idx_x() / chunks, block_idx_x() % chunks);
    if t >= s.split {
        return;
    }
    let (first, last) = s.holders(t);
    if first == last {
        return; // one block covered the tile and wrote C
    }
    let mut sum = [A::<T>::ZERO; FIXUP_PER_THREAD as usize];
    let at =
        |j: u32| chunk * (FIXUP_THREADS * FIXUP_PER_THREAD) + j * FIXUP_THREADS + thread_idx_x();
    // `FIXUP_GROUP` parts loaded before any is added (then added in K order): one part at a
    // time waited a round trip to memory per part, and a few-column product has ~16 parts
    // per tile (H200, f32 4096 x 16 x 4096 on 128 x 32 tiles: the fix-up 15.5 us of 93).
    let mut cta = first;
    while cta <= last {
        let mut parts = [[A::<T>::ZERO; FIXUP_PER_THREAD as usize]; FIXUP_GROUP as usize];
        let mut written = [false; FIXUP_GROUP as usize];
        for u in 0..FIXUP_GROUP {
            let (begin, end) = s.share(cta + u);
            // An empty share (fewer phases than blocks) wrote nothing.
            if cta + u <= last && begin != end {
                written[u as usize] = true;
                let base = s.slot(cta + u, t) as usize * (BM * BN) as usize;
                for j in 0..FIXUP_PER_THREAD {
                    // SAFETY: `at(j) < BM * BN` and `slot < SLOTS_PER_CTA * ctas`: inside the
                    // workspace, whose slot block `cta + u` of the stream-K launch wrote in
                    // full, that launch finished before this one (the contract).
                    parts[u as usize][j as usize] =
                        unsafe { load(partials, base + at(j) as usize) };
                }
            }
        }
        for u in 0..FIXUP_GROUP as usize {
            if written[u] {
                for j in 0..FIXUP_PER_THREAD as usize {
                    sum[j] = sum[j] + parts[u][j];
                }
            }
        }
        cta += FIXUP_GROUP;
    }
    let tile = s.whole + t;
    let tiles_n = s.tiles_n.max(1);
    let (row0, col0) = ((tile / tiles_n) * BM, (tile % tiles_n) * BN);
    for j in 0..FIXUP_PER_THREAD {
        let (row, col) = (row0 + at(j) / BN, col0 + at(j) % BN);
        if row < m && col < n {
            // SAFETY: `(row, col)` is inside C (tested; `m x n`, rows `ldc` apart: the
            // contract); this thread's element of its chunk, and the stream-K launch wrote
            // none of this shared tile to C.
            unsafe {
                out.put(
                    row as usize * out.ldc as usize + col as usize,
                    sum[j as usize],
                )
            };
        }
    }
}
