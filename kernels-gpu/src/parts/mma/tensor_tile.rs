//! The block tile shared by the tensor-core kernels (`mma_sync`, `mma_ldmatrix`,
//! `mma_async`, `mma_wide`): 8 warps compute a 128 x BN tile of C stepping BK = 32 along K,
//! 2 x 4 warps each with a 64 x BN/4 warp tile of 4 x NT `mma.m16n8k16` tiles (NT = BN / 32)
//! with f32 accumulators. The 16-bit tiles
//! sit in shared memory as they come (A and B row-major), rows padded by 8 elements (16
//! bytes) so that a warp's fragment reads, 32-bit or `ldmatrix` rows, hit distinct banks.
//! How the fragments come out of shared memory is the kernels' difference ([`Fragments`]);
//! loading phases, the K-step multiply and the epilogue are here.
use crate::catalogue::PtxFact::{AtLeast, Has, Lacks};
use crate::catalogue::{
    Arch, Elem, KernelSpec, NARROW_C, PtxFacts, SIXTEEN_BIT, Shared, Threads, Tile,
};
use crate::device::global::{load4_or_zeros, store, store4};
use crate::device::shared::SharedTile;
use crate::device::shuffle;
use crate::device::vector::aligned4;
use crate::element::{Element, Half, Output};

pub const BM: u32 = 128;
pub const BK: u32 = 32;
/// Row padding of the shared tiles, in elements (16 bytes).
pub const PAD: u32 = 8;
/// Threads of a block: 8 warps, 2 along M by 4 along N.
pub const THREADS: u32 = 256;
const WARPS_N: u32 = 4;
/// `mma` tiles of 16 rows per warp tile (its columns: NT tiles of 8).
pub const MT: usize = 4;

/// Input elements of one stage in shared memory: A (BM x (bk + PAD)) and B (bk x (bn + PAD)).
pub const fn stage_elements(bn: u32, bk: u32) -> u32 {
    BM * (bk + PAD) + bk * (bn + PAD)
}

/// A warp's accumulators: 4 x NT tiles of 4 f32 per lane.
pub type Accumulators<A, const NT: usize> = [[[A; 4]; NT]; MT];

/// One stage of the tiles in shared memory.
#[derive(Clone, Copy)]
pub struct Stage<T> {
    pub a: SharedTile<T>,
    pub b: SharedTile<T>,
}

/// Where this thread is: its warp tile's origin in the block tile and its lane.
#[derive(Clone, Copy)]
pub struct Lane {
    pub warp_row: u32,
    pub warp_col: u32,
    pub lane: u32,
}

impl Lane {
    /// Thread `tid` of a block tile `BN` wide.
    #[inline(always)]
    pub fn of<const BN: u32>(tid: u32) -> Self {
        let warp = tid / 32;
        Self {
            warp_row: (warp / WARPS_N) * 64,
            warp_col: (warp % WARPS_N) * (BN / WARPS_N),
            lane: tid % 32,
        }
    }

    /// `(g, t)`: the lane's group (row) and its place in the group (column pair).
    #[inline(always)]
    pub fn group(&self) -> (u32, u32) {
        (self.lane / 4, self.lane % 4)
    }
}

/// How a warp gets one K step's fragments out of a stage.
pub trait Fragments {
    /// The A fragments of the warp's 4 m16 tiles and the B fragments of its NT n8 tiles, for
    /// the 16 K steps from `kk`.
    ///
    /// # Safety
    /// The stage is complete (a barrier since its last store); every lane of the warp calls
    /// it.
    unsafe fn load<T: Half, const NT: usize>(
        stage: &Stage<T>,
        kk: u32,
        me: Lane,
    ) -> ([[u32; 4]; MT], [[u32; 2]; NT]);
}

/// The `mma` of a stage `BK` deep, K step of 16 by K step. With `PREFETCH` each step's
/// fragments are loaded a step ahead, so their latency hides behind the previous step's
/// `mma` (the order of the instructions is the source's: they are `asm!`).
///
/// # Safety
/// As [`Fragments::load`].
#[inline(always)]
pub unsafe fn multiply<
    T: Half,
    F: Fragments,
    const NT: usize,
    const STAGE_K: u32,
    const PREFETCH: bool,
