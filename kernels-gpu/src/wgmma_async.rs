//! Tensor cores on Hopper, first `wgmma` rung (sm_90a module): each of the block's two
//! warpgroups computes a 64 x 256 half of a 128 x 256 block tile with `wgmma.mma_async
//! .m64n256k16`, reading A and B straight from shared memory through matrix descriptors, so
//! no thread loads fragments (`mma_deep` spends most of its issue slots on `ldmatrix`) and
//! the accumulators (128 f32 per thread) are the only registers that grow with the tile.
//!
//! The tiles reach shared memory by `mma_async`'s `cp.async` copies, each 16-byte chunk put
//! at its place in the 128-byte-swizzled layout `wgmma` reads (`device::wgmma`): A's 128 x 64
//! stage as 128-byte rows (K-major), B's 64 x 256 stage as four 64-column panels of 128-byte
//! rows (N-major). Four stages; the copies run two phases ahead, so that the stage they
//! overwrite is two phases old, whose `wgmma`s each warpgroup has waited for
//! (`wgmma.wait_group 1` keeps only the latest phase's in flight).
//!
//! Launches whose inputs cannot be copied in 16-byte chunks (K or N not a multiple of 8, or
//! a misaligned input) take `mma_wide`'s one-stage `mma.sync` loop on the same block tile.
//!
//! Launch rules ([`SPEC`]): 256 threads, grid `ceil(n / 256) x ceil(m / 128)`, 4 stages of
//! 48 KiB plus 1 KiB to align them (197,632 bytes); only in the sm_90a module; f16, bf16.
use crate::catalogue::{
    Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Precision, Shared, Threads, Tile,
};
use crate::device::async_copy::{commit_group, copy16_or_zero, wait_group};
use crate::device::global::{store, store2, store4};
use crate::device::shared::{SharedArena, shared_address};
use crate::device::shuffle;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};
use crate::device::wgmma::{self, Descriptor, Swizzle};
use crate::element::{Accumulator, Element, Output};
#[cfg(target_arch = "nvptx64")]
use crate::element::{Bf16, Narrow};
use crate::mma_async::chunked;
use crate::mma_ldmatrix::Ldmatrix;
use crate::mma_sync::one_stage;
use crate::problem::{COut, Gemm, entry_points};

pub(crate) const BM: u32 = 128;
pub(crate) const BN: u32 = 256;
pub(crate) const BK: u32 = 64;
pub(crate) const STAGES: u32 = 4;
const THREADS: u32 = 256;
/// Bytes of a 128-byte swizzle atom: 8 rows of 128 bytes, aligned to its size.
pub(crate) const ATOM: u32 = 1024;
/// Bytes of one stage's A (`BM` rows of `BK` 16-bit elements: one 128-byte row each) and
/// B (`BN / 64` panels of `BK` rows of 128 bytes).
pub(crate) const A_STAGE: u32 = BM * BK * 2;
pub(crate) const PANEL: u32 = BK * 128;
pub(crate) const B_STAGE: u32 = BK * BN * 2;

pub const SPEC: KernelSpec = KernelSpec {
    name: "wgmma_async",
    file: file!(),
    idea: "Hopper `wgmma` m64n256k16 from 128-byte-swizzled shared tiles (descriptors, no fragment loads), fed by a 4-stage `cp.async` pipeline; 2 warpgroups, 128 x 256 tiles",
    arch: Arch::Sm90a,
    threads: Threads::Fixed(THREADS, 1),
    tile: Tile::Fixed { rows: BM, cols: BN },
    grid: Grid::Tiles,
    shared: Shared::InputElements(STAGES * (BM * BK + BK * BN) + ATOM / 2),
    min_blocks_per_sm: PerAcc::NONE,
    elements: &[Elem::F16, Elem::Bf16],
    candidate: Candidate::Always,
    cpu: true,
    tensor_cores: true,
    tma: None,
    precision: Precision::Exact,
    strided: false,
};

