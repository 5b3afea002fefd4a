//! The warp-specialised TMA mainloop: a producer warpgroup (one of its threads) issues the
//! TMA copies of each stage, two consumer warpgroups wait on mbarriers, multiply with
//! `wgmma` and release the stage; `setmaxnreg` moves registers from the producer to the
//! consumers. Over one tile per block or, persistent, every `gridDim.x`-th tile of a
//! `TileOrder`, the pipeline running on
//! across tiles.
use crate::catalogue::PtxFact::{self, Barriers, Count, Has, Lacks, Lines};
use crate::catalogue::{
    Arch, Elem, Grid, KernelSpec, NARROW_C, Pack, PerAcc, Precision, PtxFacts, SIXTEEN_BIT, Shared,
    TensorMaps, Threads, Tile, box_rows,
};
use crate::device::shared::{SharedArena, shared_address};
use crate::device::thread::{block_idx_x, sync_threads, thread_idx_x};
use crate::device::tma::{self, MAP_BYTES};
use crate::device::wgmma;
use crate::device::{cluster, mbarrier};
use crate::element::{Element, Half, WgmmaInput};
use crate::parts::mma::fragments::Ldmatrix;
use crate::parts::mma::one_stage::one_stage_tile;
use crate::parts::schedule::tile_order::{TileOrder, Unit};
use crate::parts::wgmma::epilogue::{
    F32_C_PAIRS, NARROW_C_64, NARROW_C_128, NARROW_C_192, NARROW_C_256,
};
use crate::parts::wgmma::warpgroup::{
    A_STAGE, ATOM, BK, BM, BN, Descriptors, PANEL, STAGES, WarpgroupTile,
};
use crate::problem::Gemm;
pub(crate) const THREADS: u32 = 384;
/// Threads that arrive on an `empty` barrier: both consumer warpgroups.
pub(crate) const CONSUMERS: u32 = 256;

/// What the entries of a kernel on 128 x 256 tiles show besides [`TMA_PIPELINE`]: 16
/// `m64n256k16`, per stage A's box or two panels and B's four panels or box, and the barriers
/// (after the mbarriers' init, and the one-stage loop's two for each half of the tile where
/// TMA cannot read the operands; one half for a 16-bit C).
pub(crate) const TILES_256: &[PtxFacts] = &[
    PtxFacts::only(
        SIXTEEN_BIT,
        &[
            Barriers(5),
            Count("wgmma.mma_async.sync.aligned.m64n256k16.f32.{t}.{t}", 16),
            Count("cp.async.bulk.tensor", 8),
        ],
    ),
    PtxFacts::only(NARROW_C, &[Barriers(3)]),
    TMA_PIPELINE,
    F32_C_PAIRS,
    NARROW_C_256,
];
/// The same with the last wave split over K ([`SPLIT_TAIL`]; the epilogue's f32 pairs with
/// the ticket's shuffles).
pub(crate) const TILES_256_SPLIT: &[PtxFacts] = &[
    TILES_256[0],
    TILES_256[1],
    TILES_256[2],
    SPLIT_F32_C,
    TILES_256[4],
    SPLIT_TAIL,
];
/// ... on 128 x 192 tiles: 16 `m64n192k16`, B's three panels or box, and the one-stage
/// loop's barriers for a half of 128 columns and a tile of 64.
const TILES_192: &[PtxFacts] = &[
    PtxFacts::only(
        SIXTEEN_BIT,
        &[
            Barriers(5),
            Count("wgmma.mma_async.sync.aligned.m64n192k16.f32.{t}.{t}", 16),
            Count("cp.async.bulk.tensor", 7),
        ],
    ),
    PtxFacts::only(NARROW_C, &[Barriers(5)]),
    TMA_PIPELINE,
    F32_C_PAIRS,
    NARROW_C_192,
];
/// What the entries of a kernel on the narrower tiles show: the 16 `wgmma`s of the tile's
/// shape, its TMA copies (A's box or panels and B's panels), 3 barriers.
macro_rules! narrower_tiles {
    ($wgmma:literal, $copies:literal, $narrow_c:ident, $f32_c:expr $(, $split:expr)?) => {
        &[
            PtxFacts::all(&[Barriers(3)]),
            PtxFacts::only(
                SIXTEEN_BIT,
                &[Count($wgmma, 16), Count("cp.async.bulk.tensor", $copies)],
            ),
            TMA_PIPELINE,
            $f32_c,
            $narrow_c,
            $($split)?
        ]
    };
}
/// The same on 128 x 128 tiles: `m64n128k16`, two panels of B...
const TILES_128: &[PtxFacts] = narrower_tiles!(
    "wgmma.mma_async.sync.aligned.m64n128k16.f32.{t}.{t}",
    6,
    NARROW_C_128,
    F32_C_PAIRS
);
/// ... and on 128 x 64 tiles: `m64n64k16`, one panel of B.
const TILES_64: &[PtxFacts] = narrower_tiles!(
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.{t}.{t}",
    5,
    NARROW_C_64,
    F32_C_PAIRS
);
/// The same with the last wave split over K ([`SPLIT_TAIL`]).
const TILES_128_SPLIT: &[PtxFacts] = narrower_tiles!(
    "wgmma.mma_async.sync.aligned.m64n128k16.f32.{t}.{t}",
    6,
    NARROW_C_128,
    SPLIT_F32_C,
    SPLIT_TAIL
);
const TILES_64_SPLIT: &[PtxFacts] = narrower_tiles!(
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.{t}.{t}",
    5,
    NARROW_C_64,
    SPLIT_F32_C,
    SPLIT_TAIL
);
/// ... in clusters of two ([`warp_specialised_pairs`]): the tile's 16 `wgmma`s, the
/// one-stage loop's barriers (the mbarriers published by a cluster barrier instead), and
/// [`PAIR_PIPELINE`] for [`TMA_PIPELINE`].
const TILES_256_PAIRS: &[PtxFacts] = &[
    PtxFacts::only(
        SIXTEEN_BIT,
        &[
            Barriers(4),
            Count("wgmma.mma_async.sync.aligned.m64n256k16.f32.{t}.{t}", 16),
        ],
    ),
    PtxFacts::only(NARROW_C, &[Barriers(2)]),
    PAIR_PIPELINE,
    F32_C_PAIRS,
    NARROW_C_256,
];
const TILES_192_PAIRS: &[PtxFacts] = &[
    PtxFacts::only(
        SIXTEEN_BIT,
        &[
            Barriers(4),
            Count("wgmma.mma_async.sync.aligned.m64n192k16.f32.{t}.{t}", 16),
        ],
    ),
    PtxFacts::only(NARROW_C, &[Barriers(4)]),
    PAIR_PIPELINE,
    F32_C_PAIRS,
    NARROW_C_192,
];
/// ... in clusters of four ([`warp_specialised_quads`]): as in clusters of two.
const TILES_256_QUADS: &[PtxFacts] = TILES_256_PAIRS;
const TILES_192_QUADS: &[PtxFacts] = TILES_192_PAIRS;
/// What the entries of a kernel in clusters show: [`TMA_PIPELINE`]'s `wgmma`s and
/// registers, B copied by multicast, the stages released on the barriers of the blocks that
/// write them
/// (`mapa`, an arrival at a cluster address, released at CTA scope: no fence of the GPU in
/// the mainloop) and never on the block's own alone, and the cluster barriers.
const PAIR_PIPELINE: PtxFacts = PtxFacts::only(
    SIXTEEN_BIT,
    &[
        Count("wgmma.mma_async", 16),
        Has(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster",
        ),
        Has("mapa.shared::cluster.u32"),
        Has("mbarrier.arrive.shared::cluster.b64"),
        Lacks("mbarrier.arrive.release.cluster"),
        Has("barrier.cluster.arrive;"),
        Has("barrier.cluster.wait;"),
        Has("mbarrier.arrive.expect_tx.shared::cta.b64"),
        Has("mbarrier.try_wait.parity.shared::cta.b64"),
        Has("setmaxnreg.dec.sync.aligned.u32 40"),
        Has("setmaxnreg.inc.sync.aligned.u32 232"),
        Lacks("mbarrier.arrive.shared::cta.b64"),
        Lacks("fence.proxy.async"),
    ],
);
/// The entries of a split kernel with an f32 C: the epilogue's pairs without a shuffle, and
/// the 5 butterfly shuffles that hand a warp's ticket to its lanes.
const SPLIT_F32_C: PtxFacts = PtxFacts::only(SIXTEEN_BIT, &[Count("shfl.sync.bfly.b32", 5)]);
/// What a kernel whose last wave is split over K (`Grid::PersistentSplit`) shows besides:
/// the warps' tickets drawn with an acquire-release atomic, the other slices' planes read
/// back in 16-byte volatile loads, and nothing in local memory.
const SPLIT_TAIL_FACTS: &[PtxFact] = &[
    Has("atom.acq_rel.gpu.global.add.u32"),
    Has("ld.volatile.global.v4.b32"),
    Lacks(".local"),
];
const SPLIT_TAIL: PtxFacts = PtxFacts::only(SIXTEEN_BIT, SPLIT_TAIL_FACTS);

