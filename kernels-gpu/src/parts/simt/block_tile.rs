//! The block tile shared by the vectorized kernels (`vectorized`, `double_buffered`,
//! `warp_tiled`, ...): its stage layout in shared memory, the phase's global loads
//! (prologue/mainloop), the thread tile's multiply-adds and the epilogue, for a block tile of
//! `BM x BN` stepping `BK` along K (const parameters; BM and BN multiples of 64, BK of 8;
//! BN may be 32 under [`PairedLanes`]).
//!
//! `(BM / 8) * (BN / 8)` threads, each an 8 x 8 thread tile whose rows and columns come in
//! runs of one 16-byte granule (`Accumulator::GRANULE`: 4 f32, 2 f64), the runs `BM / 2`
//! (f32) or `BM / 4` (f64) apart, so a warp's 16-byte shared reads fall on consecutive
//! addresses (no bank conflicts) and its 16-byte stores of C are contiguous. A is stored
//! transposed (`a_t[k][m]`), so a run of A is one 16-byte shared load too. (With runs of 4
//! f64, 32 bytes, a warp's reads were 32 bytes apart: measured on an H200, 5 shared
//! wavefronts per load instead of 3, and the f64 kernels bound by shared memory.)
//!
//! Interior blocks (the whole tile inside C, K and N multiples of 4, buffers aligned) load and
//! store 4 elements per access; edge blocks load element by element with zero padding and
//! store only inside C. The choice is per block (and per phase for the last, partial K
//! step), so it is uniform and every barrier is reached by every thread.
use crate::catalogue::PtxFact::Has;
use crate::catalogue::{Arch, KernelSpec, PerAcc, PtxFacts, Shared, Threads, Tile};
use crate::device::global::{load, load4};
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::vector::aligned4;
use crate::element::{Accumulator, Element, Output};
use crate::problem::{COut, Gemm, Strides, TRANSPOSED_A, TRANSPOSED_B};

/// The spec of a kernel built on this block tile: `(rows, cols)` of C per block, one thread
/// per 8 x 8 thread tile, a grid of tiles, every element type; `f32_blocks_per_sm` is the
/// launch bound of the f32-accumulating entries (the f64 ones, at ~250 registers, have
/// none). The rest of a spec is what `name` and `file` say.
/// The 16-byte accesses of the vector kernels' f32 entries (global loads and stores, shared
/// loads), two elements each.
pub const VECTORS_F32: PtxFacts = PtxFacts::only(
    &["f32"],
    &[
        Has("ld.global.v4."),
        Has("ld.shared.v4."),
        Has("st.global.v4."),
    ],
);
/// The same of their f64 entries.
pub const VECTORS_F64: PtxFacts = PtxFacts::only(
    &["f64"],
    &[
        Has("ld.global.v2."),
        Has("ld.shared.v2."),
        Has("st.global.v2."),
    ],
);

/// The spec of a kernel on a `rows x cols` block tile of 8 x 8 thread tiles, `shared` for its
/// stages, `f32_blocks_per_sm` its f32 launch bound. A launch that follows it gives a body on
/// the spec's own `rows()`, `cols()` and `bk()` what it needs: `(rows / 8) (cols / 8)` threads,
/// one block per tile and the stages.
pub const fn spec(
    name_file: (&'static str, &'static str),
    idea: &'static str,
    arch: Arch,
    (rows, cols): (u32, u32),
    shared: Shared,
    f32_blocks_per_sm: Option<u32>,
) -> KernelSpec {
    let (threads, tile) = (threads(rows, cols), Tile::Fixed { rows, cols });
    KernelSpec::new(name_file, idea, arch, Threads::Fixed(threads, 1), tile)
        .with_shared(shared)
        .with_blocks_per_sm(PerAcc {
            f32: f32_blocks_per_sm,
            f64: None,
        })
        .general()
}

/// Threads of a `BM x BN` block tile (8 x 8 elements each).
pub const fn threads(bm: u32, bn: u32) -> u32 {
    (bm / 8) * (bn / 8)
}

/// Shared elements of one stage: A transposed (BK x BM) and B (BK x BN).
pub const fn stage_elements(bm: u32, bn: u32, bk: u32) -> u32 {
    bk * bm + bk * bn
}

