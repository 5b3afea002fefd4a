//! The block tile of the tensor-core kernels whose fragments hold one 32- or 64-bit element
//! per register (`mma.sync` m16n8k8: f64 on the FP64 tensor cores, f32 as TF32): `dmma`,
//! `mma_tf32`, `mma_3xtf32`. They differ in what a K step multiplies ([`Scheme`]) and in
//! their mainloop ([`Mainloop`]: K steps of 8 or 16, a register-buffered loop for interior
//! blocks).
//!
//! A block computes a BM x BN tile of C with (BM / 16 MT) x (BN / 32) warps, each a
//! 16 MT x 32 warp tile of MT x 4 m16n8 tiles, stepping BK along K. A and B go from global to
//! shared memory as they are stored, `DEPTH - 1` phases ahead, by `cp.async`: 16-byte chunks
//! where their rows and leading dimensions allow them and the inputs are 16-byte aligned,
//! one element per copy otherwise (the same pipeline either way, chosen per launch, so
//! every barrier stays uniform); zeros outside A and B. A stage holds each operand as it is
//! stored: K-major (a row-major A, a transposed B: rows along K) or MN-major (a transposed
//! A, a row-major B), and the fragment reads follow. Rows are padded so a warp's fragment
//! reads hit distinct banks: K-major rows by 4 elements (a lane reads rows g, g + 8 at
//! columns t, t + 4), MN-major rows by 32 bytes (rows t, t + 4 at column g). Then 32-bit
//! reads are one wavefront and 64-bit reads two.
//!
//! The f64 kernels ([`strided`]) compute every form (leading dimensions, transposes,
//! alpha/beta: one mainloop per pair of orientations, chosen per launch); the TF32 ones
//! ([`pipelined`]) the row-major, dense product. `dmma_buffered` adds a second mainloop
//! ([`Buffered`]: fragments double-buffered in registers across stages) for the blocks
//! whose tiles lie wholly inside A and B, and takes its tiles in groups of rows. An edge
//! block multiplies the whole tile ending at C's edge where C has a tile's rows and columns
//! (`inside`), so it is such a block too.
//!
//! Which tile and slice of K a block takes, and where its sums go, is a [`TileWork`]: a
//! block per tile storing C with alpha and beta ([`OwnTiles`]), or, for C with few tiles,
//! the blocks of a tile each on a slice of K, the last to finish adding the slices in K
//! order ([`SplitStrips`], [`split`]: `dmma_small_split`).
use crate::catalogue::{Arch, Elem, Grid, KernelSpec, PerAcc, Precision, Shared, Threads, Tile};
use crate::device::async_copy::{commit_group, copy16_or_zero_at, wait_group};
use crate::device::shared::{SharedArena, SharedTile, shared_address};
use crate::device::thread::{
    block_idx_x, block_idx_y, grid_dim_x, grid_dim_y, sync_threads, thread_idx_x,
};
use crate::device::vector::{aligned16, rows_in_chunks};
use crate::element::{Accumulator, Element};
use crate::parts::mma::async_pipeline;
use crate::parts::schedule::split_k_strips::{StripBlock, StripSums, finish};
use crate::problem::{COut, Gemm};

/// n8 tiles per warp tile (32 columns); its rows are MT m16 tiles (a const parameter).
const NT: usize = 4;
/// Row padding of A's shared tile, in elements: a lane reads rows g, g + 8 at columns t,
/// t + 4, and with rows 4 (mod 16 for f64, 32 for f32) elements long the lanes of a
/// wavefront fall on distinct banks.
const PAD_A: u32 = 4;

/// Row padding of B's shared tile, in elements of `bytes` bytes: 32 bytes, so that rows t
/// and t + 4 of a K step start on distinct banks for t = 0..4.
pub const fn pad_b(bytes: u32) -> u32 {
    32 / bytes
}

/// Threads of a `bm x bn` block of warp tiles `16 mt x 32`.
pub const fn threads(bm: u32, bn: u32, mt: usize) -> u32 {
    (bm / (16 * mt as u32)) * (bn / 32) * 32
}

/// Elements of one stage: A (bm x (bk + 4)) and B (bk x (bn + pad)), as stored row-major;
/// where `strided`, room for either orientation of each (A as bk x (bm + pad), B as bn x
/// (bk + 4) when transposed).
pub const fn stage_elements(bm: u32, bn: u32, bk: u32, bytes: u32, strided: bool) -> u32 {
    let (a, b) = (bm * (bk + PAD_A), bk * (bn + pad_b(bytes)));
    if !strided {
        return a + b;
    }
    let (a_t, b_t) = (bk * (bm + pad_b(bytes)), bn * (bk + PAD_A));
    (if a > a_t { a } else { a_t }) + (if b > b_t { b } else { b_t })
}

/// Shared elements of a launch: `depth` stages and 16 bytes for the repair flag.
pub const fn shared_elements(
    bm: u32,
    bn: u32,
    bk: u32,
    depth: u32,
    bytes: u32,
    strided: bool,
) -> u32 {
    depth * stage_elements(bm, bn, bk, bytes, strided) + 16 / bytes
}

/// The spec of a kernel on this tile, for `elem` (f32 or f64, its accumulator type) at
/// `precision`, in `arch`'s module; `blocks` resident per SM as its launch bound. The f64
/// kernels run [`strided`], every form; the others [`pipelined`] on row-major operands
/// (`A_T`, `B_T` false: the spec is not strided).
///
/// A launch that follows it gives a body of the same tile (`BM`, `BN`, `BK`, `DEPTH`, `MT`)
/// what that body needs: `threads(BM, BN, MT)` threads, one block per `BM x BN` tile and
/// `shared_elements` for the stages.
pub const fn spec(
    name_file: (&'static str, &'static str),
    idea: &'static str,
    (arch, elem, precision): (Arch, Elem, Precision),
    (bm, bn, bk, depth, mt): (u32, u32, u32, u32, usize),
    blocks: u32,
) -> KernelSpec {
    let strided = matches!(elem, Elem::F64);
    let elements: &'static [Elem] = match elem {
        Elem::F64 => &[Elem::F64],
        _ => &[Elem::F32],
    };
    let (threads, tile) = (threads(bm, bn, mt), Tile::Fixed { rows: bm, cols: bn });
    let spec = KernelSpec::new(name_file, idea, arch, Threads::Fixed(threads, 1), tile)
        .with_shared(Shared::Elements(shared_elements(
            bm,
            bn,
            bk,
            depth,
            elem.bytes(),
            strided,
        )))
        .with_blocks_per_sm(PerAcc {
            f32: Some(blocks),
            f64: Some(blocks),
        })
        .with_elements(elements)
        .on_tensor_cores()
        .with_precision(precision);
    if strided { spec.general() } else { spec }
}

/// What one K step of 8 multiplies: the accumulator it adds into, a fragment element as the
/// tensor cores take it, and the `mma` (or `mma`s) of one 16 x 8 tile.
pub trait Scheme {
    /// Whether a NaN sum may be an artefact of the scheme (3xTF32's Inf x 0 cross terms), to
    /// be recomputed with the kernel's repair scheme.
    const REPAIR: bool;
    /// The accumulator type: the kernel's element type is the one whose accumulator this is.
    type Acc: Accumulator;
    type Frag: Copy;
    fn prepare(x: Self::Acc) -> Self::Frag;
    fn mma(a: [Self::Frag; 4], b: [Self::Frag; 2], c: [Self::Acc; 4]) -> [Self::Acc; 4];
}

/// A scheme with one instruction for a K step of 16 (two steps of 8 summed as one).
pub trait Step16: Scheme {
    /// Two K steps: A's and B's fragments of the first, then of the second.
    fn mma16(a: [Self::Frag; 8], b: [Self::Frag; 4], c: [Self::Acc; 4]) -> [Self::Acc; 4];
}