/// `wgmma` m64n256k8 on TF32 operands.
const TF32_N256: &str = "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32";
/// What a TF32 kernel's main entry shows: one barrier, 4 `wgmma` m64n256k8 with A from
/// registers, 16 shared loads of A's fragments, each rounded (`cvt.rna`), A's and B's TMA
/// copies, no proxy fence and no 16-bit instruction.
const TF32_MAIN: &[PtxFact] = &[
    Barriers(1),
    Count(TF32_N256, 4),
    Lines(&[TF32_N256, "}, {%r"], 4),
    Count("ld.shared.b32", 16),
    Count("cvt.rna.tf32.f32", 16),
    Lacks("fence.proxy.async"),
    Count("cp.async.bulk.tensor.3d", 2),
    Lacks("mma.sync"),
    Lacks("m64n256k16"),
];
/// ... its pack launch: one barrier, 16 roundings, nothing in local memory.
const TF32_PACK: PtxFacts =
    PtxFacts::second(&[Barriers(1), Count("cvt.rna.tf32.f32", 16), Lacks(".local")]);

/// The facts of [`spec_tf32`]'s entries, and on a split grid.
const TF32_FACTS: &[PtxFacts] = &[PtxFacts::all(TF32_MAIN), TF32_PACK];
const TF32_SPLIT_FACTS: &[PtxFacts] = &[
    PtxFacts::all(TF32_MAIN),
    PtxFacts::all(SPLIT_TAIL_FACTS),
    TF32_PACK,
];

/// The spec of a TF32 kernel on `grid` (`Grid::Persistent` or `Grid::PersistentSplit`):
/// [`spec`]'s 384 threads on 128 x 256 tiles in [`STAGES`] stages of TF32 elements (32 K a
/// stage), f32 only and only when asked, both operands through the maps of what the pack
/// launch `pack` writes (B^T K-major and rounded, and A where TMA cannot read it in place).
///
/// A launch that follows it gives [`warp_specialised`] on `f32` its contract, TF32 maps
/// always present.
pub(crate) const fn spec_tf32(
    name_file: (&'static str, &'static str),
    idea: &'static str,
    grid: Grid,
    pack: &'static str,
) -> KernelSpec {
    let bk = stage_k::<f32>();
    let facts = match grid {
        Grid::PersistentSplit => TF32_SPLIT_FACTS,
        _ => TF32_FACTS,
    };
    KernelSpec {
        shared: Shared::InputElements(STAGES * (BM * bk + bk * BN) + ATOM / 4 + 2 * 2 * STAGES),
        ..spec(name_file, idea, (BN, STAGES), grid)
    }
    .with_elements(&[Elem::F32])
    .with_precision(Precision::Tf32)
    .with_tma(TensorMaps::packed(
        (BM, BN, bk),
        Pack {
            name: pack,
            parts: 1,
            width: 4,
        },
    ))
    .with_ptx(facts)
}