/// Whether a phase's global loads split into `parts` equal parts ([`fetch_part`]): every
/// part covers whole K steps and as many 4-element groups of A, and of B, per thread.
pub const fn splits_into(bm: u32, bn: u32, bk: u32, parts: u32) -> bool {
    let threads = threads(bm, bn);
    bk.is_multiple_of(parts)
        && (bm * bk / 4 / threads).is_multiple_of(parts)
        && (bk * bn / 4 / threads).is_multiple_of(parts)
}

/// Most 4-element groups one thread loads per phase, of A or of B (8: B's share of a
/// 32 x 128 tile's phase among 64 threads, `stream_k_32`).
const MAX_GROUPS: usize = 8;

/// Which (thread row, thread column) of the `BM / 8 x BN / 8` thread grid a thread is.
pub trait ThreadMap {
    fn coords<const BM: u32, const BN: u32>(tid: u32) -> (u32, u32);
}

/// Thread `tid` is row `tid / (BN / 8)`: a warp spans a strip of whole thread rows.
pub struct RowMajor;

impl ThreadMap for RowMajor {
    #[inline(always)]
    fn coords<const BM: u32, const BN: u32>(tid: u32) -> (u32, u32) {
        (tid / (BN / 8), tid % (BN / 8))
    }
}

/// Warp tiling: warp `w` owns a 4 x 8 patch of the thread grid (a warp tile of C of 32 x 64
/// elements per quadrant pair), so per K step a warp reads 4 distinct A groups and 8
/// distinct B groups (a row-major warp of a 128-wide tile reads 2 and 16).
pub struct WarpTiled;

impl ThreadMap for WarpTiled {
    #[inline(always)]
    fn coords<const BM: u32, const BN: u32>(tid: u32) -> (u32, u32) {
        warp_patch::<BN, 8>(tid, (tid % 32) / 8, tid % 8)
    }
}

/// Warp tiling with paired lanes: the same 4 x 8 patch, but lanes `n` and `n ^ 1` share a
/// thread row (so they read the same 16 bytes of A) and lanes `n` and `n ^ 2` a thread column
/// (the same 16 bytes of B). Shared memory returns 128 bytes per cycle, a quarter of what an
/// LDS.128 hands a warp; the hardware packs the return in half the cycles when every lane
/// pairs up with `n ^ 1`, or every lane with `n ^ 2`, on one address (NVIDIA's forum states
/// the rule for CC 7.x; it matches what Nsight measured on the H200: 2 wavefronts for A's
/// reads under `WarpTiled`, 4 for B's). Here both A's and B's reads take 2.
pub struct PairedLanes;

impl ThreadMap for PairedLanes {
    #[inline(always)]
    fn coords<const BM: u32, const BN: u32>(tid: u32) -> (u32, u32) {
        let lane = tid % 32;
        if BN == 32 {
            // Four thread columns: an 8 x 4 patch, row from lane bits 1, 3 and 4, column
            // from bits 0 and 2 (the same pairs: `n ^ 1` on a row, `n ^ 2` on a column).
            let row = ((lane >> 1) & 1) | (((lane >> 3) & 3) << 1);
            let col = (lane & 1) | (((lane >> 2) & 1) << 1);
            return warp_patch::<BN, 4>(tid, row, col);
        }
        // Row from lane bits 1 and 4, column from bits 0, 2 and 3.
        let row = ((lane >> 1) & 1) | (((lane >> 4) & 1) << 1);
        let col = (lane & 1) | (((lane >> 2) & 3) << 1);
        warp_patch::<BN, 8>(tid, row, col)
    }
}

/// Thread `tid`'s place in the thread grid when its warp owns a `32 / PC x PC` patch of it
/// and the lane sits at `(row, col)` of the patch.
#[inline(always)]
fn warp_patch<const BN: u32, const PC: u32>(tid: u32, row: u32, col: u32) -> (u32, u32) {
    let warp = tid / 32;
    let warps_per_row = BN / 8 / PC;
    (
        (warp / warps_per_row) * (32 / PC) + row,
        (warp % warps_per_row) * PC + col,
    )
}

/// One stage in shared memory.
#[derive(Clone, Copy)]
pub struct Stage<A> {
    pub(crate) a_t: SharedTile<A>,
    pub(crate) b: SharedTile<A>,
}

impl<A: Accumulator> Stage<A> {
    #[inline(always)]
    pub fn carve<const BM: u32, const BN: u32, const BK: u32>(arena: &mut SharedArena<A>) -> Self {
        Self {
            a_t: arena.tile(BK, BM),
            b: arena.tile(BK, BN),
        }
    }