/// A scheme with an instruction for half a K step (m16n8k4): A's fragment (rows g, g + 8
/// of column t) and B's (row t, column g).
pub trait Step4: Scheme {
    fn mma4(a: [Self::Frag; 2], b: Self::Frag, c: [Self::Acc; 4]) -> [Self::Acc; 4];
}

/// The wide tile's mainloop variants: how a stage's K steps are multiplied
/// ([`Mainloop::multiply`]), and whether blocks whose tiles lie wholly inside A and B run a
/// register-buffered loop instead ([`Mainloop::buffered`], tiles taken in groups of rows).
/// Each variant is bounded by the instructions its loops issue, so a variant its scheme
/// cannot run does not compile.
pub trait Mainloop<S: Scheme> {
    /// Whether interior blocks run [`Mainloop::buffered`], and the grid walks its tiles in
    /// groups of rows.
    const BUFFERED: bool = false;
    /// Whether interior blocks run in a function of their own, away from the edge blocks'
    /// checked copies.
    const APART: bool = false;

    /// The `mma`s of one stage.
    ///
    /// # Safety
    /// The stage is complete (a wait and a barrier since its copies); every lane of the warp
    /// calls it.
    #[inline(always)]
    unsafe fn multiply<
        T: Element<Acc = S::Acc>,
        const BK: u32,
        const MT: usize,
        const A_T: bool,
        const B_T: bool,
    >(
        stage: &Stage<T>,
        acc: &mut Accumulators<T::Acc, MT>,
        me: Lane,
    ) {
        // SAFETY: the contract is `multiply`'s.
        unsafe { multiply::<T, S, BK, MT, A_T, B_T>(stage, acc, me) }
    }

    /// The mainloop of an interior block.
    ///
    /// # Safety
    /// As the mainloop of `pipelined`: `stage(s)` is slot `s`; `first` starts the copies
    /// of phase `p < DEPTH` into a slot, `copy` those of a later phase; every thread of the
    /// block runs it.
    #[inline(always)]
    unsafe fn buffered<
        T: Element<Acc = S::Acc>,
        const BK: u32,
        const DEPTH: u32,
        const MT: usize,
        const A_T: bool,
        const B_T: bool,
    >(
        acc: &mut Accumulators<T::Acc, MT>,
        at: (
            &impl Fn(u32) -> Stage<T>,
            &impl Fn(&Stage<T>, u32),
            &impl Fn(&Stage<T>, u32),
        ),
        phases: u32,
        me: Lane,
    ) {
        // SAFETY: the contract is `buffered`'s.
        unsafe { buffered::<T, S, BK, DEPTH, MT, A_T, B_T>(acc, at, phases, me) }
    }
}

/// K steps of 8, every block through the one mainloop (`dmma`, the TF32 kernels).
pub struct Steps8;
impl<S: Scheme> Mainloop<S> for Steps8 {}

/// K steps of 16, one instruction each ([`Step16`]: `dmma_warps`, `dmma_small`).
pub struct Steps16;
impl<S: Step16> Mainloop<S> for Steps16 {
    #[inline(always)]
    unsafe fn multiply<
        T: Element<Acc = S::Acc>,
        const BK: u32,
        const MT: usize,
        const A_T: bool,
        const B_T: bool,
    >(
        stage: &Stage<T>,
        acc: &mut Accumulators<T::Acc, MT>,
        me: Lane,
    ) {
        // SAFETY: the contract is `multiply16`'s.
        unsafe { multiply16::<T, S, BK, MT, A_T, B_T>(stage, acc, me) }
    }
}

/// K steps of 8, interior blocks with fragments double-buffered in registers
/// (`dmma_buffered`).
pub struct Buffered;
impl<S: Scheme> Mainloop<S> for Buffered {
    const BUFFERED: bool = true;
}

/// [`Buffered`] with the interior blocks' loop in K steps of 4 ([`Step4`]), in a function of
/// their own (`dmma_k4`).
pub struct Buffered4;
impl<S: Step4> Mainloop<S> for Buffered4 {
    const BUFFERED: bool = true;
    const APART: bool = true;
    #[inline(always)]
    unsafe fn buffered<
        T: Element<Acc = S::Acc>,
        const BK: u32,
        const DEPTH: u32,
        const MT: usize,
        const A_T: bool,
        const B_T: bool,
    >(
        acc: &mut Accumulators<T::Acc, MT>,
        at: (
            &impl Fn(u32) -> Stage<T>,
            &impl Fn(&Stage<T>, u32),
            &impl Fn(&Stage<T>, u32),
        ),
        phases: u32,
        me: Lane,
    ) {
        // SAFETY: the contract is `buffered4`'s.
        unsafe { buffered4::<T, S, BK, DEPTH, MT, A_T, B_T>(acc, at, phases, me) }
    }
}

/// A warp's accumulators: MT m16 tiles by 4 n8 tiles.
pub type Accumulators<A, const MT: usize> = [[[A; 4]; NT]; MT];

/// The multiply of one stage, as the mainloop takes it.
type Multiply<'a, T, const MT: usize> =
    &'a dyn Fn(&Stage<T>, &mut Accumulators<<T as Element>::Acc, MT>);

/// One stage of the tiles in shared memory.
#[derive(Clone, Copy)]
pub struct Stage<T> {
    a: SharedTile<T>,
    b: SharedTile<T>,
}

impl<T: Element> Stage<T> {
    /// op(A)'s element (row `r`, `k`) as `S` multiplies it, from A as the stage holds it
    /// (MN-major where `A_T`).
    ///
    /// # Safety
    /// Inside the stage; the stage is complete (a wait and a barrier since its copies).
    #[inline(always)]
    unsafe fn a_at<S: Scheme<Acc = T::Acc>, const A_T: bool>(&self, r: u32, k: u32) -> S::Frag {
        let x = match A_T {
            // SAFETY: `get`'s points: (r, k) lies in A's BM x (BK + PAD_A) tile (this contract),
            // which is complete and unwritten until the next barrier.
            false => unsafe { self.a.get(r, k) },
            // SAFETY: as above, A held MN-major: (k, r) in its BK x (BM + pad) tile.
            true => unsafe { self.a.get(k, r) },
        };
        S::prepare(x.widen())
    }

    /// op(B)'s element (`k`, column `c`), from B as the stage holds it (K-major where
    /// `B_T`).
    ///
    /// # Safety
    /// As [`Stage::a_at`].
    #[inline(always)]
    unsafe fn b_at<S: Scheme<Acc = T::Acc>, const B_T: bool>(&self, k: u32, c: u32) -> S::Frag {
        let x = match B_T {
            // SAFETY: `get`'s points: (k, c) lies in B's BK x (BN + pad) tile (this contract),
            // which is complete and unwritten until the next barrier.
            false => unsafe { self.b.get(k, c) },
            // SAFETY: as above, B held K-major: (c, k) in its BN x (BK + PAD_A) tile.
            true => unsafe { self.b.get(c, k) },
        };
        S::prepare(x.widen())
    }
}