/// The spec of a warp-specialised kernel on 128 x `cols` block tiles of 16-bit elements in
/// `stages` stages, on a grid of tiles or a persistent one: 384 threads (a producer and two
/// consumer warpgroups), one block per SM, A and B read through tensor maps, every form of
/// the product. The TF32 kernels change the elements, the stages and the maps.
///
/// A launch that follows it gives `warp_specialised` of the same width and stages (its
/// `PERSISTENT` as the grid says) what it needs: 384 threads, `stages_shared(cols, stages)`
/// bytes and, where the host wrote them, the tensor maps in the workspace.
pub const fn spec(
    name_file: (&'static str, &'static str),
    idea: &'static str,
    (cols, stages): (u32, u32),
    grid: Grid,
) -> KernelSpec {
    let tile = Tile::Fixed { rows: BM, cols };
    KernelSpec::new(
        name_file,
        idea,
        Arch::Sm90a,
        Threads::Fixed(THREADS, 1),
        tile,
    )
    .with_grid(grid)
    .with_shared(stages_shared(cols, stages))
    .with_blocks_per_sm(PerAcc {
        f32: Some(1),
        f64: None,
    })
    .with_elements(&[Elem::F16, Elem::Bf16])
    .on_tensor_cores()
    .with_tma(match grid {
        Grid::PersistentPairs => pair_maps(cols),
        Grid::PersistentQuads => quad_maps(cols),
        _ => tile_maps(cols),
    })
    .general()
    .with_ptx(match (cols, grid) {
        (256, Grid::PersistentPairs) => TILES_256_PAIRS,
        (_, Grid::PersistentPairs) => TILES_192_PAIRS,
        (256, Grid::PersistentQuads) => TILES_256_QUADS,
        (_, Grid::PersistentQuads) => TILES_192_QUADS,
        _ => facts(cols, matches!(grid, Grid::PersistentSplit)),
    })
}

/// [`spec`]'s PTX facts for a grid of single blocks.
const fn facts(cols: u32, split: bool) -> &'static [PtxFacts] {
    match (cols, split) {
        // (No kernel splits 128 x 192 tiles.)
        (256, false) => TILES_256,
        (256, true) => TILES_256_SPLIT,
        (192, _) => TILES_192,
        (128, false) => TILES_128,
        (128, true) => TILES_128_SPLIT,
        (_, false) => TILES_64,
        (_, true) => TILES_64_SPLIT,
    }
}

/// What every warp-specialised kernel's entries with an f32 C show: 16 `wgmma`s (4 K steps
/// of 16 in each of the four mainloops, one per pair of transposes, whose immediates say
/// which: a row-major A is K-major, 0; a row-major B MN-major, 1), TMA copies on mbarriers,
/// registers moved between the warpgroups, and no `cp.async` or proxy fence.
pub const TMA_PIPELINE: PtxFacts = PtxFacts::only(
    SIXTEEN_BIT,
    &[
        Count("wgmma.mma_async", 16),
        Count("%wg_d, 1, 1, 0, 1;", 4),
        Count("%wg_d, 1, 1, 0, 0;", 4),
        Count("%wg_d, 1, 1, 1, 1;", 4),
        Count("%wg_d, 1, 1, 1, 0;", 4),
        Has("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"),
        Has("mbarrier.init.shared::cta.b64"),
        Has("fence.mbarrier_init.release.cluster"),
        Has("mbarrier.arrive.expect_tx.shared::cta.b64"),
        Has("mbarrier.arrive.shared::cta.b64"),
        Has("mbarrier.try_wait.parity.shared::cta.b64"),
        Has("setmaxnreg.dec.sync.aligned.u32 40"),
        Has("setmaxnreg.inc.sync.aligned.u32 232"),
        Has("wgmma.wait_group.sync.aligned 1"),
        Lacks("cp.async.cg"),
        Lacks("fence.proxy.async"),
    ],
);

/// Shared memory of `stages` stages of 128 x `cols` block tiles of 16-bit elements (A's
/// 128 x 64 and B's 64 x `cols`), 1 KiB to align them and their 2 `stages` mbarriers.
pub(crate) const fn stages_shared(cols: u32, stages: u32) -> Shared {
    Shared::InputElements(stages * (BM * BK + BK * cols) + ATOM / 2 + 4 * 2 * stages)
}

/// TMA boxes of 128 x `cols` block tiles: A as 128 x 64 K-major boxes (64 x 64 where C has
/// at most 64 rows: [`TensorMaps::a_box_rows`]) or 64 x 64 panels, B as 64 x 64 panels or
/// one K-major box of `cols` rows.
pub(crate) const fn tile_maps(cols: u32) -> TensorMaps {
    TensorMaps {
        a_box: (BM, BK),
        b_box: (BK, 64),
        a_t_box: (BK, 64),
        b_t_box: (cols, BK),
        pack: None,
        otherwise: None,
    }
}

/// [`tile_maps`] for [`warp_specialised_pairs`]: a transposed B in boxes of half its rows,
/// one from each block of the pair.
pub(crate) const fn pair_maps(cols: u32) -> TensorMaps {
    TensorMaps {
        b_t_box: (cols / 2, BK),
        ..tile_maps(cols)
    }
}

/// [`pair_maps`] for [`warp_specialised_quads`]: A in K-major boxes of half its rows too,
/// one from each block of a row of the square.
pub(crate) const fn quad_maps(cols: u32) -> TensorMaps {
    TensorMaps {
        a_box: (BM / 2, BK),
        ..pair_maps(cols)
    }
}

/// K elements of a stage: one 128-byte row of each operand (64 16-bit elements, 32 TF32).
#[inline(always)]
pub(crate) const fn stage_k<T>() -> u32 {
    128 / size_of::<T>() as u32
}