    /// `stages` stages in one carve, the rows of A^T padded by `pad` elements (a multiple of
    /// 4, so 16-byte reads stay aligned); [`Stage::phase`] picks one.
    #[inline(always)]
    pub fn carve_stages<const BM: u32, const BN: u32, const BK: u32>(
        arena: &mut SharedArena<A>,
        stages: u32,
        pad: u32,
    ) -> Self {
        Self {
            a_t: arena.tile(stages * BK, BM + pad),
            b: arena.tile(stages * BK, BN),
        }
    }

    /// Stage `s` of a [`Stage::carve_stages`] carve.
    #[inline(always)]
    pub fn phase<const BK: u32>(&self, s: u32) -> Self {
        Self {
            a_t: self.a_t.window(s * BK, BK),
            b: self.b.window(s * BK, BK),
        }
    }
}

/// One phase's global loads, held in registers: this thread's 4-element groups of A and B.
#[derive(Clone, Copy)]
pub struct Fetch<A> {
    a: [[A; 4]; MAX_GROUPS],
    b: [[A; 4]; MAX_GROUPS],
}

impl<A: Accumulator> Fetch<A> {
    /// Nothing loaded yet (zeros).
    #[inline(always)]
    pub fn empty() -> Self {
        Self {
            a: [[A::ZERO; 4]; MAX_GROUPS],
            b: [[A::ZERO; 4]; MAX_GROUPS],
        }
    }
}

/// Where a block is, where its operands are and which path it takes.
#[derive(Clone, Copy)]
pub struct Block {
    pub row0: u32,
    pub col0: u32,
    pub interior: bool,
    /// Every row of A, B and C in aligned groups of 4 (leading dimensions, N, K and the
    /// buffers; M may be anything, as A's groups run along K): a group of operands as
    /// stored is then wholly inside or wholly outside its operand, so an edge block, or a
    /// last partial phase of K, can load and store whole groups (the [`EDGE`] path, which
    /// reads A and B as stored only).
    pub aligned: bool,
    pub s: Strides,
}

impl Block {
    /// Block tile `(block_row, block_col)` of product `g`. Interior: the whole tile inside
    /// C, every leading dimension a multiple of 4 and every buffer 16-byte aligned, so rows
    /// of A, B and C come in aligned groups of 4.
    #[inline(always)]
    pub fn new<T: Element, const BM: u32, const BN: u32>(
        g: &Gemm<T>,
        (block_row, block_col): (u32, u32),
    ) -> Self {
        let (a, b, c, m, n, k) = g.plain();
        let s = g.p.strides();
        let (row0, col0) = (block_row * BM, block_col * BN);
        // The tile's bounds first: one reordered test gave `stream_k_f32` other PTX and more
        // spills before (see `async_copy::tile_product`); `aligned` repeats the alignment
        // tests rather than share them, for the same reason (LLVM merges the two).
        let interior = row0 + BM <= m
            && col0 + BN <= n
            && (s.lda | s.ldb | s.ldc).is_multiple_of(4)
            && aligned4(a)
            && aligned4(b)
            && aligned4(c as *const T::Out);
        let aligned = (s.lda | s.ldb | s.ldc | n | k).is_multiple_of(4)
            && aligned4(a)
            && aligned4(b)
            && aligned4(c as *const T::Out);
        Self {
            row0,
            col0,
            interior,
            aligned,
            s,
        }
    }

    /// Whether A and B are read as they are (not transposed).
    #[inline(always)]
    pub fn as_stored(&self) -> bool {
        !self.s.a_t && !self.s.b_t
    }

    /// The layout bits (`TRANSPOSED_A | TRANSPOSED_B`): the unchecked path a block takes.
    #[inline(always)]
    pub fn layout(&self) -> u32 {
        self.s.a_t as u32 * TRANSPOSED_A + self.s.b_t as u32 * TRANSPOSED_B
    }

    /// A `BM x BN` tile of its own, row-major and dense (a workspace tile).
    #[inline(always)]
    pub fn whole<const BN: u32>() -> Self {
        Self {
            row0: 0,
            col0: 0,
            interior: true,
            aligned: true,
            s: Strides {
                lda: 0,
                ldb: 0,
                ldc: BN,
                a_t: false,
                b_t: false,
            },
        }
    }
}