/// Starts the copies of a `ROWS x COLS` tile at `(row0, col0)` of a row-major `rows x
/// cols` matrix whose rows lie `ld` elements apart into `dst`: 16-byte chunks where
/// `chunked` (whole tiles without checks, edge tiles by `mma_async`'s checked copies), one
/// element per copy otherwise; the copies spread over the block's `threads` (a constant
/// once inlined); zeros outside the matrix.
///
/// # Safety
/// Where `chunked`, the matrix's columns and `ld` are multiples of the chunk and `src` is
/// 16-byte aligned; nobody reads `dst` until a wait covering these copies and a barrier.
#[inline(always)]
unsafe fn copy_tile<T: Copy, const ROWS: u32, const COLS: u32>(
    dst: &SharedTile<T>,
    src: *const T,
    (row0, col0): (u32, u32),
    (rows, cols, ld): (u32, u32, u32),
    (tid, threads): (u32, u32),
    chunked: bool,
) {
    // Each path spelled out so each loop has a constant trip count.
    if chunked {
        let chunk = 16 / size_of::<T>() as u32;
        let per_row = COLS / chunk;
        if row0 + ROWS <= rows && col0 + COLS <= cols && threads.is_multiple_of(per_row) {
            // SAFETY: `copy_whole`'s points: `chunked` (this contract's alignment), the tile inside
            // the matrix and `threads` a multiple of `per_row`, all tested just above.
            unsafe { copy_whole::<T, ROWS, COLS>(dst, src, (row0, col0), ld, (tid, threads)) };
        } else {
            let at = ((row0, col0), (rows, cols, ld), (tid, threads));
            // SAFETY: `copy_tile`'s points: with `chunked` cols and ld are chunk multiples and src
            // is 16-aligned (this contract); `dst` is unread until a wait and a barrier.
            unsafe { async_pipeline::copy_tile::<T, ROWS, COLS>(dst, src, at.0, at.1, at.2) };
        }
    } else {
        for i in 0..ROWS * COLS / threads {
            let e = tid + i * threads;
            let (r, c) = (e / COLS, e % COLS);
            let inside = row0 + r < rows && col0 + c < cols;
            let at = (row0 + r) as usize * ld as usize + (col0 + c) as usize;
            let from = if inside { src.wrapping_add(at) } else { src };
            // SAFETY: `copy_element_or_zero`'s points: (r < ROWS, c < COLS) in `dst` (tid <
            // threads); if `inside`, element (row0 + r, col0 + c) of the matrix; T is f32 or f64,
            // aligned; `dst` unread until a wait and barrier (this contract).
            unsafe { dst.copy_element_or_zero(r, c, from, inside) };
        }
    }
}

/// [`copy_tile`]'s copies of a whole tile inside the matrix, by 16-byte chunks (most
/// copies): no checks, and a thread's chunks are one column apart by a fixed number of rows,
/// so one pointer steps down them (measured: the checked form's address arithmetic was the
/// kernels' top stall, `ncu`'s fixed-latency dependencies).
///
/// # Safety
/// As [`copy_tile`] where `chunked`; the tile lies inside the matrix and `threads` is a
/// multiple of the chunks in a row ([`whole_tiles`]).
#[inline(always)]
unsafe fn copy_whole<T: Copy, const ROWS: u32, const COLS: u32>(
    dst: &SharedTile<T>,
    src: *const T,
    (row0, col0): (u32, u32),
    ld: u32,
    (tid, threads): (u32, u32),
) {
    let chunk = 16 / size_of::<T>() as u32;
    let per_row = COLS / chunk;
    let step = threads / per_row;
    let (r0, c) = (tid / per_row, (tid % per_row) * chunk);
    let at = (row0 + r0) as usize * ld as usize + (col0 + c) as usize;
    let mut from = src.wrapping_add(at);
    // The destinations as shared addresses, stepped by a constant: a 64-bit
    // generic pointer per copy, converted in each `cp.async`, held registers
    // across the mainloop (the host still checks each row against the tile).
    let to0 = shared_address(dst.row16(r0, c));
    let pitch = step * dst.row_bytes();
    for i in 0..ROWS * COLS / chunk / threads {
        let to = match cfg!(target_arch = "nvptx64") {
            true => to0 + i * pitch,
            false => shared_address(dst.row16(r0 + i * step, c)),
        };
        // SAFETY: `copy16_or_zero_at`'s points: `to` is row16(r0 + i step, c), a row < ROWS of
        // `dst` (tid < threads), 16-aligned; `from` is that chunk of the matrix (tile inside it,
        // src, ld, col0 + c chunk-aligned: the contract); unread until a wait and barrier.
        unsafe { copy16_or_zero_at(to, from, 16) };
        from = from.wrapping_add(step as usize * ld as usize);
    }
}

/// Whether `threads` copy a `ROWS x COLS` tile in whole rows of 16-byte chunks
/// ([`copy_whole`]'s layout).
const fn whole_tiles<T, const ROWS: u32, const COLS: u32>(threads: u32) -> bool {
    let chunks = COLS / (16 / size_of::<T>() as u32);
    threads.is_multiple_of(chunks) && (ROWS * chunks).is_multiple_of(threads)
}

/// Rows of block tiles that consecutive blocks walk through together, column by column: a
/// wave of 264 blocks of 128 x 64 then reads 16 row panels of A and ~17 column panels of B
/// instead of 2 of A and all of B's (which, at 8192^3, does not stay in L2).
const GROUP: u32 = 16;

/// This block's tile origin `(row0, col0)`, the grid's tiles of `bm x bn` taken in groups of
/// [`GROUP`] rows.
#[inline(always)]
fn grouped(bm: u32, bn: u32) -> (u32, u32) {
    let (tiles_n, tiles_m) = (grid_dim_x(), grid_dim_y());
    let id = block_idx_y() * tiles_n + block_idx_x();
    // (Divisors kept non-zero for the compiler: a launch has tiles, and this block is one.)
    let per_group = (GROUP * tiles_n).max(1);
    let first = (id / per_group) * GROUP;
    let rows = tiles_m.saturating_sub(first).clamp(1, GROUP);
    let within = id % per_group;
    ((first + within % rows) * bm, (within / rows) * bn)
}

/// Where a warp's lane works: its warp tile's origin and `(g, t)`.
#[derive(Clone, Copy)]
pub struct Lane {
    row: u32,
    col: u32,
    g: u32,
    t: u32,
}

/// The `mma`s of one stage, K step by K step: B's fragments of the step, then per m16 tile
/// its A fragment and the 4 `mma`s along N.
///
/// (Tried and dropped, H200: K permuted within each step so a lane's two A elements of a
/// row are adjacent, one 16-byte read for f64 instead of two 8-byte ones, with the pads
/// that keep those reads conflict-free: 8-9% slower for every DMMA configuration.)
///
/// The stage holds A MN-major where `A_T`, B K-major where `B_T` (as they are stored).
///
/// # Safety
/// The stage is complete (a wait and a barrier since its copies); every lane of the warp
/// calls it.
#[inline(always)]
unsafe fn multiply<
    T: Element,
    S: Scheme<Acc = T::Acc>,
    const BK: u32,
    const MT: usize,
    const A_T: bool,
    const B_T: bool,
>(
    stage: &Stage<T>,
    acc: &mut Accumulators<T::Acc, MT>,
    me: Lane,
) {
    for step in 0..BK / 8 {
        let reads = StepReads {
            stage,
            kk: 8 * step,
            me,
        };
        // SAFETY: `b`'s contract is this one's: the stage complete, every lane of the warp here
        // (constant trip counts).
        let bf = unsafe { reads.b::<S, B_T>() };
        for i in 0..MT {
            // SAFETY: as above, A's fragment of m16 tile i < MT.
            let af = unsafe { reads.a::<S, A_T>(i) };
            for j in 0..NT {
                acc[i][j] = S::mma(af, bf[j], acc[i][j]);
            }
        }
    }
}

/// [`multiply`] in K steps of 16, one instruction each ([`Step16::mma16`]).
///
/// # Safety
/// As [`multiply`].
#[inline(always)]
unsafe fn multiply16<
    T: Element,
    S: Step16<Acc = T::Acc>,
    const BK: u32,
    const MT: usize,
    const A_T: bool,
    const B_T: bool,