/// The warp-specialised TMA kernel over the tiles of a [`TileOrder`]: one tile per block,
/// or (`PERSISTENT`) every `gridDim.x`-th tile in grouped order, the pipeline running on
/// across tiles so that the producer loads the next tile while the consumers store one.
/// Block tiles are 128 x `W::COLS` (each consumer warpgroup's accumulators a `W`), in `N`
/// stages.
///
/// Every form of the product: the tensor maps carry leading dimensions and the batch (a
/// third dimension; a shared operand is read from plane 0), a transposed operand is loaded
/// in the other orientation and multiplied with the other transpose immediate, and the
/// epilogue applies alpha and beta at C's leading dimension.
///
/// `SPLIT` (persistent only): the last wave's tiles cut into `Problem::ctas` slices of K
/// as the launch planned them (`split_tail`), each consumer warp's part of a slice ended by
/// [`WarpgroupTile::finish_slice`] after the tensor maps in the workspace.
///
/// Elements of 4 bytes (f32) are TF32, both operands K-major with maps always present (the
/// host packs B^T so, and A where TMA cannot read it in place: `wgmma_tf32`), A multiplied
/// from registers ([`mainloop_tf32`]).
///
/// # Safety
/// As a kernel's entry points, on a launch as [`spec`] says: 384 threads, the spec's shared
/// bytes, and, where TMA can read A and B (always for TF32), their tensor maps in the
/// workspace.
#[inline(always)]
pub(crate) unsafe fn warp_specialised<
    T: StageInput,
    const PERSISTENT: bool,
    const SPLIT: bool,
    W: WarpgroupTile,
    const N: u32,
>(
    gemm: Gemm<T>,
) {
    // SAFETY: this contract.
    unsafe { body::<T, PERSISTENT, SPLIT, 1, W, N>(gemm) }
}

/// [`warp_specialised`], persistent, on a grid of clusters of two blocks
/// ([`TileOrder::of_clusters`]): the two blocks of a cluster compute tiles one above the
/// other, which read the same B, and each block's producer copies half of each stage's B
/// into both blocks' shared memory (TMA multicast). Each block issues half the copies of B,
/// and a stage is free once both blocks' consumers are done with it ([`Pipe::release`]).
///
/// # Safety
/// As [`warp_specialised`], launched in clusters of two blocks (`Grid::PersistentPairs`),
/// with B's map for a transposed B in boxes of `W::COLS / 2` rows ([`pair_maps`]).
#[inline(always)]
pub(crate) unsafe fn warp_specialised_pairs<T: Half, W: WarpgroupTile, const N: u32>(
    gemm: Gemm<T>,
) {
    // SAFETY: this contract.
    unsafe { body::<T, true, false, 2, W, N>(gemm) }
}

/// [`warp_specialised_pairs`] on a grid of clusters of four blocks on 2 x 2 tiles
/// ([`TileOrder::of_clusters`]): the blocks of a column of the square read the same B, and
/// those of a row the same A, and each block's producer copies half of each stage's A into
/// its row's two blocks and half of its B into its column's two. A stage is free once the
/// consumers of the three blocks that write it (the block, its row partner and its column
/// partner) are done with it.
///
/// # Safety
/// As [`warp_specialised`], launched in clusters of four blocks (`Grid::PersistentQuads`),
/// with A's map for a row-major A in boxes of 64 rows and B's as [`pair_maps`]
/// ([`quad_maps`]).
#[inline(always)]
pub(crate) unsafe fn warp_specialised_quads<T: Half, W: WarpgroupTile, const N: u32>(
    gemm: Gemm<T>,
) {
    // SAFETY: this contract.
    unsafe { body::<T, true, false, 4, W, N>(gemm) }
}

/// [`warp_specialised`] and, in clusters of `CLUSTER` blocks, [`warp_specialised_pairs`]
/// and [`warp_specialised_quads`].
///
/// # Safety
/// As those.
#[inline(always)]
unsafe fn body<
    T: StageInput,
    const PERSISTENT: bool,
    const SPLIT: bool,
    const CLUSTER: u32,
    W: WarpgroupTile,
    const N: u32,
>(
    gemm: Gemm<T>,
) {
    let (_, _, _, m, n, k) = gemm.plain();
    let order = match CLUSTER {
        1 => TileOrder::of_width(PERSISTENT, (m, n), gemm.p.batch, W::COLS),
        _ => TileOrder::of_clusters((m, n), gemm.p.batch, W::COLS, square(CLUSTER)),
    };
    // SAFETY: `without_tma`'s contract is this one's.
    if unsafe { T::without_tma::<W>(&gemm, order) } {
        return;
    }
    let order = if SPLIT {
        order.split(gemm.p.ctas)
    } else {
        order
    };
    let tid = thread_idx_x();
    // SAFETY: the launch provides `stages_shared` (the contract's spec): N stages of A and B, the
    // slack for `aligned(ATOM, ..)` and the 2 N mbarriers, the carves below.
    let mut arena = unsafe { SharedArena::<u8>::launch_sized() };
    let a_all = arena.aligned(ATOM, N * A_STAGE);
    let b_all = arena.aligned(ATOM, N * W::B_STAGE);
    let bars = StageBarriers(arena.aligned(8, 2 * N * 8).cast::<u64>());
    let pipe = Pipe {
        a_all,
        b_all,
        bars,
        cluster: CLUSTER,
    };
    if tid == 0 {
        // SAFETY: `init`'s points: `bars` is `aligned(8, 2 N 8)`, 2 N 8-byte aligned words of
        // shared memory used only as these mbarriers; one thread, before the barrier below.
        unsafe { bars.init(releases(CLUSTER)) };
        mbarrier::fence_init();
    }
    // The barriers are ready (a cluster's in every block, before any copies into another).
    if CLUSTER > 1 {
        cluster::sync_cluster();
    } else {
        sync_threads();
    }
    let phases = k.div_ceil(stage_k::<T>());
    let strides = gemm.p.strides();
    // The block's rank in its cluster (clusters along x).
    let rank = (CLUSTER > 1).then(|| block_idx_x() % CLUSTER);
    // SAFETY: `produce`'s points: the workspace holds A's and B's maps for this form (TMA reads
    // them, tested above; TF32's always have them); the barriers were initialised and published by
    // the barrier above; a cluster launch is in clusters of CLUSTER, the maps as `pair_maps` or
    // `quad_maps`.
    if !consumes(tid, || unsafe {
        produce::<T, W, N, CLUSTER>(&gemm, pipe, order, phases, rank)
    }) {
        if CLUSTER > 1 {
            // Neither block returns while the other may still copy into it or arrive on its
            // barriers.
            cluster::sync_cluster();
        }
        return;
    }
    let t = tid - 128;
    let warpgroup = t / 128;
    let mut it = 0;
    // The split's counters and planes follow the tensor maps.
    let split = gemm
        .workspace
        .cast::<f32>()
        .wrapping_add(TensorMaps::BYTES / size_of::<f32>());
    for i in 0..order.len() {
        let unit = order.unit(i, phases);
        let (z, row0, col0) = unit.tile;
        let out = order.product(&gemm, z).c_out();
        let at = (row0 + warpgroup * 64, col0);
        // (The orientation is chosen per tile and the epilogue follows: one copy of it.)
        let run = (pipe, warpgroup, unit.phases.1 - unit.phases.0, &mut it);
        // SAFETY: `consume`'s point: `produce` fills the stages for the same `order` and `phases`,
        // counted by `it` as here, loading A and B in the orientation it multiplies.
        let mut acc: W = unsafe { T::consume::<W, N>(run, (strides.a_t, strides.b_t)) };
        if let (true, Some(slice)) = (SPLIT, unit.slice) {
            let warp = t / 32;
            // A warp whose rows lie wholly below C takes no part, in any slice.
            if row0 + 16 * warp >= m {
                continue;
            }
            // SAFETY: `finish_slice`'s points: the whole warp is here (`warp` is uniform in it);
            // `split` is the workspace after the maps, which holds the split's counters (zero at
            // launch) and planes for this launch's `Problem::ctas` (`split_tail::plan`, the
            // launch rules of a split kernel's spec); rows `16 warp..` of this tile are this
            // warp's in every slice.
            if !unsafe { acc.finish_slice(split, slice, warp, t % 32) } {
                continue;
            }
        }
        // SAFETY: `epilogue`'s points: C of product z, m x n at ldc (the entry points' contract);
        // rows at.0 .. + 64 of this tile are this warpgroup's only; all its threads get here.
        unsafe { acc.store::<T>(&out, (m, n), at, t % 128) };
    }
    if CLUSTER > 1 {
        // (As the producer's above.)
        cluster::sync_cluster();
    }
}