/// Starts the copies of phase `k0` into the stage at `a_s` / `b_s` (1024-byte aligned shared
/// regions), each 16-byte chunk at its swizzled place: chunk `c` of a 128-byte row `r` goes
/// to chunk `c ^ (r % 8)`. Zeros for chunks outside A and B.
///
/// # Safety
/// K and N are multiples of 8, `a` and `b` 16-byte aligned; nobody reads the stage until a
/// wait covering these copies, a proxy fence and a barrier.
#[inline(always)]
unsafe fn copy_phase<T: Element>(
    (a_s, b_s): (*mut u8, *mut u8),
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0, k0): (u32, u32, u32),
    tid: u32,
) {
    let chunk = |base: *mut u8, row: u32, c: u32| {
        base.wrapping_add((row * 128 + ((c ^ (row % 8)) * 16)) as usize)
            .cast::<T>()
    };
    for i in 0..BM * BK / 8 / THREADS {
        let e = tid + i * THREADS;
        let (r, c) = (e / 8, e % 8);
        let inside = row0 + r < m && k0 + 8 * c < k;
        let at = (row0 + r) as usize * k as usize + (k0 + 8 * c) as usize;
        let src = if inside { a.wrapping_add(at) } else { a };
        unsafe { copy16_or_zero(chunk(a_s, r, c), src, 16 * inside as u32) };
    }
    for i in 0..BK * BN / 8 / THREADS {
        let e = tid + i * THREADS;
        let (r, c) = (e / (BN / 8), e % (BN / 8));
        let inside = k0 + r < k && col0 + 8 * c < n;
        let at = (k0 + r) as usize * n as usize + (col0 + 8 * c) as usize;
        let src = if inside { b.wrapping_add(at) } else { b };
        let panel = b_s.wrapping_add(((c / 8) * PANEL) as usize);
        unsafe { copy16_or_zero(chunk(panel, r, c % 8), src, 16 * inside as u32) };
    }
}

/// # Safety
/// See the entry points; 256 threads per block; T is f16 or bf16; the launch provides the
/// spec's shared bytes.
#[inline(always)]
pub unsafe fn wgmma_async<T: Element>(gemm: Gemm<T>) {
    let (a, b, _, m, n, k) = gemm.plain();
    if !chunked(a, b, n, k) {
        return unsafe { one_stage::<T, Ldmatrix, BN, 8>(gemm) };
    }
    let tid = thread_idx_x();
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // SAFETY: the launch provides the stages and the alignment slack.
    let mut arena = unsafe { SharedArena::<u8>::launch_sized() };
    let a_all = arena.aligned(ATOM, STAGES * A_STAGE);
    let b_all = arena.aligned(ATOM, STAGES * B_STAGE);
    let stage = |s: u32| {
        (
            a_all.wrapping_add((s * A_STAGE) as usize),
            b_all.wrapping_add((s * B_STAGE) as usize),
        )
    };
    let warpgroup = tid / 128;
    let descriptors = Descriptors::<false, true>::of(a_all, b_all, warpgroup);
    let phases = k.div_ceil(BK);
    // Prologue: two phases in flight, one group each (empty past the end, so every wait
    // below counts the same groups).
    for s in 0..2 {
        if s < phases {
            let at = (row0, col0, s * BK);
            unsafe { copy_phase::<T>(stage(s), (a, b), (m, n, k), at, tid) };
        }
        commit_group();
    }
    let out = gemm.c_out();
    let at = (row0 + warpgroup * 64, col0);
    let mut acc = [0.0f32; 128];
    for phase in 0..phases {
        // This thread's copies of `phase` have landed and are visible to `wgmma`; after the
        // barrier everyone's are, and every warpgroup has finished the `wgmma`s of phase - 2,
        // whose stage the next copies overwrite.
        wait_group::<1>();
        wgmma::fence_proxy_async();
        sync_threads();
        let ahead = phase + 2;
        if ahead < phases {
            let at = (row0, col0, ahead * BK);
            unsafe { copy_phase::<T>(stage(ahead % STAGES), (a, b), (m, n, k), at, tid) };
        }
        commit_group();
        unsafe { descriptors.multiply::<T, _>(&mut acc, phase % STAGES) };
        wgmma::wait_group::<1>(&mut acc);
    }
    wgmma::wait_group::<0>(&mut acc);
    unsafe { epilogue::<T, 128>(&out, &acc, (m, n), at, tid % 128) };
}