>(
    stage: &Stage<T>,
    acc: &mut Accumulators<T::Acc, MT>,
    me: Lane,
) {
    // SAFETY: `a_at`'s points: rows r + 8 (q % 2) < row + 16 MT <= BM and K kk + t + 4 (q / 2)
    // < kk + 16 <= BK lie in the stage, which is complete (this contract).
    let ga = |r: u32, kk: u32| unsafe { stage.a_at::<S, A_T>(r, kk) };
    // SAFETY: `b_at`'s points: K kk + t + 4 q < kk + 16 <= BK and column col + 8 j + g < col +
    // 32 <= BN lie in the stage, which is complete (this contract).
    let gb = |kk: u32, c: u32| unsafe { stage.b_at::<S, B_T>(kk, c) };
    let Lane { row, col, g, t } = me;
    for step in 0..BK / 16 {
        let kk = 16 * step;
        let mut bf = [[S::prepare(T::Acc::ZERO); 4]; NT];
        for j in 0..NT {
            let n = col + 8 * j as u32 + g;
            for q in 0..4 {
                bf[j][q] = gb(kk + t + 4 * q as u32, n);
            }
        }
        for i in 0..MT {
            let r = row + 16 * i as u32 + g;
            let mut af = [S::prepare(T::Acc::ZERO); 8];
            for q in 0..8 {
                af[q] = ga(r + 8 * (q as u32 % 2), kk + t + 4 * (q as u32 / 2));
            }
            for j in 0..NT {
                acc[i][j] = S::mma16(af, bf[j], acc[i][j]);
            }
        }
    }
}

/// A warp's fragments of one K step of 8: per m16 tile A's four elements, per n8 tile B's
/// two, as the tensor cores take them.
#[derive(Clone, Copy)]
struct Fragments<F, const MT: usize> {
    a: [[F; 4]; MT],
    b: [[F; 2]; NT],
}

/// Where lane `me` reads its fragments of K step `kk..kk + 8` of `stage`: A's of m16 tile
/// `i`, and B's (for [`multiply`]'s K steps of 8 and [`buffered`]).
#[derive(Clone, Copy)]
struct StepReads<'a, T> {
    stage: &'a Stage<T>,
    kk: u32,
    me: Lane,
}

impl<T: Element> StepReads<'_, T> {
    /// A's fragment of m16 tile `i` (the stage holds A MN-major where `A_T`).
    ///
    /// # Safety
    /// As [`multiply`].
    #[inline(always)]
    unsafe fn a<S: Scheme<Acc = T::Acc>, const A_T: bool>(&self, i: usize) -> [S::Frag; 4] {
        let (kk, Lane { row, g, t, .. }) = (self.kk, self.me);
        // SAFETY: `a_at`'s points: rows r, r + 8 < row + 16 MT <= BM and K kk + t (+ 4) < kk + 8 <=
        // BK lie in the stage, which is complete (`multiply`'s contract, this one's).
        let get = |r: u32, k: u32| unsafe { self.stage.a_at::<S, A_T>(r, k) };
        let r = row + 16 * i as u32 + g;
        [
            get(r, kk + t),
            get(r + 8, kk + t),
            get(r, kk + t + 4),
            get(r + 8, kk + t + 4),
        ]
    }

    /// B's fragments of the n8 tiles (the stage holds B K-major where `B_T`).
    ///
    /// # Safety
    /// As [`multiply`].
    #[inline(always)]
    unsafe fn b<S: Scheme<Acc = T::Acc>, const B_T: bool>(&self) -> [[S::Frag; 2]; NT] {
        let (kk, Lane { col, g, t, .. }) = (self.kk, self.me);
        // SAFETY: `b_at`'s points: K kk + t (+ 4) < kk + 8 <= BK and column col + 8 j + g < col +
        // 32 <= BN lie in the stage, which is complete (`multiply`'s contract, this one's).
        let get = |k: u32, c: u32| unsafe { self.stage.b_at::<S, B_T>(k, c) };
        let mut b = [[S::prepare(T::Acc::ZERO); 2]; NT];
        for (j, b) in b.iter_mut().enumerate() {
            let n = col + 8 * j as u32 + g;
            *b = [get(kk + t, n), get(kk + t + 4, n)];
        }
        b
    }
}

/// Waits until at most `n` (a constant once inlined, below 8) of this thread's copy groups
/// are in flight.
#[inline(always)]
fn wait_groups(n: u32) {
    match n {
        0 => wait_group::<0>(),
        1 => wait_group::<1>(),
        2 => wait_group::<2>(),
        3 => wait_group::<3>(),
        4 => wait_group::<4>(),
        5 => wait_group::<5>(),
        _ => wait_group::<6>(),
    }
}

/// The buffered mainloops' prologue: every stage's copies started (phase `s` into slot
/// `s`, by `first`), then phase 0 landed (this thread's copies, then the barrier: every
/// thread's). False where there are no phases.
#[inline(always)]
fn start_stages<T: Element, const DEPTH: u32>(
    stage: &impl Fn(u32) -> Stage<T>,
    first: &impl Fn(&Stage<T>, u32),
    phases: u32,
) -> bool {
    for s in 0..DEPTH {
        if s < phases {
            first(&stage(s), s);
        }
        commit_group();
    }
    if phases == 0 {
        return false;
    }
    wait_groups(DEPTH - 1);
    sync_threads();
    true
}

/// The stage a buffered mainloop's last K step of `phase` reads the next fragments from:
/// `phase + 1`'s, once it has landed, after `here` (which nobody reads past the barrier) is
/// refilled with phase `phase + DEPTH` (past the end a stage nobody writes any more).
#[inline(always)]
fn next_stage<T: Element, const DEPTH: u32>(
    (stage, copy): (&impl Fn(u32) -> Stage<T>, &impl Fn(&Stage<T>, u32)),
    here: &Stage<T>,
    phase: u32,
    phases: u32,
) -> Stage<T> {
    // Groups committed: phases up to `phase + DEPTH - 1`; `phase + 1` has landed when at
    // most DEPTH - 2 are in flight.
    wait_groups(DEPTH - 2);
    sync_threads();
    if phase + DEPTH < phases {
        copy(here, phase + DEPTH);
    }
    commit_group();
    stage((phase + 1) % DEPTH)
}

/// The mainloop with fragments double-buffered in registers, across stages too: each K
/// step's `mma`s are issued after the loads of the next step's fragments, and the wait and
/// barrier for the next stage come before the last K step's `mma`s, so the first fragments
/// of the next stage load while they run. (`pipelined`'s plain mainloop waits at the top
/// of each phase, and every warp's first `mma`s of a stage then wait for their fragments
/// with the tensor pipe idle; cuBLAS DGEMM's kernel on the same tile, 128 x 64 x 16 in 3
/// stages with 64 x 32 warp tiles, keeps that pipe 98% busy, ours 79%: ncu, H200.)
///
/// All `DEPTH` stages are in flight from the prologue: stage `phase % DEPTH` is refilled
/// with phase `phase + DEPTH` once the barrier before its last K step's `mma`s says no warp
/// reads it any more.
///
/// # Safety
/// As [`pipelined`]'s mainloop: `stage(s)` is slot `s`; `first` starts the copies of
/// phase `p < DEPTH` (the prologue's) into a slot, `copy` those of a later phase (the
/// loop's: kept apart so that the loop holds only the copies it runs); every thread of
/// the block runs it (its barriers are uniform).
#[inline(always)]
unsafe fn buffered<
    T: Element,
    S: Scheme<Acc = T::Acc>,
    const BK: u32,
    const DEPTH: u32,
    const MT: usize,
    const A_T: bool,
    const B_T: bool,