/// What a consumer warpgroup multiplies, by element type: 16-bit operands in either
/// orientation from shared memory (and, where TMA cannot read them, a one-stage loop
/// without it), f32 as TF32 with A from registers, both operands K-major in maps the host
/// always makes (it packs them).
pub(crate) trait StageInput: WgmmaInput {
    /// Runs the whole product without TMA where TMA cannot read it, and says whether it did.
    ///
    /// # Safety
    /// As [`warp_specialised`], whose launch this is.
    unsafe fn without_tma<W: WarpgroupTile>(gemm: &Gemm<Self>, order: TileOrder) -> bool;
    /// A consumer warpgroup's mainloop over one tile, for A and B transposed as `(a_t, b_t)`.
    ///
    /// # Safety
    /// As [`mainloop`].
    unsafe fn consume<W: WarpgroupTile, const N: u32>(
        run: (Pipe<N>, u32, u32, &mut u32),
        transposed: (bool, bool),
    ) -> W;
}

impl<T: Half> StageInput for T {
    #[inline(always)]
    unsafe fn without_tma<W: WarpgroupTile>(gemm: &Gemm<T>, order: TileOrder) -> bool {
        let (a, b, ..) = gemm.plain();
        if tma::reads(&gemm.p, (a as u64, b as u64), size_of::<T>() as u64) {
            return false;
        }
        // Dense, row-major `C = A B` only (the host makes maps for every other form). In
        // halves of 128 columns and a last 64-column tile where the width leaves one: 64
        // accumulators a thread, which fit the launch bounds' 168 registers (the whole
        // 256-column tile's 128 spilled).
        for i in 0..order.len() {
            let (z, row0, col0) = order.at(i);
            let product = order.product(gemm, z);
            if W::COLS % 128 == 64 {
                let at = (row0, col0 + W::COLS - 64);
                // SAFETY: `one_stage_tile`'s points: dense row-major operands (the host makes maps
                // for every other form); 384 threads; f16/bf16; the shared bytes hold its stage;
                // the branches are launch-uniform, so every thread is here.
                unsafe { one_stage_tile::<T, Ldmatrix, 64, 2>(product, at) };
            }
            for half in 0..W::COLS / 128 {
                let at = (row0, col0 + half * 128);
                // SAFETY: as above, on a 128-wide half, whose one stage the spec's shared bytes
                // hold too.
                unsafe { one_stage_tile::<T, Ldmatrix, { BN / 2 }, 4>(product, at) };
            }
        }
        true
    }

    #[inline(always)]
    unsafe fn consume<W: WarpgroupTile, const N: u32>(
        run: (Pipe<N>, u32, u32, &mut u32),
        transposed: (bool, bool),
    ) -> W {
        // A row-major A is K-major, a row-major B MN-major; each transpose swaps its operand.
        // SAFETY: `mainloop`'s contract is this one's, each arm the orientation `produce`
        // loaded.
        unsafe {
            match transposed {
                (false, false) => mainloop::<T, false, true, W, N>(run),
                (false, true) => mainloop::<T, false, false, W, N>(run),
                (true, false) => mainloop::<T, true, true, W, N>(run),
                (true, true) => mainloop::<T, true, false, W, N>(run),
            }
        }
    }
}

impl StageInput for f32 {
    #[inline(always)]
    unsafe fn without_tma<W: WarpgroupTile>(_: &Gemm<f32>, _: TileOrder) -> bool {
        false
    }

    #[inline(always)]
    unsafe fn consume<W: WarpgroupTile, const N: u32>(
        run: (Pipe<N>, u32, u32, &mut u32),
        _: (bool, bool),
    ) -> W {
        // SAFETY: `mainloop_tf32`'s contract is this one's: A and B^T, both K-major.
        W::from_tf32(unsafe { mainloop_tf32(run) })
    }
}