/// The `i`-th 4-element group this thread loads: A `(row, col)` within the tile (4
/// consecutive columns), or with `a_t` (A stored transposed: its rows are contiguous) 4
/// consecutive rows, so every group is one 16-byte access of A as it is stored.
#[inline(always)]
fn a_group<const BM: u32, const BN: u32, const BK: u32>(tid: u32, i: u32, a_t: bool) -> (u32, u32) {
    let g = tid + i * threads(BM, BN);
    match a_t {
        false => (g / (BK / 4), 4 * (g % (BK / 4))),
        true => (4 * (g % (BM / 4)), g / (BM / 4)),
    }
}

/// The `i`-th 4-element group of B this thread loads: `(row, col)` within the tile (4
/// consecutive columns), or with `b_t` (B stored transposed) 4 consecutive rows.
///
/// With `b_t` on an unchecked path (`spread`), the 32 lanes of a warp take 32 consecutive
/// columns at one K offset, so each of the four scalar stores of a group (one row of the
/// stage, `BN` wide) hits 32 banks. Four lanes on one column (its K groups, as the checked
/// path keeps them) hit one bank in four rows: a 4-way conflict per store, which cost
/// `A B^T` 7% of its speed (H200, f32 4096^3). The price: a warp's 16-byte loads touch 32
/// rows of B^T, each sector shared with the warp at the next K offset.
#[inline(always)]
pub(crate) fn b_group<const BM: u32, const BN: u32, const BK: u32>(
    tid: u32,
    i: u32,
    (b_t, spread): (bool, bool),
) -> (u32, u32) {
    let g = tid + i * threads(BM, BN);
    match (b_t, spread) {
        (false, _) => (g / (BN / 4), 4 * (g % (BN / 4))),
        (true, false) => (4 * (g % (BK / 4)), g / (BK / 4)),
        (true, true) => {
            let (lane, run) = (g % 32, g / 32);
            // Runs of 32 columns: K offsets first, then the next 32 columns.
            (4 * (run % (BK / 4)), 32 * (run / (BK / 4)) + lane)
        }
    }
}

/// Loads phase `k0`'s share of A and B for thread `tid`.
///
/// # Safety
/// `op(a)` is `m x k`, `op(b)` is `k x n`, laid out as `blk.s` says.
#[inline(always)]
pub unsafe fn fetch<T: Element, const BM: u32, const BN: u32, const BK: u32>(
    ab: (*const T, *const T),
    mnk: (u32, u32, u32),
    blk: Block,
    k0: u32,
    tid: u32,
) -> Fetch<T::Acc> {
    // SAFETY: on the CHECKED path `fetch_as` asks only this fn's contract (`op(a)` `m x k`,
    // `op(b)` `k x n`, laid out as `blk.s` says): its vector loads are taken only where
    // `blk.interior && k0 + BK <= k`, every other load is bounds-checked.
    unsafe { fetch_as::<T, BM, BN, BK, CHECKED>(ab, mnk, blk, k0, tid) }
}

/// [`fetch`] on path `PATH` ([`CHECKED`], or an unchecked layout): an unchecked path
/// promises an interior block, whole phases and `blk.layout() == PATH` (the caller checked
/// `blk.interior && k % BK == 0` for the whole launch of this block), so no bounds check
/// is compiled in at all.
///
/// # Safety
/// As [`fetch`], and the promise above on an unchecked path; on [`EDGE`], an aligned block
/// ([`Block::aligned`]) of operands as stored.
#[inline(always)]
pub unsafe fn fetch_as<T: Element, const BM: u32, const BN: u32, const BK: u32, const PATH: u32>(
    ab: (*const T, *const T),
    mnk: (u32, u32, u32),
    blk: Block,
    k0: u32,
    tid: u32,
) -> Fetch<T::Acc> {
    // SAFETY: `fetch_part`'s contract is this fn's, which the caller meets (operands as
    // `blk.s` says; an unchecked PATH's promise above, EDGE's aligned block as stored);
    // part 0 of 1 with B is the whole fetch.
    unsafe { fetch_part::<T, BM, BN, BK, PATH>(ab, mnk, blk, k0, tid, (0, 1, true)) }
}

/// Part `part` of `parts` of [`fetch_as`] (a slice of this thread's groups of A and of B),
/// so a mainloop can spread a phase's loads, and the registers they hold, over the phase.
/// With `with_b` false, only A's groups (for kernels that copy B asynchronously).
///
/// # Safety
/// As [`fetch_as`].
#[inline(always)]
pub unsafe fn fetch_part<
    T: Element,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PATH: u32,