>(
    acc: &mut Accumulators<T::Acc, MT>,
    (stage, first, copy): (
        &impl Fn(u32) -> Stage<T>,
        &impl Fn(&Stage<T>, u32),
        &impl Fn(&Stage<T>, u32),
    ),
    phases: u32,
    me: Lane,
) {
    if !start_stages::<T, DEPTH>(stage, first, phases) {
        return;
    }
    let first = StepReads {
        stage: &stage(0),
        kk: 0,
        me,
    };
    let mut now = Fragments::<_, MT> {
        // SAFETY: stage 0 is complete: `start_stages` waited for phase 0's group and met the
        // barrier; every thread of the block runs this (the contract), so whole warps.
        a: core::array::from_fn(|i| unsafe { first.a::<S, A_T>(i) }),
        // SAFETY: as above, B's fragments of stage 0.
        b: unsafe { first.b::<S, B_T>() },
    };
    for phase in 0..phases {
        let here = stage(phase % DEPTH);
        for step in 0..BK / 8 {
            // The next step's fragments: this stage's, or after the last step the next
            // stage's (past the end a stage nobody writes any more: read, not used).
            let next = match step + 1 < BK / 8 {
                true => here,
                false => next_stage::<T, DEPTH>((stage, copy), &here, phase, phases),
            };
            let reads = StepReads {
                stage: &next,
                kk: 8 * ((step + 1) % (BK / 8)),
                me,
            };
            // B's next fragments beside this step's; A's tile by tile, each into the
            // registers its `mma`s have just read (72 registers of fragments, not 96).
            // SAFETY: `next` is `here` (complete since its wait and barrier) or the stage
            // `next_stage` waited for and met the barrier on (past the end one with no copy in
            // flight); the whole block runs this loop.
            let b = unsafe { reads.b::<S, B_T>() };
            for i in 0..MT {
                for j in 0..NT {
                    acc[i][j] = S::mma(now.a[i], now.b[j], acc[i][j]);
                }
                // SAFETY: as above, A's fragment of m16 tile i from `next`.
                now.a[i] = unsafe { reads.a::<S, A_T>(i) };
            }
            now.b = b;
        }
    }
}

/// [`buffered`] in K steps of 4 (`mma.sync` m16n8k4, [`Step4::mma4`]): a step's fragments
/// are half of a K step of 8's (per m16 tile 2 of A, per n8 tile 1 of B: 24 registers, not
/// 48), so two steps' are held whole. Each step's `mma`s issue after all of the next step's
/// loads, into registers no `mma` in flight reads: `buffered` reloads each A fragment into
/// the registers its `mma`s have just read (its 255 registers leave no others), and those
/// loads wait for the `mma`s to read their operands (35 of 51 loads a phase, SASS).
///
/// # Safety
/// As [`buffered`].
#[inline(always)]
unsafe fn buffered4<
    T: Element,
    S: Step4<Acc = T::Acc>,
    const BK: u32,
    const DEPTH: u32,
    const MT: usize,
    const A_T: bool,
    const B_T: bool,
>(
    acc: &mut Accumulators<T::Acc, MT>,
    (stage, first, copy): (
        &impl Fn(u32) -> Stage<T>,
        &impl Fn(&Stage<T>, u32),
        &impl Fn(&Stage<T>, u32),
    ),
    phases: u32,
    me: Lane,
) {
    if !start_stages::<T, DEPTH>(stage, first, phases) {
        return;
    }
    // Step `kk..kk + 4` of a stage: A's fragment of each m16 tile, B's of each n8 tile.
    let reads = |st: &Stage<T>, kk: u32| {
        let Lane { row, col, g, t } = me;
        let a: [[S::Frag; 2]; MT] = core::array::from_fn(|i| {
            let r = row + 16 * i as u32 + g;
            // SAFETY: `a_at`'s points: rows r, r + 8 < BM and K kk + t < BK in the stage, which is
            // complete (`start_stages` or `next_stage` waited and met the barrier for it).
            unsafe {
                [
                    st.a_at::<S, A_T>(r, kk + t),
                    st.a_at::<S, A_T>(r + 8, kk + t),
                ]
            }
        });
        let b: [S::Frag; NT] = core::array::from_fn(|j| {
            // SAFETY: as above: K kk + t < BK and column col + 8 j + g < BN, B in the same stage.
            unsafe { st.b_at::<S, B_T>(kk + t, col + 8 * j as u32 + g) }
        });
        (a, b)
    };
    let mut now = reads(&stage(0), 0);
    for phase in 0..phases {
        let here = stage(phase % DEPTH);
        for step in 0..BK / 4 {
            // The next step's fragments: this stage's, or after the last step the next
            // stage's (past the end a stage nobody writes any more: read, not used).
            let next = match step + 1 < BK / 4 {
                true => here,
                false => next_stage::<T, DEPTH>((stage, copy), &here, phase, phases),
            };
            let ahead = reads(&next, 4 * ((step + 1) % (BK / 4)));
            for i in 0..MT {
                for j in 0..NT {
                    acc[i][j] = S::mma4(now.0[i], now.1[j], acc[i][j]);
                }
            }
            now = ahead;
        }
    }
}

/// [`pipelined`] for every form: leading dimensions, alpha and beta, and A and B each as
/// stored (one mainloop per pair of orientations, chosen per launch).
///
/// # Safety
/// As [`pipelined`], with [`shared_elements`] for a strided kernel.
#[inline(always)]
pub unsafe fn strided<
    T: Element,
    S: Scheme<Acc = T::Acc>,
    R: Scheme<Acc = T::Acc>,
    L: Mainloop<S>,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const DEPTH: u32,
    const MT: usize,
>(
    gemm: Gemm<T>,
) {
    let st = gemm.p.strides();
    // SAFETY: `pipelined`'s points are this contract's, with `A_T` and `B_T` the problem's layout
    // (matched on its strides); the strided `shared_elements` hold either orientation.
    unsafe {
        match (st.a_t, st.b_t) {
            (false, false) => pipelined::<T, S, R, L, BM, BN, BK, DEPTH, MT, false, false>(gemm),
            (true, false) => pipelined::<T, S, R, L, BM, BN, BK, DEPTH, MT, true, false>(gemm),
            (false, true) => pipelined::<T, S, R, L, BM, BN, BK, DEPTH, MT, false, true>(gemm),
            (true, true) => pipelined::<T, S, R, L, BM, BN, BK, DEPTH, MT, true, true>(gemm),
        }
    }
}

/// The kernel: `DEPTH` stages of a `BM x BN` tile stepping `BK`, warp tiles of `MT` m16
/// tiles by 4 n8 tiles, each K step multiplied by `S`. Where `S` asks for it
/// ([`Scheme::REPAIR`]) and a block's sums hold a NaN, the block runs the mainloop again
/// with `R` and takes `R`'s sum for each element that is NaN. A is stored transposed where
/// `A_T` (its stage MN-major), B where `B_T` (its stage K-major); the TF32 kernels take
/// row-major, dense `C = A B` (both false; the host sets the leading dimensions and scale
/// so), the f64 ones every form through [`strided`].
///
/// # Safety
/// See the entry points; `threads(BM, BN, MT)` threads per block; T is f32 or f64 (its own
/// accumulator); the launch provides [`shared_elements`]; the problem's layout is `A_T`
/// and `B_T`.
#[inline(always)]
pub unsafe fn pipelined<
    T: Element,
    S: Scheme<Acc = T::Acc>,
    R: Scheme<Acc = T::Acc>,
    L: Mainloop<S>,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const DEPTH: u32,
    const MT: usize,
    const A_T: bool,
    const B_T: bool,
>(
    gemm: Gemm<T>,
) {
    let (m, n) = (gemm.p.m, gemm.p.n);
    if L::BUFFERED
        && L::APART
        && interior_block::<T, BM, BN, BK, MT, A_T, B_T>(
            &gemm,
            inside::<BM, BN>(grouped(BM, BN), (m, n)),
        )
    {
        // `dmma_k4`'s interior blocks run in a function of their own, so that the edge
        // blocks' checked copies do not crowd the buffered loop's registers (compiled
        // together: 255 registers, 35 of 51 fragment loads waiting on a `DMMA`; alone: 234,
        // and 12-18).
        // SAFETY: `interior_k4`'s points: this contract, and `interior_block` just said the block
        // at `grouped` moved `inside` (the origin `pipelined_body` loads from when buffered) is
        // interior.
        return unsafe { interior_k4::<T, S, R, L, BM, BN, BK, DEPTH, MT, A_T, B_T>(gemm) };
    }
    // SAFETY: `pipelined_body`'s contract is this one's; INTERIOR false claims nothing more.
    unsafe { pipelined_body::<T, S, R, L, OwnTiles, BM, BN, BK, DEPTH, MT, A_T, B_T, false>(gemm) }
}