/// The `N` stages and their mbarriers in shared memory.
#[derive(Clone, Copy)]
pub(crate) struct Pipe<const N: u32> {
    pub(crate) a_all: *mut u8,
    pub(crate) b_all: *mut u8,
    pub(crate) bars: StageBarriers<N>,
    /// Blocks of the cluster (1: none) whose producers multicast into each other
    /// ([`warp_specialised_pairs`], [`warp_specialised_quads`]): a stage is free once the
    /// consumers of every block that writes it are done with it.
    pub(crate) cluster: u32,
}

/// Tiles down and across of the square of a cluster of `blocks` blocks (two: one above the
/// other; four: 2 x 2).
#[inline(always)]
pub(crate) const fn square(blocks: u32) -> (u32, u32) {
    match blocks {
        4 => (2, 2),
        _ => (blocks, 1),
    }
}

/// `empty` arrivals that free a stage ([`Pipe::release`]): every consumer thread of the
/// block, or in a cluster each consumer warp of the blocks that write it (both of a pair;
/// of a square the block, its row partner and its column partner).
#[inline(always)]
pub(crate) const fn releases(cluster: u32) -> u32 {
    match cluster {
        1 => CONSUMERS,
        2 => 2 * CONSUMERS / 32,
        _ => 3 * CONSUMERS / 32,
    }
}

impl<const N: u32> Pipe<N> {
    /// This consumer thread is done with stage `s`: it arrives on `empty(s)`, or in a
    /// cluster its warp's first lane arrives for the warp on `empty(s)` of each block that
    /// writes the stage: rank `r` and `r ^ 1` (a pair, or a column of the square), and of a
    /// square `r ^ 2` (its row).
    ///
    /// # Safety
    /// `empty(s)` initialised and published (in every block of a cluster, which are alive);
    /// the thread's (in a cluster, its warp's) reads of stage `s` are complete.
    #[inline(always)]
    pub(crate) unsafe fn release(&self, s: u32) {
        let empty = self.bars.empty(s);
        if self.cluster == 1 {
            // SAFETY: this contract.
            unsafe { mbarrier::arrive(empty) };
        } else if thread_idx_x().is_multiple_of(32) {
            let me = block_idx_x() % self.cluster;
            for flip in 0..self.cluster.min(3) {
                // SAFETY: this contract, in block `me ^ flip` of the cluster (0, 1, 2: the
                // block, its column partner, in a square its row partner).
                unsafe { mbarrier::arrive_cluster(empty, me ^ flip) };
            }
        }
    }
}

/// The block's roles: the first warpgroup gives its registers away (down to 40) and its
/// thread 0 runs `produce`, then it is done (false); the two others take them (up to 232)
/// and consume (true: thread `tid - 128` of the consumers).
#[inline(always)]
pub(crate) fn consumes(tid: u32, produce: impl FnOnce()) -> bool {
    if tid < 128 {
        wgmma::release_registers::<40>();
        if tid == 0 {
            produce();
        }
        return false;
    }
    wgmma::claim_registers::<232>();
    true
}

/// The mbarriers of a ring of `N` stages in shared memory: `full[s]`, then `empty[s]`.
#[derive(Clone, Copy)]
pub(crate) struct StageBarriers<const N: u32>(pub(crate) *mut u64);

impl<const N: u32> StageBarriers<N> {
    /// Completes when stage `s`'s bytes have landed (the producer's one arrival, with the
    /// bytes it expects).
    #[inline(always)]
    pub(crate) fn full(&self, s: u32) -> *mut u64 {
        self.0.wrapping_add(s as usize)
    }

    /// Completes when the `consumers` of [`StageBarriers::init`] are done with stage `s`.
    #[inline(always)]
    pub(crate) fn empty(&self, s: u32) -> *mut u64 {
        self.0.wrapping_add((N + s) as usize)
    }

    /// Initialises them (one thread, before the block barrier that publishes them).
    ///
    /// # Safety
    /// `2 N` 8-byte aligned mbarriers lie at the pointer, used for nothing else.
    #[inline(always)]
    pub(crate) unsafe fn init(&self, consumers: u32) {
        for s in 0..N {
            // SAFETY: `init`'s points: full(s) and empty(s), s < N, are two of the 2 N aligned
            // mbarrier words at the pointer (this contract), used for nothing else.
            unsafe {
                mbarrier::init(self.full(s), 1);
                mbarrier::init(self.empty(s), consumers);
            }
        }
    }
}

