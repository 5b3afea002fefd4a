//! Tensor-core matrix multiply-accumulate, `mma.sync.aligned.m16n8k16.row.col.f32.<t>.<t>.f32`
//! (compute capability 8.0 and newer): a warp computes `D = A B + C` for a 16 x 8 tile of
//! C with K = 16, each lane holding a fragment. The fragments, as the PTX ISA lays them
//! out (g = lane / 4, t = lane % 4; each 32-bit register holds two 16-bit elements, the
//! first in the low half):
//! - A (16 x 16, row-major): register 0 = row g, columns 2t, 2t + 1; register 1 = row g + 8,
//!   the same columns; registers 2, 3 = as 0, 1, columns + 8.
//! - B (16 x 8, by column): register 0 = rows 2t, 2t + 1 of column g; register 1 = rows + 8.
//! - C, D (16 x 8, f32): elements 0, 1 = row g, columns 2t, 2t + 1; elements 2, 3 = row g + 8.
//!
//! On the host (CPU executor) the operation is a warp-wide exchange: every lane hands in its
//! A and B registers, and once all 32 have arrived each computes its four elements of D from
//! them, lane-exact in layout. Arithmetic: the 16 products of each element (exact in f32)
//! are added to C in K order with f32 fused multiply-adds. The tensor cores' own order and
//! rounding of that sum are not documented (measured work reports truncation rather than
//! round-to-nearest in the additions), so the two agree within the tolerance of an f32
//! accumulation, not bit for bit.

/// Elements of a 16-bit type as the executor reads them from a fragment.
#[cfg(not(target_arch = "nvptx64"))]
type Widen = fn(u16) -> f32;

macro_rules! mma_m16n8k16 {
    ($(#[$doc:meta])* $name:ident, $ty:literal, $widen:expr) => {
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
            #[cfg(target_arch = "nvptx64")]
            {
                let mut d = c;
                // SAFETY: a warp-wide instruction with register operands only; every lane of
                // the warp executes it (the kernels call it in warp-uniform control flow).
                unsafe {
                    core::arch::asm!(
                        concat!("mma.sync.aligned.m16n8k16.row.col.f32.", $ty, ".", $ty, ".f32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{d0}, {d1}, {d2}, {d3}}};"),
                        d0 = inout(reg32) d[0],
                        d1 = inout(reg32) d[1],
                        d2 = inout(reg32) d[2],
                        d3 = inout(reg32) d[3],
                        a0 = in(reg32) a[0],
                        a1 = in(reg32) a[1],
                        a2 = in(reg32) a[2],
                        a3 = in(reg32) a[3],
                        b0 = in(reg32) b[0],
                        b1 = in(reg32) b[1],
                    );
                }
                d
            }
            #[cfg(not(target_arch = "nvptx64"))]
            emulate(a, b, c, $widen)
        }
    };
}

mma_m16n8k16!(
    /// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`
    m16n8k16_bf16,
    "bf16",
    |bits| f32::from_bits((bits as u32) << 16)
);
mma_m16n8k16!(
    /// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`
    m16n8k16_f16,
    "f16",
    |bits| f16::from_bits(bits) as f32
);

/// The host's `mma.sync` (see the module documentation).
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulate(a: [u32; 4], b: [u32; 2], c: [f32; 4], widen: Widen) -> [f32; 4] {
    let mine = [a[0], a[1], a[2], a[3], b[0], b[1], 0, 0];
    let all = super::host::warp_exchange(mine);
    let lane = super::host::lane_id() as usize;
    let half = |word: u32, odd: bool| {
        widen(if odd {
            (word >> 16) as u16
        } else {
            word as u16
        })
    };
    // A(r, k): lane 4 (r % 8) + (k % 8) / 2, register (r >= 8) + 2 (k >= 8), half k % 2.
    let a_at = |r: usize, k: usize| {
        let word = all[4 * (r % 8) + (k % 8) / 2][(r >= 8) as usize + 2 * (k >= 8) as usize];
        half(word, k % 2 == 1)
    };
    // B(k, n): lane 4 n + (k % 8) / 2, register 4 + (k >= 8), half k % 2.
    let b_at = |k: usize, n: usize| {
        let word = all[4 * n + (k % 8) / 2][4 + (k >= 8) as usize];
        half(word, k % 2 == 1)
    };
    let (g, t) = (lane / 4, lane % 4);
    let mut d = c;
    for (i, d) in d.iter_mut().enumerate() {
        let (row, col) = (g + 8 * (i / 2), 2 * t + i % 2);
        for k in 0..16 {
            *d = a_at(row, k).mul_add(b_at(k, col), *d);
        }
    }
    d
}
