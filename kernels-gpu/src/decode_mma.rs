//! Decode products on the tensor cores: `decode_async`'s pipelines of B and its one-launch
//! split-K, with the multiply-adds done by `mma.sync` m16n8k16 on up to 16 rows of C (A's
//! rows past M are zeros). The SIMT kernels spend a fused multiply-add per row of C per
//! element of B, so at 8 to 16 rows they no longer keep up with HBM (`decode` reads B at
//! 0.4-0.9 TB/s there); here 16 rows cost what one does.
//!
//! A warp streams 16 K rows at a time of its block's 256-column strip: each lane copies its
//! own 16-byte chunk of each row (`cp.async`), three stages deep; once the lanes' copies of a
//! stage have landed (`wait_group`, then `__syncwarp` so every lane sees every lane's),
//! `ldmatrix.trans` turns the rows into B fragments for 32 `mma`s, A's fragment coming from
//! global memory (a few KiB, in L1). Rows of the stages are padded to 264 elements, so the
//! 8 rows an `ldmatrix` reads fall in different banks.
//!
//! Launch rules ([`SPEC`]): 128 threads; grid `ceil(n / 256) x splits` (as `decode_async`,
//! [`crate::decode_async::splits`]); shared 99 KiB + 16 bytes; the workspace of
//! `decode_async` with passes of 16 rows; f16, bf16 (compute capability 8.0+).
use crate::catalogue::{
    Arch, Candidate, Elem, Grid, KernelSpec, PerAcc, Precision, Shared, Threads, Tile,
};
use crate::decode_async::{RESIDENT, STRIP, THREADS, WARPS, counters, last_to_arrive};
use crate::device::async_copy::{commit_group, pipeline, wait_group};
use crate::device::global::{load, load_volatile, load4_or_zeros, load4_volatile, store, store4};
use crate::device::ldmatrix;
use crate::device::shared::{SharedArena, SharedTile};
use crate::device::thread::{
    block_idx_x, block_idx_y, grid_dim_x, sync_threads, sync_warp, thread_idx_x,
};
use crate::device::vector::aligned16;
use crate::element::{Accumulator, Element};
#[cfg(target_arch = "nvptx64")]
use crate::element::{Bf16, Narrow};
use crate::problem::{Gemm, entry_points};

/// K rows per stage: one `mma` K step.
const STAGE_ROWS: u32 = 16;
const STAGES: u32 = 3;
/// A stage's row in shared memory: the strip and 16 bytes of padding.
const ROW: u32 = STRIP + 8;
/// Rows of C per pass over B: one `mma` tile's.
pub const ROWS: u32 = 16;
/// Column tiles of 8 per warp.
const TILES: usize = (STRIP / 8) as usize;
/// Shared accumulators: the pipelines (`WARPS x STAGES x STAGE_ROWS x ROW` 16-bit
/// elements), whose bytes later hold the warps' sums (`WARPS x ROWS x STRIP`); 4 for the
/// last-block flag.
const PIPES: u32 = WARPS * STAGES * STAGE_ROWS * ROW / 2;
const _: () = assert!(WARPS * ROWS * STRIP <= PIPES);

pub const SPEC: KernelSpec = KernelSpec {
    name: "decode_mma",
    file: file!(),
    idea: "`decode_async` on the tensor cores: `mma.sync` m16n8k16 on up to 16 rows of C, B fragments by `ldmatrix.trans` from the `cp.async` pipelines",
    arch: Arch::Sm80,
    threads: Threads::Fixed(WARPS * 32, 1),
    tile: Tile::Fixed {
        rows: ROWS,
        cols: STRIP,
    },
    grid: Grid::SplitKLastBlock {
        per_sm: RESIDENT as u32,
    },
    shared: Shared::Elements(PIPES + 4),
    min_blocks_per_sm: PerAcc::NONE,
    elements: &[Elem::F16, Elem::Bf16],
    candidate: Candidate::WhenSideAtMost(16),
    cpu: true,
    tensor_cores: true,
    tma: None,
    precision: Precision::Exact,
    strided: false,
};