/// The producer (one thread): per phase, A's 128 x 64 and B's 64 x `W::COLS` of the stage,
/// each as stored: a row-major A as one K-major box, a transposed one as two 64-row panels;
/// a row-major B as 64-column panels, a transposed one as one K-major box of `W::COLS` rows.
/// In a cluster (`rank` of `CLUSTER` blocks), half of B's panels, or a box of half its rows,
/// into both blocks of the square's column; of a square, half of A's rows too (a panel, or a
/// box of 64 rows) into both blocks of its row. The stage's `full` expects all of A and B,
/// part from the other blocks.
///
/// # Safety
/// The workspace holds A's and B's tensor maps for `gemm`'s form (in a cluster a transposed
/// B's in boxes of `W::COLS / 2` rows, of a square a row-major A's in boxes of 64 rows); the
/// barriers are initialised (a cluster's in every block, published by a cluster barrier, and
/// they are launched as a cluster of `CLUSTER`).
#[inline(always)]
unsafe fn produce<T: Element, W: WarpgroupTile, const N: u32, const CLUSTER: u32>(
    gemm: &Gemm<T>,
    pipe: Pipe<N>,
    order: TileOrder,
    phases: u32,
    rank: Option<u32>,
) {
    let maps = gemm.workspace.cast::<u8>().cast_const();
    let (a_map, b_map) = (maps, maps.wrapping_add(MAP_BYTES));
    let strides = gemm.p.strides();
    // A shared operand (batch stride 0) has one plane.
    let plane = |stride: u64, z: u32| if stride == 0 { 0 } else { z };
    // No copy of A's rows wholly below C: where C has at most 64 rows, A's box has 64
    // (`TensorMaps::a_box_rows`). The consumer warpgroup of rows not copied multiplies what
    // the stage last held there, and the epilogue stores none of it.
    let a_rows = box_rows(BM, gemm.p.m);
    // Phases issued so far, over all tiles: stage `it % N`, round `it / N`.
    let mut it = 0;
    for i in 0..order.len() {
        let Unit {
            tile: (z, row0, col0),
            phases: (first, end),
            ..
        } = order.unit(i, phases);
        let (za, zb) = (
            plane(gemm.p.batch_stride_a, z),
            plane(gemm.p.batch_stride_b, z),
        );
        // A transposed: its second panel of 64 rows is left out where it lies below C (see
        // `a_rows`).
        let a_halves = if row0 + 64 < gemm.p.m { BM / 64 } else { 1 };
        // A square's row shares A in halves (panels, or boxes of 64 rows), left out alike.
        let a_bytes = match (!T::IS_ACC && strides.a_t) || CLUSTER == 4 {
            true => a_halves * PANEL,
            false => a_rows * 128,
        };
        for phase in first..end {
            let s = it % N;
            let full = pipe.bars.full(s);
            if it >= N {
                // The consumers are done with this stage's previous round.
                // SAFETY: `wait`'s point: empty(s) was initialised and published (this contract).
                unsafe { mbarrier::wait(pipe.bars.empty(s), (it / N - 1) % 2) };
            }
            let k0 = phase * stage_k::<T>();
            let a_s = pipe.a_all.wrapping_add((s * A_STAGE) as usize);
            let b_s = pipe.b_all.wrapping_add((s * W::B_STAGE) as usize);
            let panel = |base: *mut u8, p: u32| base.wrapping_add((p * PANEL) as usize);
            // SAFETY: `full` initialised; `load_3d`: the maps in the workspace (the contract, A's
            // box `a_rows` rows as the host made it, `TensorMaps::a_box_rows`, or 64 of a
            // square's); a_s, b_s, their 8 KiB panels 1024-aligned in free stage s; `full` expects
            // the bytes of the copies issued here and by the cluster's other blocks into this one
            // (`a_bytes`: A's box of `a_rows` 128-byte rows, or its `a_halves` panels; B_STAGE),
            // and the consumers read them only after waiting on it; a multicast lands at the
            // same offsets in blocks whose stage s is free too (`Pipe::release`).
            unsafe {
                mbarrier::arrive_expect_tx(full, a_bytes + W::B_STAGE);
                // (TF32: A and B^T, as packed.)
                if let (4, Some(r)) = (CLUSTER, rank) {
                    // A square: this block's half of A (panel or 64 rows `r / 2`), into both
                    // blocks of its row (ranks `r % 2` and `r % 2 + 2`).
                    let (p, row_mask) = (r / 2, 0b101u16 << (r % 2));
                    if p < a_halves {
                        let at = match strides.a_t {
                            true => (row0 + 64 * p, k0, za),
                            false => (k0, row0 + 64 * p, za),
                        };
                        tma::load_3d_multicast(panel(a_s, p), a_map, at, full, row_mask);
                    }
                } else if !T::IS_ACC && strides.a_t {
                    for p in 0..BM / 64 {
                        if p < a_halves {
                            tma::load_3d(panel(a_s, p), a_map, (row0 + 64 * p, k0, za), full);
                        }
                    }
                } else {
                    tma::load_3d(a_s, a_map, (k0, row0, za), full);
                }
                // In a cluster: the block's half of B (`r % 2`), into both blocks of its column
                // of the square (ranks `r / 2 * 2` and the next).
                let part = rank.map(|r| (r % 2, 0b11u16 << (r / 2 * 2)));
                match part {
                    None if T::IS_ACC || strides.b_t => {
                        tma::load_3d(b_s, b_map, (k0, col0, zb), full)
                    }
                    None => {
                        for p in 0..W::COLS / 64 {
                            tma::load_3d(panel(b_s, p), b_map, (col0 + 64 * p, k0, zb), full);
                        }
                    }
                    Some((half, column)) if strides.b_t => {
                        let rows = half * W::COLS / 2;
                        let to = b_s.wrapping_add((rows * 128) as usize);
                        tma::load_3d_multicast(to, b_map, (k0, col0 + rows, zb), full, column);
                    }
                    Some((half, column)) => {
                        let panels = W::COLS / 64;
                        for p in half * panels / 2..(half + 1) * panels / 2 {
                            let at = (col0 + 64 * p, k0, zb);
                            tma::load_3d_multicast(panel(b_s, p), b_map, at, full, column);
                        }
                    }
                }
            }
            it += 1;
        }
    }
}