>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    blk: Block,
    k0: u32,
    tid: u32,
    (part, parts, with_b): (u32, u32, bool),
) -> Fetch<T::Acc> {
    let groups_a = BM * BK / 4 / threads(BM, BN);
    let groups_b = if with_b {
        BK * BN / 4 / threads(BM, BN)
    } else {
        0
    };
    let mut f = Fetch::empty();
    let vector = PATH != CHECKED || (blk.interior && k0 + BK <= k);
    let st = layout::<PATH>(blk);
    for slot in 0..groups_a / parts {
        // Slots count from 0 in every part, so the registers are indexed by constants
        // even where the part is not.
        let i = part * (groups_a / parts) + slot;
        let (r, col) = a_group::<BM, BN, BK>(tid, i, st.a_t);
        let (row, col) = (blk.row0 + r, k0 + col);
        // The group runs along K, or along M where A is stored transposed.
        let (dr, dc) = if st.a_t { (1, 0) } else { (0, 1) };
        if vector {
            // On the EDGE path a group outside A (below its last row, or past K) stays zero.
            if PATH & EDGE == 0 || (row < m && col < k) {
                // SAFETY: the group is inside A: an unchecked path's block is interior with
                // whole phases (the caller's promise), the checked one tested `blk.interior &&
                // k0 + BK <= k` (`vector`), EDGE the test above with K a multiple of 4
                // (`blk.aligned`); 4-aligned as A's start and `lda` are (Block::new).
                let v = unsafe { load4(a, st.a(row, col)) };
                f.a[slot as usize] = v.map(Element::widen);
            }
        } else {
            for j in 0..4 {
                let (row, col) = (row + dr * j as u32, col + dc * j as u32);
                f.a[slot as usize][j] = match row < m && col < k {
                    // SAFETY: `(row, col)` is inside `op(A)`, `m x k` (this arm's test), laid
                    // out as `st` says (`blk.s` on the checked path), so inside A's buffer.
                    true => unsafe { load(a, st.a(row, col)).widen() },
                    false => T::Acc::ZERO,
                };
            }
        }
    }
    for slot in 0..groups_b / parts {
        let i = part * (groups_b / parts) + slot;
        let (r, col) = b_group::<BM, BN, BK>(tid, i, (st.b_t, PATH != CHECKED));
        let (row, col) = (k0 + r, blk.col0 + col);
        let (dr, dc) = if st.b_t { (1, 0) } else { (0, 1) };
        if vector {
            if PATH & EDGE == 0 || (row < k && col < n) {
                // SAFETY: as above, for B: inside `op(B)` (`k x n`; interior and whole
                // phases, or the tests above), 4-aligned as B's start and `ldb` are.
                let v = unsafe { load4(b, st.b(row, col)) };
                f.b[slot as usize] = v.map(Element::widen);
            }
        } else {
            for j in 0..4 {
                let (row, col) = (row + dr * j as u32, col + dc * j as u32);
                f.b[slot as usize][j] = match row < k && col < n {
                    // SAFETY: as for A: `(row, col)` is inside `op(B)`, `k x n` (this arm's
                    // test), laid out as `st` says.
                    true => unsafe { load(b, st.b(row, col)).widen() },
                    false => T::Acc::ZERO,
                };
            }
        }
    }
    f
}

/// Stores a fetch into a stage (A transposed).
///
/// # Safety
/// No thread reads `stage` between the last barrier and the next.
#[inline(always)]
pub unsafe fn stash<A: Accumulator, const BM: u32, const BN: u32, const BK: u32>(
    stage: &Stage<A>,
    f: &Fetch<A>,
    (blk, tid): (Block, u32),
) {
    // SAFETY: on the CHECKED path `stash_part`'s contract is this fn's, the caller's: no
    // thread reads `stage` between the last barrier and the next.
    unsafe { stash_part::<A, BM, BN, BK, CHECKED>(stage, f, (blk, tid), (0, 1, true)) }
}