/// A warpgroup's operands in stage 0, as descriptors of the first K step, each operand as
/// its tile lies: K-major (128-byte rows of 64 K elements, 8 rows an atom; a K step of 16 is
/// 32 bytes along the rows), or MN-major where `A_MN` / `B_MN` (64-element panels of 128-byte
/// rows, one per K, 8 K rows an atom; a K step is two atoms down the panels). A row-major A
/// is K-major, a row-major B MN-major; their transposes the other way round.
#[derive(Clone, Copy)]
pub(crate) struct Descriptors<const A_MN: bool, const B_MN: bool> {
    a: Descriptor,
    b: Descriptor,
}

impl<const A_MN: bool, const B_MN: bool> Descriptors<A_MN, B_MN> {
    /// Bytes from one K step of 16 to the next.
    const fn step(mn_major: bool) -> u32 {
        if mn_major { 2 * ATOM } else { 32 }
    }

    /// The operand whose tile starts at shared address `at`.
    #[inline(always)]
    fn operand(at: u32, mn_major: bool) -> Descriptor {
        match mn_major {
            true => Descriptor::new(at, PANEL, ATOM, Swizzle::B128),
            false => Descriptor::new(at, 16, ATOM, Swizzle::B128),
        }
    }

    /// Stages of A and B at `a_all` and `b_all`, for warpgroup `warpgroup` (rows `64 w..`:
    /// 64 rows of 128 bytes K-major, one panel MN-major, 8 KiB either way).
    #[inline(always)]
    pub(crate) fn of(a_all: *mut u8, b_all: *mut u8, warpgroup: u32) -> Self {
        Self {
            a: Self::operand(shared_address(a_all) + warpgroup * PANEL, A_MN),
            b: Self::operand(shared_address(b_all), B_MN),
        }
    }

    /// Issues stage `s`'s four `wgmma`s (one per 32-byte K slice of the 128-byte rows: K = 64
    /// of a 16-bit type, 32 of TF32) as one batch, into a warpgroup tile `W` (64 x 256, or
    /// for 16-bit types 64 x 128 or 64 x 64); stages of B are `W::COLS` columns wide.
    ///
    /// # Safety
    /// As [`Element::wgmma_m64n256`]: the stage is complete and visible to `wgmma`.
    #[inline(always)]
    pub(crate) unsafe fn multiply<T: Element, W: WarpgroupTile>(&self, acc: &mut W, s: u32) {
        wgmma::fence(acc);
        for step in 0..BK / 16 {
            let a_k = self.a.advanced(s * A_STAGE + Self::step(A_MN) * step);
            let b_k = self.b.advanced(s * W::B_STAGE + Self::step(B_MN) * step);
            unsafe { acc.mma::<T, A_MN, B_MN>(a_k, b_k) };
        }
        wgmma::commit_group();
    }

    /// [`Descriptors::multiply`] for TF32 (both operands K-major: `A_MN` and `B_MN` false)
    /// with A from registers, K steps `first` and `first + 1` of stage `s` as one batch:
    /// `a[i]` is this thread's fragment of the warpgroup's A for step `first + i` (8
    /// elements: 32 bytes along B's 128-byte rows), `wgmma::m64n256k8_tf32_rs`.
    ///
    /// # Safety
    /// As [`Descriptors::multiply`] for B.
    #[inline(always)]
    pub(crate) unsafe fn multiply_tf32_rs(
        &self,
        acc: &mut [f32; 128],
        s: u32,
        first: u32,
        a: [[u32; 4]; 2],
    ) {
        wgmma::fence(acc);
        for i in 0..2 {
            let step = first + i as u32;
            let b_k = self.b.advanced(s * B_STAGE + Self::step(B_MN) * step);
            unsafe { wgmma::m64n256k8_tf32_rs(acc, a[i], b_k) };
        }
        wgmma::commit_group();
    }
}