>(
    stage: &Stage<T>,
    acc: &mut Accumulators<T::Acc, NT>,
    me: Lane,
) {
    let mut next = if PREFETCH {
        // SAFETY: `load`'s contract is this one's (the stage complete, every lane of the warp
        // here); K step 0 is inside the stage.
        unsafe { F::load::<T, NT>(stage, 0, me) }
    } else {
        ([[0; 4]; MT], [[0; 2]; NT])
    };
    for step in 0..STAGE_K / 16 {
        let (af, bf) = if PREFETCH {
            let here = next;
            if step + 1 < STAGE_K / 16 {
                // SAFETY: as above, for K step 16 (step + 1) < STAGE_K; the trip count is a
                // constant, so the whole warp gets here.
                next = unsafe { F::load::<T, NT>(stage, 16 * (step + 1), me) };
            }
            here
        } else {
            // SAFETY: as above, for K step 16 step < STAGE_K.
            unsafe { F::load::<T, NT>(stage, 16 * step, me) }
        };
        mma_step::<T, NT>(acc, (&af, &bf));
    }
}

/// The warp tile's `mma` of one K step of 16: every m16 tile by every n8 tile.
#[inline(always)]
pub fn mma_step<T: Half, const NT: usize>(
    acc: &mut Accumulators<T::Acc, NT>,
    (af, bf): (&[[u32; 4]; MT], &[[u32; 2]; NT]),
) {
    for i in 0..MT {
        for j in 0..NT {
            acc[i][j] = T::mma_m16n8k16(af[i], bf[j], acc[i][j]);
        }
    }
}

/// Whether a whole `BM x BN` block tile of A and B can load 4 elements per access.
#[inline(always)]
pub fn interior<T: Element, const BN: u32>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0): (u32, u32),
) -> bool {
    row0 + BM <= m
        && col0 + BN <= n
        && k.is_multiple_of(4)
        && n.is_multiple_of(4)
        && aligned4(a)
        && aligned4(b)
}

/// Loads phase `k0`'s tiles of A and B (`BN` wide) into `stage` through registers, in runs
/// of 16 elements of a row; zeros outside A and B.
///
/// # Safety
/// `a` is `m x k` and `b` is `k x n`; no thread reads `stage` until the next barrier;
/// `vector` as [`interior`] (and the phase whole: `k0 + BK <= k`).
#[inline(always)]
pub unsafe fn load_phase<T: Element, const BN: u32>(
    stage: &Stage<T>,
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0, k0): (u32, u32, u32),
    tid: u32,
    vector: bool,
) {
    // A: 2 runs a row, one per thread; B: BN / 16 runs a row, BN / 128 per thread (a
    // 64-wide B: the first half of the threads, one each).
    let (ar, ac) = (tid / 2, (tid % 2) * 16);
    for q in 0..4 {
        // SAFETY: a holds m x k (the contract); with `vector` the four are inside and 4-aligned
        // (`interior`, k0 + BK <= k); `set4` at (ar < BM, ac + 4q + 4 <= BK), rows of BK + PAD:
        // this thread's run, which nobody reads until the next barrier (the contract).
        unsafe {
            let va = load4_or_zeros(a, (row0 + ar, k0 + ac + 4 * q), (m, k), vector);
            stage.a.set4(ar, ac + 4 * q, va);
        }
    }
    let runs = BK * BN / 16;
    for run in 0..runs.div_ceil(THREADS) {
        let e = tid + run * THREADS;
        if runs < THREADS && e >= runs {
            break;
        }
        let (br, bc) = (e / (BN / 16), (e % (BN / 16)) * 16);
        for q in 0..4 {
            // SAFETY: as for A: b holds k x n; with `vector`, col0 + BN <= n, n % 4 == 0 and
            // `aligned4(b)`; `set4` at (br < BK, bc + 4q + 4 <= BN) of this thread's own run `e`.
            unsafe {
                let vb = load4_or_zeros(b, (k0 + br, col0 + bc + 4 * q), (k, n), vector);
                stage.b.set4(br, bc + 4 * q, vb);
            }
        }
    }
}