/// [`pipelined`] with K split over the blocks of each tile ([`SplitStrips`]): the dense
/// product `C = A B`, B as stored or stored `n x k` (A row-major), `Problem::ctas` slices of
/// K, the last block of a tile adding them. `THREADS` = `threads(BM, BN, MT)`, `HALF` half
/// a thread's share of the tile (checked at compile time).
///
/// # Safety
/// See the entry points; the launch follows [`split_spec`]'s rules: `THREADS` threads, a
/// grid of `split_k_strips`' tiles by slices, [`shared_elements`] of the strided kernel, the
/// workspace's counters zero; the problem dense, B stored `n x k` where its layout says so.
#[inline(always)]
pub unsafe fn split<
    T: Element,
    S: Scheme<Acc = T::Acc>,
    L: Mainloop<S>,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const DEPTH: u32,
    const MT: usize,
    const THREADS: u32,
    const HALF: usize,
>(
    gemm: Gemm<T>,
) {
    // A scheme's repair and the interior blocks' own function are the one-block-per-tile
    // kernels'.
    const { assert!(!S::REPAIR && !L::APART) };
    // The body for B as stored or stored `n x k` (`$b_t`), A row-major.
    macro_rules! body {
        ($b_t:literal) => {
            pipelined_body::<
                T,
                S,
                S,
                L,
                SplitStrips<THREADS, HALF>,
                BM,
                BN,
                BK,
                DEPTH,
                MT,
                false,
                $b_t,
                false,
            >(gemm)
        };
    }
    // SAFETY: `pipelined_body`'s contract is this one's, B as its layout says.
    unsafe {
        match gemm.p.strides().b_t {
            false => body!(false),
            true => body!(true),
        }
    }
}

/// The spec of a [`split`] kernel on this tile (f64, sm_90a): [`spec`]'s, for the dense
/// product with B as stored or stored `n x k`, on `split_k_strips`' grid.
pub const fn split_spec(
    name_file: (&'static str, &'static str),
    idea: &'static str,
    (bm, bn, bk, depth, mt): (u32, u32, u32, u32, usize),
    blocks: u32,
) -> KernelSpec {
    let exact = (Arch::Sm90a, Elem::F64, Precision::Exact);
    let spec = spec(name_file, idea, exact, (bm, bn, bk, depth, mt), blocks);
    // The tile's sums and the last block's flag take the stages' bytes.
    assert!(bm * bn + 2 <= shared_elements(bm, bn, bk, depth, 8, true));
    KernelSpec {
        strided: false,
        ..spec
    }
    .with_b_transposed()
    .with_grid(Grid::SplitKStrips)
}

/// [`pipelined`] of a [`Buffered4`] mainloop for a block that [`interior_block`] says is interior, not
/// inlined.
///
/// # Safety
/// As [`pipelined`], for an interior block.
#[inline(never)]
unsafe fn interior_k4<
    T: Element,
    S: Scheme<Acc = T::Acc>,
    R: Scheme<Acc = T::Acc>,
    L: Mainloop<S>,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const DEPTH: u32,
    const MT: usize,
    const A_T: bool,
    const B_T: bool,
>(
    gemm: Gemm<T>,
) {
    // SAFETY: `pipelined_body`'s contract is this one's; INTERIOR (with a buffered mainloop) is this
    // contract's interior block.
    unsafe { pipelined_body::<T, S, R, L, OwnTiles, BM, BN, BK, DEPTH, MT, A_T, B_T, true>(gemm) }
}

/// [`pipelined`]'s body; `INTERIOR`: the block is interior (the buffered mainloop only).
///
/// # Safety
/// As [`pipelined`].
#[inline(always)]
unsafe fn pipelined_body<
    T: Element,
    S: Scheme<Acc = T::Acc>,
    R: Scheme<Acc = T::Acc>,
    L: Mainloop<S>,
    W: TileWork,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const DEPTH: u32,
    const MT: usize,
    const A_T: bool,
    const B_T: bool,
    const INTERIOR: bool,