/// A's fragment for the K step from `kq`: rows `row0 + g (+ 8)`, columns `kq + 2t (+ 1, + 8,
/// + 9)`, zero past `m` and `k1`.
///
/// # Safety
/// `a` holds `m x k` elements.
#[inline(always)]
unsafe fn a_fragment<T: Element>(
    a: *const T,
    (m, k): (u32, u32),
    (row0, kq, k1): (u32, u32, u32),
    lane: u32,
) -> [u32; 4] {
    let (g, t) = (lane / 4, lane % 4);
    let bits = |row: u32, col: u32| -> u32 {
        if row < m && col < k1 {
            let x = unsafe { load(a, row as usize * k as usize + col as usize) };
            x.bits16() as u32
        } else {
            0
        }
    };
    let pair = |row: u32, col: u32| bits(row, col) | (bits(row, col + 1) << 16);
    let (r0, r1, c0) = (row0 + g, row0 + g + 8, kq + 2 * t);
    [
        pair(r0, c0),
        pair(r1, c0),
        pair(r0, c0 + 8),
        pair(r1, c0 + 8),
    ]
}

/// This warp's share of one pass: rows `row0..row0 + 16` of C (zeros past `m`), the
/// strip's 256 columns from `col0`, K rows `k0..k1`, through the warp's `pipe`; the sums go
/// to rows `ROWS warp..` of `sums`, which shares the pipelines' bytes (hence the barrier).
///
/// # Safety
/// As the kernel; every thread of the block calls it.
#[inline(always)]
unsafe fn pass<T: Element>(
    (a, b): (*const T, *const T),
    (m, n, k): (u32, u32, u32),
    (row0, col0, k0, k1): (u32, u32, u32, u32),
    (pipe, lane): (&SharedTile<T>, u32),
    (sums, warp): (&SharedTile<T::Acc>, u32),
) {
    let mut acc = [[T::Acc::ZERO; 4]; TILES];
    // One K step of 16 from the stage at row `slot` of the pipe.
    let mut step = |slot: u32, kq: u32| {
        let af = unsafe { a_fragment(a, (m, k), (row0, kq, k1), lane) };
        // Matrices (K 0-7, tile j), (K 8-15, tile j), (K 0-7, tile j + 1), (K 8-15, tile
        // j + 1), transposed: B's fragments of tiles j and j + 1.
        let (r8, half) = (lane % 8 + 8 * ((lane / 8) % 2), 8 * (lane / 16));
        for j in (0..TILES).step_by(2) {
            let row = pipe.row16(slot + r8, 8 * j as u32 + half);
            let r = unsafe { ldmatrix::x4_trans(row) };
            acc[j] = T::mma_m16n8k16(af, [r[0], r[1]], acc[j]);
            acc[j + 1] = T::mma_m16n8k16(af, [r[2], r[3]], acc[j + 1]);
        }
    };
    let steps = (k1 - k0).div_ceil(STAGE_ROWS);
    let col = col0 + lane * 8;
    if n.is_multiple_of(8) && aligned16(b) {
        // One stage: this lane's 16-byte chunk of 16 K rows, zeros past `k1` and `n`.
        let fill = |s: u32| {
            let (slot, kk) = ((s % STAGES) * STAGE_ROWS, k0 + s * STAGE_ROWS);
            for r in 0..STAGE_ROWS {
                let row = kk + r;
                let inside = row < k1 && col < n;
                let at = row as usize * n as usize + col as usize;
                let src = if inside { b.wrapping_add(at) } else { b };
                unsafe { pipe.copy16_or_zero(slot + r, lane * 8, src, inside) };
            }
            commit_group();
        };
        // The warp's lanes share the stages: they meet at each step.
        pipeline::<STAGES, { STAGES - 2 }>(steps, fill, sync_warp, |s| {
            step((s % STAGES) * STAGE_ROWS, k0 + s * STAGE_ROWS)
        });
        wait_group::<0>();
    } else {
        // B's rows are not whole 16-byte chunks (N not a multiple of 8, or B misaligned):
        // one stage at a time, filled by plain loads (zeros outside B).
        for s in 0..steps {
            let kk = k0 + s * STAGE_ROWS;
            sync_warp(); // every lane is done with the last step's rows
            let mut r = 0;
            while r < STAGE_ROWS {
                for h in 0..2 {
                    let four = unsafe { load4_or_zeros(b, (kk + r, col + 4 * h), (k1, n), false) };
                    unsafe { pipe.set4(r, lane * 8 + 4 * h, four) };
                }
                r += 1;
            }
            sync_warp(); // every lane's rows are in
            step(0, kk);
        }
    }
    sync_threads(); // every warp is done with its pipeline: the sums take its bytes
    let (g, t) = (lane / 4, lane % 4);
    for j in 0..TILES {
        for h in 0..2 {
            let row = warp * ROWS + g + 8 * h as u32;
            let col = 8 * j as u32 + 2 * t;
            unsafe { sums.set(row, col, acc[j][2 * h]) };
            unsafe { sums.set(row, col + 1, acc[j][2 * h + 1]) };
        }
    }
}