/// TF32's consumer mainloop: [`mainloop`]'s, with A from registers. TMA copies the caller's
/// A as it lies (`wgmma_tf32`), and `wgmma` would truncate it from shared memory, so each
/// warp loads its fragments and rounds them to nearest on the way ([`tf32_fragments`]).
///
/// `wgmma` reads its A registers asynchronously: they must not be overwritten before a
/// `wait_group` retires it, and the compiler does not know that (the next stage's loads
/// landed in them while the last stage's `wgmma`s ran: every result wrong, H200). So each
/// stage is two groups, K steps 0-1 and 2-3, each with its own fragments, and a group's
/// fragments are loaded only after the same half of the last stage retired; the values
/// that a group in flight reads stay alive until the wait that retires it
/// ([`wgmma::keep_alive`]), which keeps the allocator from giving their registers to the
/// next loads.
///
/// Why not rounded in shared memory: in place (stores, `fence.proxy.async`, a barrier), in
/// the consumers or in the producer warpgroup, it made `wgmma_tf32` 7-30% slower at 4096^3
/// and 8192^3 (H200), more than packing A costs.
///
/// # Safety
/// As [`mainloop`].
#[inline(always)]
unsafe fn mainloop_tf32<const N: u32>(
    (pipe, warpgroup, phases, it): (Pipe<N>, u32, u32, &mut u32),
) -> [f32; 128] {
    let descriptors = Descriptors::<false, false>::of(pipe.a_all, pipe.b_all, warpgroup);
    // This warp's 16 rows of the warpgroup's A in stage 0.
    let (warp, lane) = (thread_idx_x() / 32 % 4, thread_idx_x() % 32);
    let rows = shared_address(pipe.a_all) + warpgroup * PANEL + warp * 16 * 128;
    let mut acc = [0.0f32; 128];
    // Half `half` of stage `s`, after the wait that retires the same half of the last stage
    // and keeps its fragments (`last`) alive until then; returns this half's fragments. (Two
    // calls, not a loop: a loop over the halves, not unrolled, put both halves' fragments
    // in the same registers.)
    // `release`: the last stage, whose halves are then both done (its stage free).
    let half = |acc: &mut [f32; 128], s: u32, half: u32, last, release: Option<u32>| {
        wgmma::wait_group::<1>(acc);
        wgmma::keep_alive(&last);
        if let Some(stage) = release {
            // SAFETY: `arrive`'s point: empty(stage) initialised and published before the roles
            // split; the `wait_group::<1>` above retired both halves of that stage, so it is free.
            unsafe { mbarrier::arrive(pipe.bars.empty(stage)) };
        }
        // SAFETY: `tf32_fragments`' point: `rows + s A_STAGE` is this warp's 16 rows of stage s's A
        // in the arena, 1024-aligned (a_all, PANEL, 2048 and A_STAGE are multiples).
        let a = unsafe { tf32_fragments(rows + s * A_STAGE, lane, half) };
        // SAFETY: `multiply_tf32_rs`'s points: stage s is complete and visible (the loop below
        // waited on full(s)); all 128 threads of the warpgroup run this closure alike.
        unsafe { descriptors.multiply_tf32_rs(acc, s, 2 * half, a) };
        a
    };
    // The fragments of the last stage's two halves (of no stage at first).
    let (mut last0, mut last1) = ([[0u32; 4]; 2], [[0u32; 4]; 2]);
    for phase in 0..phases {
        let s = *it % N;
        // SAFETY: `wait`'s point: full(s) initialised and published before the roles split.
        unsafe { mbarrier::wait(pipe.bars.full(s), (*it / N) % 2) };
        last0 = half(&mut acc, s, 0, last0, None);
        let last_stage = (phase > 0).then(|| (*it - 1) % N);
        last1 = half(&mut acc, s, 1, last1, last_stage);
        *it += 1;
    }
    wgmma::wait_group::<0>(&mut acc);
    wgmma::keep_alive(&last0);
    wgmma::keep_alive(&last1);
    if phases > 0 {
        // SAFETY: as above, the last stage's empty, after `wait_group::<0>` retired its batch.
        unsafe { mbarrier::arrive(pipe.bars.empty((*it - 1) % N)) };
    }
    acc
}

/// A warp's TF32 A fragments of half a stage (K steps `2 half` and `2 half + 1`), rounded
/// to nearest (`wgmma::load_tf32`), for `wgmma::m64n256k8_tf32_rs`: its 16 rows at shared
/// address `rows` (128-byte rows, 128-byte swizzled as TMA wrote them: 16-byte chunk `c` of
/// row `r` at `c ^ (r % 8)`), K step `j`'s elements of lane (g, t) at columns `8 j + t` and
/// `8 j + t + 4` of rows g and g + 8. A warp's 32 loads of one register fall in 32 banks
/// (8 rows, 8 chunks).
///
/// # Safety
/// `rows` is inside the block's shared memory, a multiple of 1024 (the swizzle's atom).
#[inline(always)]
unsafe fn tf32_fragments(rows: u32, lane: u32, half: u32) -> [[u32; 4]; 2] {
    let (g, tq) = (lane / 4, lane % 4);
    let at = |row: u32, c: u32| rows + row * 128 + ((c ^ g) * 16) + tq * 4;
    let mut a = [[0u32; 4]; 2];
    for (j, a) in a.iter_mut().enumerate() {
        let c = 2 * (2 * half + j as u32);
        // SAFETY: `load_tf32`'s point: rows g, g + 8 < 16 of 128 bytes from `rows`, chunk c ^ g <
        // 8, tq 4 bytes in: 4-aligned and inside the warp's 2 KiB at `rows` (this contract).
        *a = unsafe {
            [
                wgmma::load_tf32(at(g, c)),
                wgmma::load_tf32(at(g + 8, c)),
                wgmma::load_tf32(at(g, c + 1)),
                wgmma::load_tf32(at(g + 8, c + 1)),
            ]
        };
    }
    a
}

/// A consumer warpgroup's mainloop over one tile: wait for each stage, multiply it (A and
/// B MN-major as `A_MN` and `B_MN` say) and release it; `it` counts the phases consumed
/// over all tiles. Returns the tile's accumulators.
///
/// # Safety
/// The producer fills the stages as [`produce`] does, for the same tiles.
#[inline(always)]
unsafe fn mainloop<
    T: WgmmaInput,
    const A_MN: bool,
    const B_MN: bool,
    W: WarpgroupTile,
    const N: u32,
>(
    (pipe, warpgroup, phases, it): (Pipe<N>, u32, u32, &mut u32),
) -> W {
    let descriptors = Descriptors::<A_MN, B_MN>::of(pipe.a_all, pipe.b_all, warpgroup);
    let mut acc = W::ZERO;
    for phase in 0..phases {
        let s = *it % N;
        // SAFETY: `wait`: full(s) initialised and published (the contract); `multiply`: stage s is
        // then complete and visible; the whole warpgroup runs it; kept until a wait retires it.
        unsafe {
            mbarrier::wait(pipe.bars.full(s), (*it / N) % 2);
            descriptors.multiply::<T, _>(&mut acc, s);
        }
        // The previous phase's wgmmas are done: its stage is free.
        wgmma::wait_group::<1>(&mut acc);
        if phase > 0 {
            // SAFETY: `release`'s point: empty initialised and published; `wait_group::<1>` retired
            // the previous phase's batch (the warp's, converged), so its stage is free.
            unsafe { pipe.release((*it - 1) % N) };
        }
        *it += 1;
    }
    wgmma::wait_group::<0>(&mut acc);
    if phases > 0 {
        // SAFETY: as above, after `wait_group::<0>` retired the last batch.
        unsafe { pipe.release((*it - 1) % N) };
    }
    acc
}