>(
    gemm: Gemm<T>,
) {
    let (a, b, _, m, n, k) = gemm.plain();
    let st = gemm.p.strides();
    let chunked = chunked_operands::<T, A_T, B_T>(&gemm);
    let tid = thread_idx_x();
    let warp = tid / 32;
    let me = Lane {
        row: (warp / (BN / 32)) * 16 * MT as u32,
        col: (warp % (BN / 32)) * 32,
        g: (tid % 32) / 4,
        t: tid % 4,
    };
    let (own, (k_first, k_end)) = W::place::<T, BM, BN, BK>(&gemm, L::BUFFERED);
    // The block loads and multiplies the tile at `(row0, col0)`, and stores its elements from
    // `own` on: the rest are its neighbour's. (Blocks that share a tile by slices of K
    // multiply it where it is: the slices' sums meet at its origin.)
    let (row0, col0) = match W::SPLIT {
        false => inside::<BM, BN>(own, (m, n)),
        true => own,
    };
    // SAFETY: the launch provides `shared_elements` (the contract): DEPTH stages of A's and B's
    // padded tiles in either orientation, then 16 bytes of flag: the carves below.
    let mut arena = unsafe { SharedArena::<T>::launch_sized() };
    // A stage's operands as stored: K-major rows padded by PAD_A, MN-major by 32 bytes.
    let pad_mn = pad_b(size_of::<T>() as u32);
    let (a_rows, a_len) = if A_T {
        (BK, BM + pad_mn)
    } else {
        (BM, BK + PAD_A)
    };
    let (b_rows, b_len) = if B_T {
        (BN, BK + PAD_A)
    } else {
        (BK, BN + pad_mn)
    };
    let a_all = arena.tile(DEPTH * a_rows, a_len);
    let b_all = arena.tile(DEPTH * b_rows, b_len);
    let stage = |s: u32| Stage {
        a: a_all.window(s * a_rows, a_rows),
        b: b_all.window(s * b_rows, b_rows),
    };
    // SAFETY: `copy_tile`'s points: where `chunked`, `chunked_operands` checked cols, ld and
    // alignment; the `threads(BM, BN, MT)` threads of the launch; called only on a stage nobody
    // reads until a wait and barrier (the prologue's, or past the barrier after its last reader).
    let copy = |s: &Stage<T>, k0: u32| unsafe {
        let me = (tid, threads(BM, BN, MT));
        match A_T {
            false => copy_tile::<T, BM, BK>(&s.a, a, (row0, k0), (m, k, st.lda), me, chunked),
            true => copy_tile::<T, BK, BM>(&s.a, a, (k0, row0), (k, m, st.lda), me, chunked),
        }
        match B_T {
            false => copy_tile::<T, BK, BN>(&s.b, b, (k0, col0), (k, n, st.ldb), me, chunked),
            true => copy_tile::<T, BN, BK>(&s.b, b, (col0, k0), (n, k, st.ldb), me, chunked),
        }
    };
    let phases = (k_end - k_first).div_ceil(BK);
    let mainloop = |acc: &mut Accumulators<T::Acc, MT>, multiply: Multiply<T, MT>| {
        // Prologue: DEPTH - 1 phases in flight, one group each (empty past the end, so
        // every wait counts the same groups).
        for s in 0..DEPTH - 1 {
            if s < phases {
                copy(&stage(s), k_first + s * BK);
            }
            commit_group();
        }
        for phase in 0..phases {
            // This thread's copies of `phase` have landed; the barrier says everyone's
            // have, and that everyone is done with the stage the next copies overwrite.
            wait_groups(DEPTH.saturating_sub(2));
            sync_threads();
            let ahead = phase + DEPTH - 1;
            if ahead < phases {
                copy(&stage(ahead % DEPTH), k_first + ahead * BK);
            }
            commit_group();
            multiply(&stage(phase % DEPTH), acc);
        }
    };
    // A scheme that repairs NaNs has a flag after the stages: raised (by any thread) when a
    // sum of the block is NaN. Lowered before the mainloop, whose barriers (or the one
    // after it, where K = 0) order that before any raise.
    let flag = arena
        .tile(1, 16 / size_of::<T>() as u32)
        .row16(0, 0)
        .cast_mut()
        .cast::<u32>();
    if S::REPAIR && tid == 0 {
        // SAFETY: `flag` is the 4-aligned first word of the 16-byte flag tile (checked on the
        // host); only thread 0 writes it, and nobody reads it before the barriers below.
        unsafe { flag.write(0) };
    }
    let mut acc = [[[T::Acc::ZERO; 4]; NT]; MT];
    // A block whose every stage lies inside A and B copies them without checks: only
    // then the buffered mainloop (with the checked copies' state live across it, it
    // spilled 480 bytes at 255 registers, 59 `LDL`s a phase; without, 238 and none).
    let threads = threads(BM, BN, MT);
    let interior = interior_block::<T, BM, BN, BK, MT, A_T, B_T>(&gemm, (row0, col0));
    // (A [`Buffered4`] kernel's interior blocks come here with `INTERIOR`: its other blocks,
    // C under a tile or operands off 16-byte chunks, take the plain mainloop.)
    if L::BUFFERED && (INTERIOR || interior && !L::APART) {
        // A K that is not a multiple of BK: its last, partial stage goes first (phase 0,
        // copied with checks in the prologue), so every copy inside the loop is whole.
        let tail = !(k_end - k_first).is_multiple_of(BK) as u32;
        let k0 = |phase: u32| match phase < tail {
            true => k_first + (k_end - k_first) / BK * BK,
            false => k_first + (phase - tail) * BK,
        };
        let first = |s: &Stage<T>, phase: u32| copy(s, k0(phase));
        // SAFETY: `copy_whole`'s points: `interior` (`interior_block`; or INTERIOR, the same test)
        // says chunked, whole tiles, block inside M and N; its phases (>= DEPTH) satisfy k0 + BK <=
        // k_end <= k; `next_stage` refills a slot past the barrier after its last reader.
        let whole = |s: &Stage<T>, phase: u32| unsafe {
            let (me, k0) = ((tid, threads), k_first + (phase - tail) * BK);
            match A_T {
                false => copy_whole::<T, BM, BK>(&s.a, a, (row0, k0), st.lda, me),
                true => copy_whole::<T, BK, BM>(&s.a, a, (k0, row0), st.lda, me),
            }
            match B_T {
                false => copy_whole::<T, BK, BN>(&s.b, b, (k0, col0), st.ldb, me),
                true => copy_whole::<T, BN, BK>(&s.b, b, (col0, k0), st.ldb, me),
            }
        };
        let at = (&stage, &first, &whole);
        // SAFETY: the mainloop's points: `stage(s)` is slot s, `first` copies phases < DEPTH with
        // checks, `whole` later ones (above); the branch is block-uniform, so every thread is here.
        unsafe { L::buffered::<T, BK, DEPTH, MT, A_T, B_T>(&mut acc, at, phases, me) };
    } else {
        // SAFETY: `multiply`'s points: `mainloop` calls it on a stage after its wait and barrier;
        // every thread of the block (whole warps) runs the mainloop.
        mainloop(&mut acc, &|s, acc| unsafe {
            L::multiply::<T, BK, MT, A_T, B_T>(s, acc, me)
        });
    }
    if S::REPAIR {
        // Past this barrier nobody reads a stage or has copies in flight.
        sync_threads();
        let mut nan = false;
        for i in 0..MT {
            for j in 0..NT {
                for e in 0..4 {
                    nan |= acc[i][j][e].is_nan();
                }
            }
        }
        if nan {
            // SAFETY: the flag word as above; several threads may store the same 1 here, all
            // between the two barriers, which order them before every read (the host runs a block's
            // threads one at a time).
            unsafe { flag.write(1) };
        }
        sync_threads();
        // The same answer for every thread: the repair's barriers stay uniform.
        // SAFETY: the flag word as above, read after the barrier that ends every write to it.
        if unsafe { flag.read() } != 0 {
            let mut again = [[[T::Acc::ZERO; 4]; NT]; MT];
            // SAFETY: as for the first mainloop, `multiply` with R; the barriers above left no
            // stage read and no copy in flight, so the prologue may refill them.
            mainloop(&mut again, &|s, acc| unsafe {
                multiply::<T, R, BK, MT, A_T, B_T>(s, acc, me)
            });
            for i in 0..MT {
                for j in 0..NT {
                    for e in 0..4 {
                        if acc[i][j][e].is_nan() {
                            acc[i][j][e] = again[i][j][e];
                        }
                    }
                }
            }
        }
    }
    // SAFETY: `finish`'s points: the block multiplied the tile at `(row0, col0)` that `place`
    // gave (moved `inside` only where not split), every thread of the block gets here.
    unsafe { W::finish::<T, BM, BN, BK, MT>(&gemm, &acc, ((row0, col0), own), me) };
}

/// Which tile and slice of K a block of [`pipelined`]'s body multiplies, and where its sums
/// go: [`OwnTiles`] or [`SplitStrips`].
pub trait TileWork {
    /// Whether the blocks of a tile share its K by slices (its origin is then not moved
    /// [`inside`] C).
    const SPLIT: bool;

    /// This block's tile origin, in groups of rows where `grouped` (a buffered mainloop),
    /// and its slice of K steps `(k_first, k_end)`.
    fn place<T: Element, const BM: u32, const BN: u32, const BK: u32>(
        gemm: &Gemm<T>,
        grouped: bool,
    ) -> ((u32, u32), (u32, u32));

    /// Writes the warp's sums of the tile it multiplied at `at` (`own`: the block's tile
    /// as `place` gave it).
    ///
    /// # Safety
    /// The block multiplied the tile `place` gave (moved [`inside`] C only where not
    /// `SPLIT`) over its slice of K; every thread of the block calls it; the launch follows
    /// the kernel's rules.
    unsafe fn finish<T: Element, const BM: u32, const BN: u32, const BK: u32, const MT: usize>(
        gemm: &Gemm<T>,
        acc: &Accumulators<T::Acc, MT>,
        at: ((u32, u32), (u32, u32)),
        me: Lane,
    );
}

/// A block per tile and the whole of K, the sums stored to C with alpha and beta.
pub struct OwnTiles;

impl TileWork for OwnTiles {
    const SPLIT: bool = false;

    #[inline(always)]
    fn place<T: Element, const BM: u32, const BN: u32, const BK: u32>(
        gemm: &Gemm<T>,
        grouped_rows: bool,
    ) -> ((u32, u32), (u32, u32)) {
        let own = match grouped_rows {
            true => grouped(BM, BN),
            false => (block_idx_y() * BM, block_idx_x() * BN),
        };
        (own, (0, gemm.p.k))
    }

    #[inline(always)]
    unsafe fn finish<T: Element, const BM: u32, const BN: u32, const BK: u32, const MT: usize>(
        gemm: &Gemm<T>,
        acc: &Accumulators<T::Acc, MT>,
        ((row0, col0), own): ((u32, u32), (u32, u32)),
        me: Lane,
    ) {
        let out = gemm.c_out();
        let at = (row0 + me.row, col0 + me.col);
        // SAFETY: `epilogue`'s points: `c_out` is this product's C, m x n at ldc (the entry
        // points' contract); each lane writes its own elements of its warp tile of this block's
        // tile, from `own` on: the elements of a tile moved `inside` before `own` are the
        // neighbouring block's, which stores them.
        unsafe { epilogue::<T, MT>(&out, acc, (gemm.p.m, gemm.p.n), at, own, me) };
    }
}