/// # Safety
/// See the entry points; the launch follows the launch rules (`Problem::ctas` = splits, the
/// counters zero).
#[inline(always)]
pub unsafe fn decode_mma<T: Element>(g: Gemm<T>) {
    let (a, b, _, m, n, k) = g.plain();
    let splits = g.p.ctas.max(1);
    let (strip, split) = (block_idx_x(), block_idx_y());
    let chunk = k.div_ceil(splits).next_multiple_of(STAGE_ROWS);
    let k_lo = (split * chunk).min(k);
    let k_hi = (k_lo + chunk).min(k);
    let tid = thread_idx_x();
    let (warp, lane) = (tid / 32, tid % 32);
    let quarter = (k_hi - k_lo).div_ceil(WARPS).next_multiple_of(STAGE_ROWS);
    let k0 = (k_lo + warp * quarter).min(k_hi);
    let k1 = (k0 + quarter).min(k_hi);
    // SAFETY: the launch provides PIPES + 4 accumulators; the sums fit in the pipelines'
    // bytes (checked above), which they use at other times (barriers between).
    let pipes = unsafe { SharedArena::<T>::launch_sized() }.tile(WARPS * STAGES * STAGE_ROWS, ROW);
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let sums = arena.tile(WARPS * ROWS, STRIP);
    let _pipes = arena.tile(PIPES / STRIP - WARPS * ROWS, STRIP);
    let last_flag = arena.tile(1, 4);
    let pipe = pipes.window(warp * STAGES * STAGE_ROWS, STAGES * STAGE_ROWS);
    let mut row0 = 0;
    while row0 < m {
        let here = (row0, strip * STRIP, k0, k1);
        unsafe { pass::<T>((a, b), (m, n, k), here, (&pipe, lane), (&sums, warp)) };
        let slices = Slices::of(&g, ROWS); // made here: held across the pass, it spilled
        unsafe { slices.finish::<ROWS, WARPS>((row0, (m - row0).min(ROWS)), &sums, &last_flag) };
        row0 += ROWS;
    }
}

/// Where the blocks of `decode_async`'s one-launch split-K put their sums: with one slice C
/// itself; else the slice's plane of the workspace, after which the last block of the strip
/// to finish adds the planes in K order. (`decode_async` keeps the same steps written out in
/// its body: through this struct it spilled 250 bytes, measured with ptxas, and read B 10%
/// slower at 1 x 8192 x 8192.)
pub(crate) struct Slices<T: Element> {
    c: *mut T::Out,
    planes: *mut T::Acc,
    counters: *mut u32,
    m_n: (u32, u32),
    /// This block's strip and slice, the slices per strip, the strips.
    strip_split: (u32, u32, u32, u32),
}