/// A consumer warpgroup's tile of accumulators, 64 rows by `COLS` columns of D: 64 x 256
/// (`m64n256k16`, 128 f32 a thread), 64 x 128 (`m64n128k16`, 64 a thread) or 64 x 64
/// (`m64n64k16`, 32 a thread). The block tile (two warpgroups, 128 rows) is as wide, and so
/// are B's stages.
pub(crate) trait WarpgroupTile: wgmma::Accumulators + Sized {
    /// Columns of D.
    const COLS: u32;
    /// All zeros.
    const ZERO: Self;

    /// Bytes of one stage of B: `BK` rows of `COLS` 16-bit elements.
    const B_STAGE: u32 = BK * Self::COLS * 2;

    /// D += A B for one K step (`Element::wgmma_m64n256`, `wgmma_m64n128` or
    /// `wgmma_m64n64`).
    ///
    /// # Safety
    /// As [`Element::wgmma_m64n256`].
    unsafe fn mma<T: Element, const A_MN: bool, const B_MN: bool>(
        &mut self,
        a: Descriptor,
        b: Descriptor,
    );

    /// [`epilogue`] of this tile.
    ///
    /// # Safety
    /// As [`epilogue`].
    unsafe fn store<T: Element>(
        &self,
        out: &COut<T::Acc, T::Out>,
        mn: (u32, u32),
        at: (u32, u32),
        t: u32,
    );

    /// TF32's accumulators (`wgmma_tf32`'s mainloop: 64 x 256 only), as this tile; traps for
    /// the narrower tiles, which no TF32 kernel uses.
    fn from_tf32(acc: [f32; 128]) -> Self;
}

/// The tile of `$len` accumulators a thread: `$cols` columns, multiplied by `$mma`; TF32's
/// accumulators through `$from_tf32`.
macro_rules! warpgroup_tile {
    ($len:literal, $cols:literal, $mma:ident, $from_tf32:expr) => {
        impl WarpgroupTile for [f32; $len] {
            const COLS: u32 = $cols;
            const ZERO: Self = [0.0; $len];

            #[inline(always)]
            unsafe fn mma<T: Element, const A_MN: bool, const B_MN: bool>(
                &mut self,
                a: Descriptor,
                b: Descriptor,
            ) {
                unsafe { T::$mma::<A_MN, B_MN>(self, a, b) }
            }

            #[inline(always)]
            unsafe fn store<T: Element>(
                &self,
                out: &COut<T::Acc, T::Out>,
                mn: (u32, u32),
                at: (u32, u32),
                t: u32,
            ) {
                unsafe { epilogue::<T, $len>(out, self, mn, at, t) }
            }

            #[inline(always)]
            fn from_tf32(acc: [f32; 128]) -> Self {
                $from_tf32(acc)
            }
        }
    };
}
warpgroup_tile!(128, 256, wgmma_m64n256, |acc| acc);
warpgroup_tile!(64, 128, wgmma_m64n128, |_| crate::device::thread::trap());
warpgroup_tile!(32, 64, wgmma_m64n64, |_| crate::device::thread::trap());

