//! The Hopper epilogue: a warpgroup's `wgmma` accumulators finished with alpha and beta and
//! stored to C, f32 or 16-bit, in its own type.
use crate::catalogue::PtxFact::{AtLeast, Lacks};
use crate::catalogue::{NARROW_C, PtxFact, PtxFacts, SIXTEEN_BIT};
use crate::device::global::{store, store2, store4};
use crate::device::shuffle;
use crate::element::{Accumulator, Element, Output};
use crate::problem::COut;
/// The entries with an f32 C: stored in pairs, no shuffle.
pub const F32_C_PAIRS: PtxFacts = PtxFacts::only(SIXTEEN_BIT, &[Lacks("shfl.sync")]);
/// The entries with a 16-bit C, four columns a lane: per 16 columns of a warp's rows one
/// butterfly shuffle and one 8-byte store, for tiles of 256 columns...
pub const NARROW_C_256: PtxFacts = narrow_c_stores(&[
    AtLeast("shfl.sync.bfly.b32", 32),
    AtLeast("st.global.b64", 32),
    Lacks(".local"),
]);
/// ... of 192 columns ...
pub const NARROW_C_192: PtxFacts = narrow_c_stores(&[
    AtLeast("shfl.sync.bfly.b32", 24),
    AtLeast("st.global.b64", 24),
    Lacks(".local"),
]);
/// ... of 128 columns ...
pub const NARROW_C_128: PtxFacts = narrow_c_stores(&[
    AtLeast("shfl.sync.bfly.b32", 16),
    AtLeast("st.global.b64", 16),
    Lacks(".local"),
]);
/// ... and of 64.
pub const NARROW_C_64: PtxFacts = narrow_c_stores(&[
    AtLeast("shfl.sync.bfly.b32", 8),
    AtLeast("st.global.b64", 8),
    Lacks(".local"),
]);

const fn narrow_c_stores(facts: &'static [PtxFact]) -> PtxFacts {
    PtxFacts::only(NARROW_C, facts)
}

/// Writes a warpgroup's 64 x 256 accumulators (`R` = 128 a thread; 64 x 192 where `R` is
/// 96, 64 x 128 where it is 64, 64 x 64 where it is 32) (whose first row is `row0`) to `out`'s C,
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
            // SAFETY: `old`'s points: (row, col..col + 2) inside C and this thread's; 2-aligned
            // (`paired`: ldc even, C aligned to the pair, col even).
            unsafe { out.old::<2>(at) }
        } else {
            // SAFETY: `old`'s points: row < m, col < n: an element of C this thread owns.
            let [x] = unsafe { out.old::<1>(at) };
            let [y] = match col + 1 < n {
                // SAFETY: as above, col + 1 < n.
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
            // SAFETY: `store2`'s points: row < m, col + 1 < n: two elements of C this thread owns,
            // 2-aligned (`paired`).
            unsafe { store2(out.c, at, [x, y]) };
        } else {
            if col < n {
                // SAFETY: `store`'s points: row < m, col < n: an element of C this thread owns.
                unsafe { store(out.c, at, x) };
            }
            if col + 1 < n {
                // SAFETY: as above, col + 1 < n.
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
        // SAFETY: `store2`'s points: `whole` runs only under `rows_inside` (the warp's 16 rows < m,
        // `paired`) with the 64 columns from `first` inside n: an aligned pair this thread owns.
        unsafe { store2(out.c, at, out.blend([v(0), v(1)], old)) };
    };
    // SAFETY: `old`'s points: called under `rows_inside`, or by `quad_old` for a row < m, with
    // `paired` and the 64 columns from `first` inside n: an aligned pair this thread owns.
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
            // SAFETY: `xor`'s point: the whole warp is here with mask 1: the branches depend only
            // on the launch and tile, and every consumer thread runs the epilogue.
            let got = unsafe { shuffle::xor(send, 1) };
            for p in 0..4u32 {
                for h in 0..2u32 {
                    let kept = pick(p, h, odd == 1);
                    let got = got[(2 * p + h) as usize];
                    let pair = if odd == 0 { [kept, got] } else { [got, kept] };
                    let (row, _, at) = place($base + 2 * p + odd, h);
                    if row < m {
                        let at = at - 2 * odd as usize;
                        // SAFETY: `store4`'s points: row < m, columns inside `first + 64 <= n`;
                        // 4-aligned (`quads`: ldc % 4 == 0, C aligned, col0 + 8 j + {0, 4}); the
                        // quad's lanes store disjoint fours.
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
    // (Two branches, not one for the third block and one for the fourth: so the 256-column
    // tile's blocks stay as LLVM laid them out before the 192-column one.)
    if R == 128 {
        eight_columns!(16; 0 1 2 3 4 5 6 7);
        eight_columns!(24; 0 1 2 3 4 5 6 7);
    }
    if R == 96 {
        eight_columns!(16; 0 1 2 3 4 5 6 7);
    }
}