/// The blocks of a tile (a strip of `split_k_strips`) each take a slice of K
/// (`Problem::ctas` of them); each writes its sums to its plane of the workspace, and the
/// last of the tile's blocks to finish adds them in K order into C (dense, `C = A B`).
/// `THREADS` is the block's threads, `HALF` half a thread's share of the tile.
pub struct SplitStrips<const THREADS: u32, const HALF: usize>;

impl<const THREADS: u32, const HALF: usize> TileWork for SplitStrips<THREADS, HALF> {
    const SPLIT: bool = true;

    #[inline(always)]
    fn place<T: Element, const BM: u32, const BN: u32, const BK: u32>(
        gemm: &Gemm<T>,
        _grouped_rows: bool,
    ) -> ((u32, u32), (u32, u32)) {
        let block = StripBlock::this(gemm, (BM, BN), BK);
        (block.origin, block.k)
    }

    #[inline(always)]
    unsafe fn finish<T: Element, const BM: u32, const BN: u32, const BK: u32, const MT: usize>(
        gemm: &Gemm<T>,
        acc: &Accumulators<T::Acc, MT>,
        (origin, k): ((u32, u32), (u32, u32)),
        me: Lane,
    ) {
        const { assert!(THREADS == threads(BM, BN, MT)) };
        wait_group::<0>();
        sync_threads(); // every thread is done with the stages: the sums take their bytes
        // SAFETY: the launch provides `shared_elements`, at least the tile's accumulators and a
        // flag (`split_spec` checks).
        let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
        let sums = arena.tile(BM, BN);
        let last_flag = arena.tile(1, 16 / size_of::<T::Acc>() as u32);
        for i in 0..MT {
            for j in 0..NT {
                for e in 0..4 {
                    // D's (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1) of m16 tile i,
                    // n8 tile j.
                    let r = me.row + 16 * i as u32 + me.g + 8 * (e as u32 / 2);
                    let c = me.col + 8 * j as u32 + 2 * me.t + e as u32 % 2;
                    // SAFETY: (r, c) lies in the BM x BN tile (the warp tile inside it); the
                    // element is this lane's alone, and the stages' bytes are read no more.
                    unsafe { sums.set(r, c, acc[i][j][e]) };
                }
            }
        }
        sync_threads(); // every warp's sums are in
        // Where `place` put the block.
        let block = StripBlock::placed(origin, k);
        let sums = StripSums {
            tile: sums,
            parts: 1,
            rows: BM,
            cols: BN,
        };
        // SAFETY: `finish`'s points: the launch follows `split_spec`'s rules (C dense, the
        // workspace's counters zero, THREADS threads); the sums are complete since the barrier
        // above and unwritten from here on; `last_flag` is the block's own.
        unsafe { finish::<T, BM, BN, THREADS, HALF>(gemm, block, &sums, &last_flag) };
    }
}

/// Where a block whose tile at `(row0, col0)` crosses C's last row or column loads from:
/// moved back to end at C's edge, where C has a whole tile's rows or columns. Its loads are
/// then whole tiles, so an edge block runs the interior mainloop: with checked copies, edge
/// blocks took several times an interior block's time, and made `dmma_k4` 11% (3000^3) to
/// 59% (1000^3) slower than it now is (H200).
///
/// The moved origin (C's side less the tile's) keeps the 16-byte chunks of an operand
/// stored along that side aligned: chunked copies need the side a multiple of the chunk,
/// and the tile is one. It may be odd where C's columns are (the epilogue then stores no
/// pairs).
#[inline(always)]
fn inside<const BM: u32, const BN: u32>(
    (row0, col0): (u32, u32),
    (m, n): (u32, u32),
) -> (u32, u32) {
    let back = |at: u32, side: u32, whole: u32| match at + side > whole && whole >= side {
        true => whole - side,
        false => at,
    };
    (back(row0, BM, m), back(col0, BN, n))
}

/// Whether the block at `(row0, col0)` runs [`pipelined`]'s buffered mainloop: its tiles
/// lie inside A and B (and C) at every phase, in whole aligned 16-byte chunks that the
/// block's threads copy in whole rows.
#[inline(always)]
fn interior_block<
    T: Element,
    const BM: u32,
    const BN: u32,
    const BK: u32,
    const MT: usize,
    const A_T: bool,
    const B_T: bool,
>(
    gemm: &Gemm<T>,
    (row0, col0): (u32, u32),
) -> bool {
    let (_, _, _, m, n, _) = gemm.plain();
    let threads = threads(BM, BN, MT);
    let whole = match A_T {
        false => whole_tiles::<T, BM, BK>(threads),
        true => whole_tiles::<T, BK, BM>(threads),
    } && match B_T {
        false => whole_tiles::<T, BK, BN>(threads),
        true => whole_tiles::<T, BN, BK>(threads),
    };
    whole && chunked_operands::<T, A_T, B_T>(gemm) && row0 + BM <= m && col0 + BN <= n
}

/// Whether A and B (stored transposed where `A_T`, `B_T`) come in whole, aligned 16-byte
/// chunks: each operand's rows as stored and its leading dimension a multiple of the chunk,
/// its start 16-byte aligned.
#[inline(always)]
fn chunked_operands<T: Element, const A_T: bool, const B_T: bool>(gemm: &Gemm<T>) -> bool {
    let (a, b, _, m, n, k) = gemm.plain();
    let st = gemm.p.strides();
    // Each operand's rows as stored.
    let (a_cols, b_cols) = (if A_T { m } else { k }, if B_T { k } else { n });
    rows_in_chunks(a, a_cols, st.lda) && rows_in_chunks(b, b_cols, st.ldb)
}

/// Writes the warp's accumulators to `out`'s C (rows g, g + 8 and columns 2t, 2t + 1 of
/// each tile), finished with alpha and beta: pairs where both lie inside C and C's rows
/// keep them aligned, elements at the edges; only rows from `own.0` and columns from
/// `own.1` on (the block's own tile, where [`inside`] moved the one it multiplied, whose
/// columns may then start odd: elements there).
///
/// # Safety
/// `out.c` holds C's `m x n` elements `out.ldc` apart; no other thread writes these elements
/// from `own` on.
#[inline(always)]
unsafe fn epilogue<T: Element, const MT: usize>(
    out: &COut<T::Acc, T::Out>,
    acc: &Accumulators<T::Acc, MT>,
    (m, n): (u32, u32),
    (row0, col0): (u32, u32),
    own: (u32, u32),
    me: Lane,
) {
    let pairs =
        out.ldc.is_multiple_of(2) && col0.is_multiple_of(2) && aligned16(out.c.cast_const());
    for i in 0..MT {
        for j in 0..NT {
            for h in 0..2 {
                let row = row0 + 16 * i as u32 + me.g + 8 * h;
                let col = col0 + 8 * j as u32 + 2 * me.t;
                let v = [acc[i][j][2 * h as usize], acc[i][j][2 * h as usize + 1]];
                let at = row as usize * out.ldc as usize + col as usize;
                let mine = |e: u32| row >= own.0 && col + e >= own.1;
                if row < m && col + 1 < n && mine(0) && pairs {
                    // SAFETY: `put2`'s points: (row, col..col + 2) inside C and this lane's own
                    // (from `own` on); 2-aligned: ldc and col (as col0) even, C 16-byte aligned
                    // (`pairs`).
                    unsafe { out.put2(at, v) };
                } else {
                    for e in 0..2 {
                        if row < m && col + e < n && mine(e) {
                            // SAFETY: `put`'s points: (row, col + e) inside C, this lane's own
                            // element.
                            unsafe { out.put(at + e as usize, v[e as usize]) };
                        }
                    }
                }
            }
        }
    }
}