/// Writes the warp's accumulators to C (rows g and g + 8, columns 2t and 2t + 1 of each
/// tile), only what lies inside C. With a 16-bit C in whole block tiles, lanes `t` and
/// `t ^ 1` first swap pairs of two neighbouring tiles so that each stores 4 consecutive
/// columns (as `wgmma_async::epilogue`): single-element stores wrote a 16-bit C two bytes
/// at a time, a quarter of a 32-byte sector per warp row. The shuffles' branch depends only
/// on the launch and the block tile, never on the warp; rows past `m` skip their stores.
///
/// # Safety
/// `c` is `m x n`, row-major; no other thread writes these elements.
#[inline(always)]
pub unsafe fn epilogue<T: Element, const NT: usize>(
    c: *mut T::Out,
    acc: &Accumulators<T::Acc, NT>,
    (m, n): (u32, u32),
    (row0, col0): (u32, u32),
    me: Lane,
) {
    let (g, t) = me.group();
    let quads = <T::Out as Output>::HALF_WORD
        && NT.is_multiple_of(2)
        && NT <= 8
        && n.is_multiple_of(4)
        && (c as usize).is_multiple_of(4 * size_of::<T::Out>())
        && col0 + 4 * 8 * NT as u32 <= n;
    if !quads {
        for i in 0..MT {
            for j in 0..NT {
                for h in 0..2 {
                    let row = row0 + me.warp_row + 16 * i as u32 + g + 8 * h;
                    let col = col0 + me.warp_col + 8 * j as u32 + 2 * t;
                    for e in 0..2 {
                        if row < m && col + e < n {
                            let at = row as usize * n as usize + (col + e) as usize;
                            let value = T::out(acc[i][j][2 * h as usize + e as usize]);
                            // SAFETY: `store`'s points: row < m and col + e < n, inside the m x n C
                            // (the contract), and an element of this lane's fragment only.
                            unsafe { store(c, at, value) };
                        }
                    }
                }
            }
        }
        return;
    }
    // The written-out rows and tile pairs below cover MT = 4 and NT <= 8.
    const { assert!(MT == 4) };
    let odd = t % 2;
    let word = |i: usize, j: usize, h: usize| {
        <T::Out as Output>::to_word([T::out(acc[i][j][2 * h]), T::out(acc[i][j][2 * h + 1])])
    };
    // Tile pair `p` of row `i`: an even lane sends its second tile's pair, an odd one its
    // first's (selects, not an index by lane). Written out: as loops, LLVM did not unroll
    // the 128 x 256 tiles' and sent their accumulators to local memory.
    macro_rules! tile_pair {
        ($i:literal, $p:literal) => {
            if $p < NT / 2 {
                let (j0, j1) = (2 * $p, 2 * $p + 1);
                let first = [word($i, j0, 0), word($i, j0, 1)];
                let second = [word($i, j1, 0), word($i, j1, 1)];
                let send = if odd == 0 { second } else { first };
                // SAFETY: `xor`'s point: the whole warp is here with mask 1: `quads` and `$p < NT /
                // 2` depend only on the launch and block tile, and the callers run the epilogue in
                // whole warps.
                let got = unsafe { shuffle::xor(send, 1) };
                let col = col0 + me.warp_col + 16 * $p + 6 * odd + 2 * t;
                for h in 0..2 {
                    let row = row0 + me.warp_row + 16 * $i + g + 8 * h as u32;
                    let both = match odd {
                        0 => [first[h], got[h]],
                        _ => [got[h], second[h]],
                    };
                    if row < m {
                        let at = row as usize * n as usize + col as usize;
                        // SAFETY: `store4`'s points: row < m, the four columns below col0 + 32 NT
                        // <= n (`quads`); index 4-aligned (n % 4 == 0, col a multiple of 4, C
                        // 4-element aligned); the quad's lanes store disjoint fours.
                        unsafe { store4(c, at, <T::Out as Output>::from_words(both)) };
                    }
                }
            }
        };
    }
    macro_rules! row_of_tiles {
        ($i:literal) => {
            tile_pair!($i, 0);
            tile_pair!($i, 1);
            tile_pair!($i, 2);
            tile_pair!($i, 3);
        };
    }
    row_of_tiles!(0);
    row_of_tiles!(1);
    row_of_tiles!(2);
    row_of_tiles!(3);
}
/// `mma.sync` m16n8k16 on 16-bit inputs (`{t}`), f32 accumulators: the instruction of every
/// kernel on this tile.
pub const MMA_16BIT: &str = "mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32";

/// The entries with an f32 C: the `mma`s, and C stored in pairs, no shuffle.
pub const F32_C: PtxFacts = PtxFacts::only(SIXTEEN_BIT, &[Has(MMA_16BIT), Lacks("shfl.sync")]);

/// The entries with a 16-bit C: four columns a lane ([`epilogue`]), one butterfly shuffle and
/// one 8-byte store a row per 16 columns of a warp's rows.
pub const NARROW_C_STORES: PtxFacts = PtxFacts::only(
    NARROW_C,
    &[
        AtLeast("shfl.sync.bfly.b32", 1),
        AtLeast("st.global.b64", 1),
        Lacks(".local"),
    ],
);

/// The spec of a kernel on `tensor_tile`'s block tile with `stages` stages.
pub(crate) const fn tensor_spec(
    name_file: (&'static str, &'static str),
    idea: &'static str,
    (bn, bk, stages): (u32, u32, u32),
) -> KernelSpec {
    let tile = Tile::Fixed { rows: BM, cols: bn };
    KernelSpec::new(
        name_file,
        idea,
        Arch::Sm80,
        Threads::Fixed(THREADS, 1),
        tile,
    )
    .with_shared(Shared::InputElements(stages * stage_elements(bn, bk)))
    .with_elements(&[Elem::F16, Elem::Bf16])
    .on_tensor_cores()
}