/// A mainloop's path, a constant: [`CHECKED`] (bounds checks, the layout read at run
/// time), or the layout bits (`TRANSPOSED_A | TRANSPOSED_B`, [`AS_STORED`] for neither) of
/// an unchecked mainloop (an interior block, whole phases), whose loads compile for that
/// one layout. One layout per instantiation on purpose: with the layout chosen at run time
/// inside the unchecked loop, LLVM stopped unrolling `fragment_buffered_k16`'s 16 K steps
/// (640 FMAs in the entry instead of 1024 or more).
pub const CHECKED: u32 = 4;
/// The unchecked path for A and B as they are stored.
pub const AS_STORED: u32 = 0;
/// The path of a block of operands as stored whose groups of 4 are wholly inside or
/// outside every operand ([`Block::aligned`]) where the unchecked one does not apply (an
/// edge block, or K not a multiple of BK): whole groups are loaded, those past the last
/// row or column of an operand are zeros, and C is stored in whole runs inside it. The
/// checked path (a bounds test and a scalar load per element) costs such blocks most of
/// their speed: on an H200, f32 `stream_k` ran 4096 x 300 x 4096 (a third of its tiles on
/// the edge) at 57% of cuBLAS, and `paired_lanes` 2000^3 at 54%; with this path, 94% each.
pub const EDGE: u32 = 8;

/// The strides a fetch or stash on path `PATH` follows.
#[inline(always)]
fn layout<const PATH: u32>(blk: Block) -> Strides {
    match PATH {
        CHECKED => blk.s,
        _ => Strides {
            // The EDGE bit is not a layout bit.
            a_t: PATH & TRANSPOSED_A != 0,
            b_t: PATH & TRANSPOSED_B != 0,
            ..blk.s
        },
    }
}

/// Stores part `part` of `parts` of a fetch, with or without B (see [`fetch_part`]), of a
/// mainloop on path `PATH` (as the fetch's).
///
/// # Safety
/// As [`stash`]; an unchecked `PATH` only where it is `blk.layout()`, [`EDGE`] only for
/// operands as stored.
#[inline(always)]
pub unsafe fn stash_part<
    A: Accumulator,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const PATH: u32,
>(
    stage: &Stage<A>,
    f: &Fetch<A>,
    (blk, tid): (Block, u32),
    (part, parts, with_b): (u32, u32, bool),
) {
    let groups_a = BM * BK / 4 / threads(BM, BN);
    let groups_b = if with_b {
        BK * BN / 4 / threads(BM, BN)
    } else {
        0
    };
    let st = layout::<PATH>(blk);
    for slot in 0..groups_a / parts {
        // Slots count from 0 in every part, so the registers are indexed by constants
        // even where the part is not.
        let i = part * (groups_a / parts) + slot;
        let (r, col) = a_group::<BM, BN, BK>(tid, i, st.a_t);
        let v = f.a[slot as usize];
        if st.a_t {
            // 4 rows of one column: one row of A^T.
            // SAFETY: `a_group` gives `col < BK` and `r` a multiple of 4 below BM: inside the
            // stage's A^T, whose rows (BM + a pad that is a multiple of 4) keep it 4-aligned;
            // groups are per thread and nobody reads the stage till the barrier (contract).
            unsafe { stage.a_t.set4(col, r, v) };
        } else {
            for j in 0..4 {
                // SAFETY: as above: `col` a multiple of 4 below BK, so `col + j < BK`, and
                // `r < BM`; this thread's own element, unread until the next barrier.
                unsafe { stage.a_t.set(col + j as u32, r, v[j]) };
            }
        }
    }
    for slot in 0..groups_b / parts {
        let i = part * (groups_b / parts) + slot;
        let (r, col) = b_group::<BM, BN, BK>(tid, i, (st.b_t, PATH != CHECKED));
        let v = f.b[slot as usize];
        if st.b_t {
            for j in 0..4 {
                // SAFETY: as for A: `b_group` gives `r` a multiple of 4 below BK (`r + j <
                // BK`) and `col < BN`; this thread's own element, unread until the barrier.
                unsafe { stage.b.set(r + j as u32, col, v[j]) };
            }
        } else {
            // SAFETY: as for A: `b_group` gives `r < BK` and `col` a multiple of 4 below BN,
            // B's row length: the group is inside the stage and 4-aligned.
            unsafe { stage.b.set4(r, col, v) };
        }
    }
}

/// A thread's accumulators: its 8 x 8 thread tile of C.
pub type ThreadTile<A> = [[A; 8]; 8];

/// One K step's operands of a thread tile: 8 elements of A (a column of the tile) and 8 of
/// B (a row), read from shared memory as four 16-byte groups.
#[derive(Clone, Copy)]
pub struct Fragment<A> {
    a: [A; 8],
    b: [A; 8],
}