impl<T: Element> Slices<T> {
    /// This block's, for a kernel taking `rows` rows of C per pass.
    #[inline(always)]
    pub(crate) fn of(g: &Gemm<T>, rows: u32) -> Self {
        let strips = grid_dim_x();
        let (m, n) = (g.p.m, g.p.n);
        Self {
            c: g.c,
            planes: g
                .workspace
                .wrapping_add(counters(m as usize, strips as usize, rows as usize)),
            counters: g.workspace.cast::<u32>(),
            m_n: (m, n),
            strip_split: (block_idx_x(), block_idx_y(), g.p.ctas.max(1), strips),
        }
    }

    /// Rows `row0..row0 + rows` of C (this pass: pass `row0 / PER_WARP`) in this block's
    /// strip, from the `PARTS` partial sums in `sums` (part `w`'s row `r` at row
    /// `PER_WARP w + r`: the 4 warps' slices of K, or 1 where the warps share out the
    /// columns).
    /// Meets the block's barriers: every thread calls it, in uniform control flow.
    ///
    /// # Safety
    /// As the kernel's: the launch follows its rules (workspace, counters zero).
    #[inline(always)]
    pub(crate) unsafe fn finish<const PER_WARP: u32, const PARTS: u32>(
        &self,
        (row0, rows): (u32, u32),
        sums: &SharedTile<T::Acc>,
        last_flag: &SharedTile<T::Acc>,
    ) {
        let (m, n) = self.m_n;
        let (strip, split, splits, strips) = self.strip_split;
        let tid = thread_idx_x();
        let plane = m as usize * n as usize;
        sync_threads(); // every warp's sums are in
        for i in 0..PER_WARP * STRIP / THREADS {
            // (Not `place`: its index before the check compiled to other PTX than was measured.)
            let (r, cc) = self.element::<1>(i);
            let column = strip * STRIP + cc;
            if r < rows && column < n {
                let mut sum = T::Acc::ZERO;
                for w in 0..PARTS {
                    sum = sum + unsafe { sums.get(w * PER_WARP + r, cc) };
                }
                let at = (row0 + r) as usize * n as usize + column as usize;
                match splits {
                    1 => unsafe { store(self.c, at, T::out(sum)) },
                    _ => unsafe { store(self.planes, split as usize * plane + at, sum) },
                }
            }
        }
        if splits > 1 {
            // The rendezvous of the strip's blocks: the last to arrive adds the planes.
            let pass = row0 / PER_WARP;
            let counter = self.counters.wrapping_add((pass * strips + strip) as usize);
            if unsafe { last_to_arrive(counter, splits, last_flag, tid) } {
                // Four columns an access and four planes' loads in flight before their
                // adds (the same order of the sums, so the same bits). Plane by plane, the
                // last block waited out an L2 round trip per plane: the planes' loads, sums
                // and C's stores took 4-8 us of 20-64 us products at x 4096 and x 8192
                // (H100, timed by leaving them out).
                let vector = n.is_multiple_of(4)
                    && aligned16(self.planes.cast_const())
                    && (self.c as usize).is_multiple_of(4 * size_of::<T::Out>());
                const { assert!(PER_WARP <= ROWS) };
                if vector {
                    unsafe { self.add_planes_by_four::<PER_WARP>((row0, rows), plane) };
                } else {
                    unsafe { self.add_planes::<PER_WARP>((row0, rows), plane) };
                }
                if tid == 0 {
                    // The next product on this stream finds it zero again.
                    unsafe { store(counter, 0, 0) };
                }
            }
        }
        sync_threads(); // before the next pass writes the pipelines (and the flag)
    }

    /// Element `i` of this thread's share of a pass, `UNIT` columns at a time: its row of
    /// the pass and its column in the strip.
    #[inline(always)]
    fn element<const UNIT: u32>(&self, i: u32) -> (u32, u32) {
        let e = UNIT * (thread_idx_x() + i * THREADS);
        (e / STRIP, e % STRIP)
    }

