//! Split-K in one launch with an ordered reduction: each block of a strip writes its slice's
//! sums to a plane of the workspace and draws a ticket; the block that draws the last one
//! adds the planes in K order and writes C, so the result does not depend on which block
//! finishes last.
use crate::device::global::{fence_gpu, load_volatile, load4_volatile, store, store4, take_ticket};
use crate::device::shared::SharedTile;
use crate::device::thread::{block_idx_x, block_idx_y, grid_dim_x, sync_threads, thread_idx_x};
use crate::device::vector::aligned16;
use crate::element::{Accumulator, Element};
use crate::parts::schedule::decode_split::{STRIP, THREADS, counters};
use crate::problem::Gemm;

/// Most rows of C a pass covers, whose sums `Slices` adds: one `mma` tile's.
pub const PASS_ROWS: u32 = 16;

/// The rendezvous of the `splits` blocks of a strip, after each wrote its plane: each
/// block's thread 0 draws a ticket from `counter`; true, in every thread of the block, for
/// the block that drew the last one, which then sees every other block's planes.
///
/// # Safety
/// Every thread of the block calls it (it has barriers); `counter` as
/// [`take_ticket`]'s; `flag` is the block's own shared scratch.
#[inline(always)]
pub(crate) unsafe fn last_to_arrive<A: Accumulator>(
    counter: *mut u32,
    splits: u32,
    flag: &SharedTile<A>,
    tid: u32,
) -> bool {
    fence_gpu(); // this thread's plane writes before the ticket
    sync_threads();
    if tid == 0 {
        // SAFETY: `counter` is a `u32` of a global buffer that only atomics touch during the
        // launch: `take_ticket`'s contract, which is this fn's.
        let last = unsafe { take_ticket(counter) } == splits - 1;
        let raised = if last { A::from_f32(1.0) } else { A::ZERO };
        // SAFETY: `(0, 0)` of the block's own flag tile (the contract); only thread 0 writes
        // it, between the two barriers, and the others read it only after the second.
        unsafe { flag.set(0, 0, raised) };
    }
    sync_threads();
    // SAFETY: the flag's only write (thread 0's, above) came before the barrier just passed;
    // the next comes after the next call's first barrier.
    let last = unsafe { flag.get(0, 0) } != A::ZERO;
    if last {
        fence_gpu(); // the other blocks' planes after their tickets
    }
    last
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
    /// As the kernel's: the launch follows its rules (workspace, counters zero). That is: C
    /// is dense `m x n`; the workspace holds `counters(m, strips, PER_WARP)` counters (the
    /// rows `Slices::of` took), zero at launch and touched only by this split-K, then
    /// `splits` planes of `m x n` accumulators; the grid is `strips x splits`; `rows <=
    /// PER_WARP`, `row0 + rows <= m`; `sums` holds the `PARTS * PER_WARP x STRIP` sums of
    /// this block, and `last_flag` is as [`last_to_arrive`]'s flag.
    #[inline(always)]
    pub(crate) unsafe fn finish<const PER_WARP: u32, const PARTS: u32, const BLOCK: u32>(
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
        for i in 0..PER_WARP * STRIP / BLOCK {
            // (Not `place`: its index before the check compiled to other PTX than was measured.)
            let (r, cc) = self.element::<1, BLOCK>(i);
            let column = strip * STRIP + cc;
            if r < rows && column < n {
                let mut sum = T::Acc::ZERO;
                for w in 0..PARTS {
                    // SAFETY: `w < PARTS`, `r < PER_WARP` and `cc < STRIP` (element `i` of
                    // the pass's `PER_WARP * STRIP`): inside `sums` (the contract), written
                    // before the barrier above, unwritten until the one at the end.
                    sum = sum + unsafe { sums.get(w * PER_WARP + r, cc) };
                }
                let at = (row0 + r) as usize * n as usize + column as usize;
                match splits {
                    // SAFETY: one slice: `(row0 + r, column)` is inside C (`r < rows`, `row0 +
                    // rows <= m`, `column < n`), dense (the contract); this thread's element,
                    // and no other block has this strip.
                    1 => unsafe { store(self.c, at, T::out(sum)) },
                    // SAFETY: as above, in plane `split < splits` of the workspace (the
                    // contract), which only this block writes.
                    _ => unsafe { store(self.planes, split as usize * plane + at, sum) },
                }
            }
        }
        if splits > 1 {
            // The rendezvous of the strip's blocks: the last to arrive adds the planes.
            let pass = row0 / PER_WARP;
            let counter = self.counters.wrapping_add((pass * strips + strip) as usize);
            // SAFETY: every thread gets here (`splits` is the block's); `counter` is this
            // strip and pass's, inside the workspace's counters, which only tickets and the
            // last block's reset touch (the contract); `last_flag` is the block's own.
            if unsafe { last_to_arrive(counter, splits, last_flag, tid) } {
                // Four columns an access and four planes' loads in flight before their
                // adds (the same order of the sums, so the same bits). Plane by plane, the
                // last block waited out an L2 round trip per plane: the planes' loads, sums
                // and C's stores took 4-8 us of 20-64 us products at x 4096 and x 8192
                // (H100, timed by leaving them out).
                let vector = n.is_multiple_of(4)
                    && aligned16(self.planes.cast_const())
                    && (self.c as usize).is_multiple_of(4 * size_of::<T::Out>());
                const { assert!(PER_WARP <= PASS_ROWS) };
                if vector {
                    // SAFETY: the last block, past its ticket: every plane of the strip is in;
                    // `vector` tested `add_planes_by_four`'s alignment: n a multiple of 4,
                    // planes 16-byte aligned, C aligned to four elements.
                    unsafe { self.add_planes_by_four::<PER_WARP, BLOCK>((row0, rows), plane) };
                } else {
                    // SAFETY: as above; `add_planes` needs no alignment.
                    unsafe { self.add_planes::<PER_WARP, BLOCK>((row0, rows), plane) };
                }
                if tid == 0 {
                    // The next product on this stream finds it zero again.
                    // SAFETY: the counter is in the workspace (above); all `splits` tickets of
                    // this pass are drawn (this thread drew the last, with acquire), so no
                    // atomic races this plain store.
                    unsafe { store(counter, 0, 0) };
                }
            }
        }
        sync_threads(); // before the next pass writes the pipelines (and the flag)
    }

    /// Element `i` of this thread's share of a pass, `UNIT` columns at a time: its row of
    /// the pass and its column in the strip.
    #[inline(always)]
    fn element<const UNIT: u32, const BLOCK: u32>(&self, i: u32) -> (u32, u32) {
        let e = UNIT * (thread_idx_x() + i * BLOCK);
        (e / STRIP, e % STRIP)
    }

    /// Where [`Slices::element`] `i` of the pass of rows `row0..row0 + rows` lies: whether
    /// inside C, and its index in C (and in each plane).
    #[inline(always)]
    fn place<const UNIT: u32, const BLOCK: u32>(
        &self,
        i: u32,
        (row0, rows): (u32, u32),
    ) -> (bool, usize) {
        let (r, cc) = self.element::<UNIT, BLOCK>(i);
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
    unsafe fn add_planes<const PER_WARP: u32, const BLOCK: u32>(
        &self,
        pass: (u32, u32),
        plane: usize,
    ) {
        let at = |i: u32| self.place::<1, BLOCK>(i, pass);
        const MOST: usize = (PASS_ROWS * STRIP / THREADS) as usize;
        let count = (PER_WARP * STRIP / BLOCK) as usize;
        let mut sum = [T::Acc::ZERO; MOST];
        for s in 0..self.strip_split.2 as usize {
            // (Loads first, then the adds that wait for them.)
            let mut got = [T::Acc::ZERO; MOST];
            for i in 0..count {
                if let (true, at) = at(i as u32) {
                    // SAFETY: `at` is inside C (`place`'s test), so `s * plane + at` is inside
                    // plane `s < splits` of the workspace (the contract), whose block wrote it
                    // before its ticket.
                    got[i] = unsafe { load_volatile(self.planes, s * plane + at) };
                }
            }
            for i in 0..count {
                sum[i] = sum[i] + got[i];
            }
        }
        for i in 0..count {
            if let (true, at) = at(i as u32) {
                // SAFETY: `at` is inside C (`place`'s test; dense `m x n`: the contract); this
                // thread's element, and only the strip's last block writes it.
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
    unsafe fn add_planes_by_four<const PER_WARP: u32, const BLOCK: u32>(
        &self,
        pass: (u32, u32),
        plane: usize,
    ) {
        let splits = self.strip_split.2 as usize;
        let at = |i: u32| self.place::<4, BLOCK>(i, pass);
        /// Planes whose loads are in flight together.
        const GROUP: usize = 4;
        const MOST: usize = (PASS_ROWS * STRIP / THREADS / 4) as usize;
        let count = (PER_WARP * STRIP / BLOCK / 4) as usize;
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
                        // SAFETY: the group's column is a multiple of 4 below n, a multiple of
                        // 4: inside C, so inside plane `first + p < splits`; `plane`, `at` and
                        // the planes' start 4-aligned (the contract).
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
                // SAFETY: as above, in C: inside, 4-aligned (the contract); this thread's
                // group, and only the strip's last block writes it.
                unsafe { store4(self.c, at, sum.map(T::out)) };
            }
        }
    }
}