impl<A: Accumulator> Fragment<A> {
    /// Reads K step `kk` of `stage` for the thread tile at `(tr, tc)`.
    ///
    /// # Safety
    /// The stage is complete (a barrier since its last store) and nobody writes it meanwhile;
    /// `(tr, tc)` is in the `BM / 8 x BN / 8` thread grid.
    #[inline(always)]
    pub unsafe fn load<const BM: u32, const BN: u32>(
        stage: &Stage<A>,
        kk: u32,
        (tr, tc): (u32, u32),
    ) -> Self {
        // SAFETY: `read_runs`' terms: the stage complete and unwritten (this fn's contract);
        // A^T's tile is BM (+ a pad that is a multiple of 4) wide, B's BN; `tr < BM / 8` and
        // `tc < BN / 8` (the contract).
        unsafe {
            Self {
                a: read_runs(&stage.a_t, kk, tr, BM),
                b: read_runs(&stage.b, kk, tc, BN),
            }
        }
    }

    /// The 64 multiply-adds of one K step: `acc += a b^T`. For f64, odd rows run right to
    /// left, so each multiply-add shares an operand with the one before it: a DFMA reads three
    /// 64-bit registers in its two issue cycles unless one comes from the operand reuse cache,
    /// and ptxas keeps more of them there in this order (measured on an H200: FP64 pipe
    /// utilisation tracks the DFMAs that read three fresh registers).
    #[inline(always)]
    pub fn multiply_into(&self, acc: &mut [[A; 8]; 8]) {
        for i in 0..8 {
            for jj in 0..8 {
                // GRANULE is a constant: f32 keeps the plain order (its FFMAs issue in one
                // cycle, and this order spilled there).
                let j = if A::GRANULE == 2 && i % 2 == 1 {
                    7 - jj
                } else {
                    jj
                };
                acc[i][j] = acc[i][j].mul_add(self.a[i], self.b[j]);
            }
        }
    }
}

/// The thread tile's multiply-adds over one stage.
///
/// # Safety
/// As [`Fragment::load`]: the stage is complete (a barrier since its last store), nobody
/// writes it meanwhile, and `me` is in the thread grid.
#[inline(always)]
pub unsafe fn multiply<A: Accumulator, const BM: u32, const BN: u32, const BK: u32>(
    stage: &Stage<A>,
    acc: &mut [[A; 8]; 8],
    me: (u32, u32),
) {
    for kk in 0..BK {
        // SAFETY: `kk < BK`, a row of the stage; this fn's contract (the stage complete, no
        // writer, `me` in the thread grid) is `Fragment::load`'s.
        unsafe { Fragment::load::<BM, BN>(stage, kk, me) }.multiply_into(acc);
    }
}

/// A thread's 8 rows (or columns) of K step `kk`, one 16-byte read per run.
///
/// # Safety
/// As [`Fragment::load`]; `tile` is `span` (+ padding, a multiple of 4) wide, `span` a
/// multiple of 8 and `t < span / 8`.
#[inline(always)]
unsafe fn read_runs<A: Accumulator>(tile: &SharedTile<A>, kk: u32, t: u32, span: u32) -> [A; 8] {
    // GRANULE is a constant: one branch survives.
    if A::GRANULE == 4 {
        // SAFETY: `t < span / 8`, so both runs end by column `span` of row `kk`; `4 t`, `span
        // / 2` and the row length (span + a pad that is a multiple of 4) are multiples of 4,
        // as `get4` needs; no writer until the next barrier (the contract).
        let (lo, hi) = unsafe { (tile.get4(kk, 4 * t), tile.get4(kk, span / 2 + 4 * t)) };
        [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]]
    } else {
        // SAFETY: as above, runs of 2: for `q < 4` and `t < span / 8` the pair ends by column
        // `span`; `span / 4` (span a multiple of 8), `2 t` and the row length are even.
        let run = |q: u32| unsafe { tile.get2(kk, q * (span / 4) + 2 * t) };
        let (p0, p1, p2, p3) = (run(0), run(1), run(2), run(3));
        [p0[0], p0[1], p1[0], p1[1], p2[0], p2[1], p3[0], p3[1]]
    }
}

/// Offset (within the block tile) of a thread's `i`-th row or column: runs of
/// `A::GRANULE`, `span / (8 / GRANULE)` apart.
#[inline(always)]
pub(crate) fn tile_offset<A: Accumulator>(t: u32, i: u32, span: u32) -> u32 {
    let g = A::GRANULE;
    (i / g) * (span / (8 / g)) + g * t + i % g
}