    /// Where [`Slices::element`] `i` of the pass of rows `row0..row0 + rows` lies: whether
    /// inside C, and its index in C (and in each plane).
    #[inline(always)]
    fn place<const UNIT: u32>(&self, i: u32, (row0, rows): (u32, u32)) -> (bool, usize) {
        let (r, cc) = self.element::<UNIT>(i);
        let column = self.strip_split.0 * STRIP + cc;
        let n = self.m_n.1;
        let at = (row0 + r) as usize * n as usize + column as usize;
        (r < rows && column < n, at)
    }

    /// The last block's sums of the planes, element by element, plane by plane (a plane's
    /// loads in flight together), into C: for any `n` and alignment.
    ///
    /// # Safety
    /// As [`Slices::finish`], in the last block, past its ticket.
    #[inline(always)]
    unsafe fn add_planes<const PER_WARP: u32>(&self, pass: (u32, u32), plane: usize) {
        let at = |i: u32| self.place::<1>(i, pass);
        const MOST: usize = (ROWS * STRIP / THREADS) as usize;
        let count = (PER_WARP * STRIP / THREADS) as usize;
        let mut sum = [T::Acc::ZERO; MOST];
        for s in 0..self.strip_split.2 as usize {
            // (Loads first, then the adds that wait for them.)
            let mut got = [T::Acc::ZERO; MOST];
            for i in 0..count {
                if let (true, at) = at(i as u32) {
                    got[i] = unsafe { load_volatile(self.planes, s * plane + at) };
                }
            }
            for i in 0..count {
                sum[i] = sum[i] + got[i];
            }
        }
        for i in 0..count {
            if let (true, at) = at(i as u32) {
                unsafe { store(self.c, at, T::out(sum[i])) };
            }
        }
    }

    /// [`Slices::add_planes`] four columns an access, four planes at a time: where `n` is a
    /// multiple of 4 and the planes and C are aligned to four elements (a group of four
    /// columns then lies wholly inside C or wholly past it).
    ///
    /// # Safety
    /// As [`Slices::add_planes`], and the alignment above.
    #[inline(always)]
    unsafe fn add_planes_by_four<const PER_WARP: u32>(&self, pass: (u32, u32), plane: usize) {
        let splits = self.strip_split.2 as usize;
        let at = |i: u32| self.place::<4>(i, pass);
        /// Planes whose loads are in flight together.
        const GROUP: usize = 4;
        const MOST: usize = (ROWS * STRIP / THREADS / 4) as usize;
        let count = (PER_WARP * STRIP / THREADS / 4) as usize;
        let mut sum = [[T::Acc::ZERO; 4]; MOST];
        // (Constant trip counts inside, so the arrays stay in registers.)
        for first in (0..splits).step_by(GROUP) {
            let mut got = [[[T::Acc::ZERO; 4]; MOST]; GROUP];
            for (p, got) in got.iter_mut().enumerate() {
                for (i, got) in got.iter_mut().enumerate() {
                    if let (true, at) = at(i as u32)
                        && i < count
                        && first + p < splits
                    {
                        let at = (first + p) * plane + at;
                        *got = unsafe { load4_volatile(self.planes.cast_const(), at) };
                    }
                }
            }
            for (p, got) in got.iter().enumerate() {
                if first + p < splits {
                    for i in 0..MOST {
                        for e in 0..4 {
                            sum[i][e] = sum[i][e] + got[i][e];
                        }
                    }
                }
            }
        }
        for (i, sum) in sum.iter().enumerate() {
            if let (true, at) = at(i as u32)
                && i < count
            {
                unsafe { store4(self.c, at, sum.map(T::out)) };
            }
        }
    }
}

entry_points!(decode_mma; decode_mma_f16: f16, decode_mma_bf16: Bf16, decode_mma_f16_f16: Narrow<f16>, decode_mma_bf16_bf16: Narrow<Bf16>);
