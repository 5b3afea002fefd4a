//! Two ways to read the `mma.sync` fragments out of a shared stage ([`Fragments`]):
//! element by element ([`SharedLoads`]) or by `ldmatrix` ([`Ldmatrix`]).
use crate::device::ldmatrix;
use crate::device::shared::SharedTile;
use crate::element::{Element, Half};
use crate::parts::mma::tensor_tile::{Fragments, Lane, MT, Stage};
/// `ldmatrix` of four 8 x 8 matrices: A's fragments.
pub const LDMATRIX: &str = "ldmatrix.sync.aligned.m8n8.x4.shared.b16";
/// The same transposed: B's fragments from its rows.
pub const LDMATRIX_TRANS: &str = "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16";

/// Two 16-bit elements as one fragment register, the first in the low half.
#[inline(always)]
fn pack<T: Half>(lo: T, hi: T) -> u32 {
    lo.bits16() as u32 | (hi.bits16() as u32) << 16
}

/// Fragments read from shared memory with plain loads.
pub struct SharedLoads;

impl Fragments for SharedLoads {
    /// # Safety
    /// As [`Fragments::load`]: the stage is complete (a barrier since its last store), and
    /// every lane of the warp calls it.
    #[inline(always)]
    unsafe fn load<T: Half, const NT: usize>(
        stage: &Stage<T>,
        kk: u32,
        me: Lane,
    ) -> ([[u32; 4]; MT], [[u32; 2]; NT]) {
        let (g, t) = me.group();
        let (a_s, b_s): (&SharedTile<T>, &SharedTile<T>) = (&stage.a, &stage.b);
        let mut af = [[0u32; 4]; MT];
        let mut bf = [[0u32; 2]; NT];
        for (i, f) in af.iter_mut().enumerate() {
            let (r, c) = (me.warp_row + 16 * i as u32 + g, kk + 2 * t);
            // SAFETY: `get_pair_bits`' points: rows r, r + 8 < BM and even columns c, c + 8 (each
            // with c + 1) below kk + 16 <= the stage's K (`multiply`'s steps), in A's rows of even
            // length BK + PAD; complete and unwritten until the next barrier (`load`'s contract).
            *f = unsafe {
                [
                    a_s.get_pair_bits(r, c),
                    a_s.get_pair_bits(r + 8, c),
                    a_s.get_pair_bits(r, c + 8),
                    a_s.get_pair_bits(r + 8, c + 8),
                ]
            };
        }
        for (j, f) in bf.iter_mut().enumerate() {
            let (k, c) = (kk + 2 * t, me.warp_col + 8 * j as u32 + g);
            // SAFETY: `get`'s points: K rows kk + 2t .. kk + 2t + 9 < kk + 16 and column warp_col +
            // 8 j + g < warp_col + 8 NT <= BN (NT = BN / 32) lie in B's tile, complete and
            // unwritten until the next barrier (`load`'s contract).
            *f = unsafe {
                [
                    pack(b_s.get(k, c), b_s.get(k + 1, c)),
                    pack(b_s.get(k + 8, c), b_s.get(k + 9, c)),
                ]
            };
        }
        (af, bf)
    }
}
/// Fragments loaded by `ldmatrix`.
pub struct Ldmatrix;

impl Fragments for Ldmatrix {
    /// # Safety
    /// As [`Fragments::load`]: the stage is complete (a barrier since its last store), and
    /// every lane of the warp calls it.
    #[inline(always)]
    unsafe fn load<T: Element, const NT: usize>(
        stage: &Stage<T>,
        kk: u32,
        me: Lane,
    ) -> ([[u32; 4]; MT], [[u32; 2]; NT]) {
        // Lane l gives row l % 8 of matrix l / 8: matrices 0-3 are (rows 0-7, K 0-7), (rows
        // 8-15, K 0-7), (rows 0-7, K 8-15), (rows 8-15, K 8-15) of an m16 tile, which is
        // the order of A's fragment registers.
        let (r8, half) = (me.lane % 8 + 8 * ((me.lane / 8) % 2), 8 * (me.lane / 16));
        let mut af = [[0u32; 4]; MT];
        for (i, f) in af.iter_mut().enumerate() {
            let row = me.warp_row + 16 * i as u32 + r8;
            // SAFETY: `x4`'s points: `row16` puts the lane's 16 bytes in A's tile (row < BM,
            // columns kk + half .. + 8 <= kk + 16), 16-aligned ((BK + PAD) 2-byte rows: 80 or 144
            // bytes); complete (`load`'s contract); MT is a constant: the whole warp.
            *f = unsafe { ldmatrix::x4(stage.a.row16(row, kk + half)) };
        }
        // B: matrices (K 0-7, tile j), (K 8-15, tile j), (K 0-7, tile j + 1), (K 8-15, tile
        // j + 1), transposed: the two registers of tile j, then those of j + 1.
        let mut bf = [[0u32; 2]; NT];
        for j in (0..NT).step_by(2) {
            let col = me.warp_col + 8 * j as u32 + half;
            // SAFETY: as for A: K row kk + r8 < kk + 16 and columns col .. col + 8 <= warp_col + 8
            // NT <= BN of B's tile, 16-byte aligned ((BN + PAD) 2-byte rows, col a multiple of 8);
            // complete; the steps of `j` are constants: the whole warp.
            let r = unsafe { ldmatrix::x4_trans(stage.b.row16(kk + r8, col)) };
            bf[j] = [r[0], r[1]];
            bf[j + 1] = [r[2], r[3]];
        }
        (af, bf)
    }
}