/// Writes the thread tile to C: `alpha acc + beta C` ([`COut`]), C `out.ldc` wide.
///
/// # Safety
/// `c` is `m x n` with rows `out.ldc` apart; no other thread writes these elements;
/// `(tr, tc)` is in the `BM / 8 x BN / 8` thread grid.
#[inline(always)]
pub unsafe fn epilogue<A: Accumulator, O: Output, const BM: u32, const BN: u32>(
    out: &COut<A, O>,
    acc: &[[A; 8]; 8],
    (m, n): (u32, u32),
    blk: Block,
    (tr, tc): (u32, u32),
) {
    for i in 0..8 {
        let row = blk.row0 + tile_offset::<A>(tr, i as u32, BM);
        let r = acc[i];
        if blk.interior {
            let at = |j: u32| {
                row as usize * out.ldc as usize + (blk.col0 + tile_offset::<A>(tc, j, BN)) as usize
            };
            // SAFETY: interior (Block::new): the tile, so the row and every run, is inside C,
            // and `ldc` a multiple of 4 with C 4-aligned aligns each run (`tile_offset` a
            // multiple of GRANULE); no other thread writes them (the contract). Written out
            // rather than through `put_run`: that loop gave every block-tile kernel other PTX,
            // which at the 128-register cap has meant other spills.
            unsafe {
                if A::GRANULE == 4 {
                    out.put4(at(0), [r[0], r[1], r[2], r[3]]);
                    out.put4(at(4), [r[4], r[5], r[6], r[7]]);
                } else {
                    for q in 0..4 {
                        out.put2(at(2 * q as u32), [r[2 * q], r[2 * q + 1]]);
                    }
                }
            }
        } else {
            for j in 0..8 {
                let col = blk.col0 + tile_offset::<A>(tc, j as u32, BN);
                if row < m && col < n {
                    // SAFETY: `(row, col)` is inside C (tested above), `m x n` with rows
                    // `out.ldc` apart, and no other thread writes it (the contract); one
                    // element: no alignment to meet.
                    unsafe { out.put(row as usize * out.ldc as usize + col as usize, r[j]) };
                }
            }
        }
    }
}

/// Stores the run of `A::GRANULE` elements of thread-tile row `r` that starts at `q`, at
/// `at` of C.
///
/// # Safety
/// The run is inside C and aligned, and no other thread writes it.
#[inline(always)]
unsafe fn put_run<A: Accumulator, O: Output>(out: &COut<A, O>, at: usize, r: &[A; 8], q: usize) {
    // SAFETY: the contract: the run of GRANULE elements at `at` (4, or 2) is inside C,
    // aligned to its length as `put4` or `put2` needs, and no other thread writes it.
    unsafe {
        if A::GRANULE == 4 {
            out.put4(at, [r[q], r[q + 1], r[q + 2], r[q + 3]]);
        } else {
            out.put2(at, [r[q], r[q + 1]]);
        }
    }
}

/// [`epilogue`]; with `EDGES`, an aligned edge block ([`Block::aligned`]) stores whole
/// runs too, those inside C (a run is wholly inside or outside it).
///
/// # Safety
/// As [`epilogue`].
#[inline(always)]
pub unsafe fn epilogue_on<
    A: Accumulator,
    O: Output,
    const BM: u32,
    const BN: u32,
    const EDGES: bool,
>(
    out: &COut<A, O>,
    acc: &[[A; 8]; 8],
    (m, n): (u32, u32),
    blk: Block,
    (tr, tc): (u32, u32),
) {
    if !EDGES || blk.interior || !blk.aligned {
        // SAFETY: this fn's contract is `epilogue`'s (C `m x n`, rows `out.ldc` apart, these
        // elements written by no other thread).
        return unsafe { epilogue::<A, O, BM, BN>(out, acc, (m, n), blk, (tr, tc)) };
    }
    // Runs of `GRANULE` elements, as the interior path stores them.
    let g = A::GRANULE as usize;
    for i in 0..8 {
        let row = blk.row0 + tile_offset::<A>(tr, i as u32, BM);
        for q in (0..8).step_by(g) {
            let col = blk.col0 + tile_offset::<A>(tc, q as u32, BN);
            if row < m && col < n {
                let at = row as usize * out.ldc as usize + col as usize;
                // SAFETY: `col < n`, a multiple of GRANULE, and N a multiple of 4 (aligned):
                // the run is inside C; `ldc` too and C 4-aligned: the run is aligned; this
                // thread's own elements (the contract).
                unsafe { put_run(out, at, &acc[i], q) };
            }
        }
    }
}