/// Writes a warpgroup's 64 x 256 accumulators (`R` = 128 a thread; 64 x 128 where `R` is
/// 64, 64 x 64 where it is 32) (whose first row is `row0`) to `out`'s C,
/// what lies inside `m x n`, finished with alpha and beta: thread `t` of the warpgroup
/// holds, in register `4 j + 2 h + e`, row `16 (t / 32) + g + 8 h`, column `8 j + 2 tq + e`
/// (g = t % 32 / 4, tq = t % 4). With beta, C is read 16 pairs at a time, all before their
/// stores: pair by pair, each load waited for the store before it (beta = 1 cost 30% at
/// 4096^3, bf16, H200; 11% this way).
///
/// # Safety
/// `out.c` holds C's `m x n` elements `out.ldc` apart; no other thread writes these elements.
#[inline(always)]
pub(crate) unsafe fn epilogue<T: Element, const R: usize>(
    out: &COut<T::Acc, T::Out>,
    acc: &[f32; R],
    (m, n): (u32, u32),
    (row0, col0): (u32, u32),
    t: u32,
) {
    let lane = t % 32;
    let (g, tq) = (lane / 4, lane % 4);
    let row_base = row0 + (t / 32) * 16 + g;
    // A thread's two columns as one 8-byte store where they are aligned: a warp's store
    // then fills whole 32-byte sectors of 8 rows.
    let paired =
        out.ldc.is_multiple_of(2) && (out.c as usize).is_multiple_of(2 * size_of::<T::Out>());
    let zero = T::Acc::ZERO;
    // Pair (j, h): row, column and element of its first value.
    let place = |j: u32, h: u32| {
        let (row, col) = (row_base + 8 * h, col0 + 8 * j + 2 * tq);
        (row, col, row as usize * out.ldc as usize + col as usize)
    };
    let old = |j: u32, h: u32| -> [T::Acc; 2] {
        let (row, col, at) = place(j, h);
        if row >= m || col >= n {
            [zero; 2]
        } else if paired && col + 1 < n {
            unsafe { out.old::<2>(at) }
        } else {
            let [x] = unsafe { out.old::<1>(at) };
            let [y] = match col + 1 < n {
                true => unsafe { out.old::<1>(at + 1) },
                false => [zero],
            };
            [x, y]
        }
    };
    let put = |j: u32, h: u32, old: [T::Acc; 2]| {
        let (row, col, at) = place(j, h);
        let v = |e: u32| T::Acc::from_f32(acc[(4 * j + 2 * h + e) as usize]);
        if row >= m {
            return;
        }
        let [x, y] = out.blend([v(0), v(1)], old);
        if paired && col + 1 < n {
            unsafe { store2(out.c, at, [x, y]) };
        } else {
            if col < n {
                unsafe { store(out.c, at, x) };
            }
            if col + 1 < n {
                unsafe { store(out.c, at + 1, y) };
            }
        }
    };
    // Where the warp's 16 rows are all inside and C takes pairs, a block of 64 columns
    // inside `n` is stored without a check per pair (`whole`): on 128^3 products, whose
    // two mainloop phases left the epilogue three quarters of the consumers' time, the
    // per-pair checks and branches were most of its instructions. Blocks of columns past
    // `n` are skipped (uniform over the warpgroup).
    let rows_inside = paired && row0 + (t / 32) * 16 + 16 <= m;
    let whole = |j: u32, h: u32, old: [T::Acc; 2]| {
        let (_, _, at) = place(j, h);
        let v = |e: u32| T::Acc::from_f32(acc[(4 * j + 2 * h + e) as usize]);
        unsafe { store2(out.c, at, out.blend([v(0), v(1)], old)) };
    };
    let whole_old = |j: u32, h: u32| -> [T::Acc; 2] { unsafe { out.old::<2>(place(j, h).2) } };
    // Written out, not loops: with alpha and beta in its body LLVM stopped unrolling the
    // loop over `j`, and indexing the accumulators by a counter put all 128 in local memory.
    // Without beta, each pair is stored at once (batching cost 3% at 4096^3 and 10-25% on
    // small batched products, bf16, H200). With beta, C is read eight columns (16 pairs) at
    // a time, before their stores (loading the next eight before storing these spilled 360
    // bytes at the 168-register bound and ran 12% slower).
    // Eight columns' 16 pairs stored by `$put`, with beta after `$old` read all of them.
    macro_rules! sixteen_pairs {
        ($put:ident, $old:ident, $base:literal; $($j:literal)*) => {
            if out.scale.beta == zero {
                $(
                    $put($base + $j, 0, [zero; 2]);
                    $put($base + $j, 1, [zero; 2]);
                )*
            } else {
                let olds = [$([$old($base + $j, 0), $old($base + $j, 1)],)*];
                $(
                    $put($base + $j, 0, olds[$j][0]);
                    $put($base + $j, 1, olds[$j][1]);
                )*
            }
        };
    }
    // A 16-bit C four columns a lane: a lane's pair is 4 bytes, so a warp's pair stores
    // wrote 8 rows of 16 bytes, half a 32-byte sector each, as many L2 write requests as an
    // f32 C for half the bytes (4096 x 14336 x 4096, bf16, H100). Lanes `tq` and `tq ^ 1`
    // swap one pair of two neighbouring 8-column blocks `j`, `j + 1` per row: an even lane
    // then holds columns `8 j + 2 tq ..+ 4`, an odd one `8 (j + 1) + 2 (tq - 1) ..+ 4`, and
    // the quad's four 8-byte stores fill the row's 32-byte sector. The shuffles' branch
    // depends only on the launch and the tile, never on the warp (rows past `m` skip their
    // stores): under a branch by warp, ptxas moved the mainloop's descriptor arithmetic off
    // the uniform datapath, 1.8% slower at 4096 x 4096 x 14336.
    let quads = paired
        && <T::Out as Output>::HALF_WORD
        && out.ldc.is_multiple_of(4)
        && (out.c as usize).is_multiple_of(4 * size_of::<T::Out>());
    let odd = tq % 2;
    let word = |j: u32, h: u32, old: [T::Acc; 2]| {
        let v = |e: u32| T::Acc::from_f32(acc[(4 * j + 2 * h + e) as usize]);
        <T::Out as Output>::to_word(out.blend([v(0), v(1)], old))
    };
    let quad_old = |j: u32, h: u32| match place(j, h).0 < m {
        true => whole_old(j, h),
        false => [zero; 2],
    };
    // Eight columns' 16 pairs (with beta after reading all of them), regrouped and stored.
    macro_rules! sixteen_quads {
        ($base:literal; $($j:literal)*) => {
            let words: [[u32; 2]; 8] = if out.scale.beta == zero {
                [$([word($base + $j, 0, [zero; 2]), word($base + $j, 1, [zero; 2])],)*]
            } else {
                let olds = [$([quad_old($base + $j, 0), quad_old($base + $j, 1)],)*];
                [$([word($base + $j, 0, olds[$j][0]), word($base + $j, 1, olds[$j][1])],)*]
            };
            // Per block pair `p` and row `h`: an even lane sends its `j + 1` pair, an odd
            // one its `j` pair. (Selects, not `words[2 p + odd]`: an index by lane sent the
            // words to local memory.)
            let pick = |p: u32, h: u32, second: bool| {
                let [a, b] = [words[2 * p as usize][h as usize], words[2 * p as usize + 1][h as usize]];
                if second { b } else { a }
            };
            let mut send = [0u32; 8];
            for p in 0..4u32 {
                for h in 0..2u32 {
                    send[(2 * p + h) as usize] = pick(p, h, odd == 0);
                }
            }
            let got = unsafe { shuffle::xor(send, 1) };
            for p in 0..4u32 {
                for h in 0..2u32 {
                    let kept = pick(p, h, odd == 1);
                    let got = got[(2 * p + h) as usize];
                    let pair = if odd == 0 { [kept, got] } else { [got, kept] };
                    let (row, _, at) = place($base + 2 * p + odd, h);
                    if row < m {
                        let at = at - 2 * odd as usize;
                        unsafe { store4(out.c, at, <T::Out as Output>::from_words(pair)) };
                    }
                }
            }
        };
    }
    macro_rules! eight_columns {
        ($base:literal; $($j:literal)*) => {
            let first = col0 + 8 * $base;
            if first >= n {
                // Past the edge: nothing to store.
            } else if quads && first + 64 <= n {
                sixteen_quads!($base; $($j)*);
            } else if rows_inside && first + 64 <= n {
                sixteen_pairs!(whole, whole_old, $base; $($j)*);
            } else {
                sixteen_pairs!(put, old, $base; $($j)*);
            }
        };
    }
    eight_columns!(0; 0 1 2 3 4 5 6 7);
    // (A 64 x 64 tile, R = 32, ends here; a 64 x 128 one, R = 64, after the next.)
    if R >= 64 {
        eight_columns!(8; 0 1 2 3 4 5 6 7);
    }
    if R == 128 {
        eight_columns!(16; 0 1 2 3 4 5 6 7);
        eight_columns!(24; 0 1 2 3 4 5 6 7);
    }
}

entry_points!(wgmma_async; wgmma_async_f16: f16, wgmma_async_bf16: Bf16, wgmma_async_f16_f16: Narrow<f16>, wgmma_async_bf16_bf16: Narrow<Bf16>);
