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

/// One `mma.sync.aligned.<shape>` with four C = D registers and the A and B registers of
/// the shape (the arrays `$a` and `$b`, their elements named as listed), all of register
/// class `$reg`.
#[cfg(target_arch = "nvptx64")]
macro_rules! mma_sync {
    (
        $shape:expr, $reg:ident, $a:expr => [$a0:ident $(, $ai:ident)*],
        $b:expr => [$b0:ident $(, $bi:ident)*], $c:expr
    ) => {{
        let ([$a0 $(, $ai)*], [$b0 $(, $bi)*], mut d) = ($a, $b, $c);
        // SAFETY: a warp-wide instruction with register operands only; every lane of the warp
        // executes it (the kernels call it in warp-uniform control flow).
        unsafe {
            core::arch::asm!(
                concat!(
                    "mma.sync.aligned.", $shape, " {{{d0}, {d1}, {d2}, {d3}}}, ",
                    "{{{", stringify!($a0), "}", $(", {", stringify!($ai), "}",)* "}}, ",
                    "{{{", stringify!($b0), "}", $(", {", stringify!($bi), "}",)* "}}, ",
                    "{{{d0}, {d1}, {d2}, {d3}}};"
                ),
                d0 = inout($reg) d[0],
                d1 = inout($reg) d[1],
                d2 = inout($reg) d[2],
                d3 = inout($reg) d[3],
                $a0 = in($reg) $a0,
                $($ai = in($reg) $ai,)*
                $b0 = in($reg) $b0,
                $($bi = in($reg) $bi,)*
            );
        }
        d
    }};
}

/// `mma_sync!` with four A registers and two B: m16n8k16 on 16-bit pairs, m16n8k8 on TF32 or
/// f64.
#[cfg(target_arch = "nvptx64")]
macro_rules! mma_4x2 {
    ($shape:expr, $reg:ident, $a:expr, $b:expr, $c:expr) => {
        mma_sync!($shape, $reg, $a => [a0, a1, a2, a3], $b => [b0, b1], $c)
    };
}

macro_rules! mma_m16n8k16 {
    ($(#[$doc:meta])* $name:ident, $ty:literal, $widen:expr) => {
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
            #[cfg(target_arch = "nvptx64")]
            return mma_4x2!(concat!("m16n8k16.row.col.f32.", $ty, ".", $ty, ".f32"), reg32, a, b, c);
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
    |bits| half::f16::from_bits(bits).to_f32()
);

/// The host's `mma.sync` (see the module documentation).
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulate(a: [u32; 4], b: [u32; 2], c: [f32; 4], widen: Widen) -> [f32; 4] {
    let mine = [a[0], a[1], a[2], a[3], b[0], b[1], 0, 0, 0, 0, 0, 0];
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
    // Element `i` of D is row `g + 8 (i / 2)` and column `2 t + i % 2`: this lane's two
    // rows of A and two columns of B, each element widened once, then summed in K order.
    let rows: [[f32; 16]; 2] =
        core::array::from_fn(|h| core::array::from_fn(|k| a_at(g + 8 * h, k)));
    let cols: [[f32; 16]; 2] =
        core::array::from_fn(|e| core::array::from_fn(|k| b_at(k, 2 * t + e)));
    let mut d = c;
    super::host_sums::fused_sums(&mut d, &rows, &cols);
    d
}

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: the TF32 shape, one 32-bit element
/// per register (g = lane / 4, t = lane % 4):
/// - A (16 x 8): a0 = (g, t), a1 = (g + 8, t), a2 = (g, t + 4), a3 = (g + 8, t + 4);
/// - B (8 x 8): b0 = (t, g), b1 = (t + 4, g);
/// - C, D: as m16n8k16's.
///
/// The operands are TF32 bit patterns (`cvt.rna.tf32.f32`: an f32 whose 13 low mantissa bits
/// are zero). The host reads only their top 19 bits, as the tensor cores do; the products
/// are then exact in f32 and are added to C in K order with f32 fused multiply-adds (the
/// tensor cores' order and rounding of that sum are not documented, so the two agree within
/// an f32 accumulation's tolerance).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn m16n8k8_tf32(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    #[cfg(target_arch = "nvptx64")]
    return mma_4x2!("m16n8k8.row.col.f32.tf32.tf32.f32", reg32, a, b, c);
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let tf32 = |bits: u32| f32::from_bits(bits & !0x1fff);
        let mine = [a[0], a[1], a[2], a[3], b[0], b[1], 0, 0, 0, 0, 0, 0];
        let all = super::host::warp_exchange(mine);
        let words = |lane: usize, reg: usize| [all[lane][reg]];
        let d = emulate_k8(&words, c.map(|x| x as f64), |w| tf32(w[0]) as f64, true);
        d.map(|x| x as f32)
    }
}

/// `mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64` (FP64 tensor cores, DMMA; compute
/// capability 9.0): the layout of [`m16n8k8_tf32`] with one f64 per register. Each element
/// of D is C plus 8 products, each added with round-to-nearest (`.rn`, the only mode); the
/// host adds them in K order with f64 fused multiply-adds.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn m16n8k8_f64(a: [f64; 4], b: [f64; 2], c: [f64; 4]) -> [f64; 4] {
    #[cfg(target_arch = "nvptx64")]
    return mma_4x2!("m16n8k8.row.col.f64.f64.f64.f64", reg64, a, b, c);
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // A's four registers, then B's two.
        let all = exchange_f64(&[a[0], a[1], a[2], a[3], b[0], b[1]]);
        let words = |lane: usize, reg: usize| [all[lane][2 * reg], all[lane][2 * reg + 1]];
        let join = |w: [u32; 2]| f64::from_bits(w[0] as u64 | (w[1] as u64) << 32);
        emulate_k8(&words, c, join, false)
    }
}

/// `mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64` (compute capability 9.0; SASS
/// `DMMA.16x8x4`): the first half of [`m16n8k8_f64`], K steps 0..4: lane (g, t) holds
/// A(g, t) and A(g + 8, t), B(t, g), and C / D as m16n8k8's. Half the fragment registers a
/// step, at the same rate of the FP64 tensor pipe (a register-only probe on an H200: 66.7
/// TFLOP/s for m16n8k4, 66.8 for m16n8k8). The host adds the 4 products in K order with
/// f64 fused multiply-adds.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn m16n8k4_f64(a: [f64; 2], b: f64, c: [f64; 4]) -> [f64; 4] {
    #[cfg(target_arch = "nvptx64")]
    return mma_sync!(
        "m16n8k4.row.col.f64.f64.f64.f64", reg64, a => [a0, a1], [b] => [b0], c
    );
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // A's two registers, then B's.
        let all = exchange_f64(&[a[0], a[1], b]);
        let reg = |lane: usize, r: usize| {
            f64::from_bits(all[lane][2 * r] as u64 | (all[lane][2 * r + 1] as u64) << 32)
        };
        // A(r, k): lane 4 (r % 8) + k, register r >= 8; B(k, n): lane 4 n + k, register 2.
        let a_at = |r: usize, k: usize| reg(4 * (r % 8) + k, (r >= 8) as usize);
        let b_at = |k: usize, n: usize| reg(4 * n + k, 2);
        let lane = super::host::lane_id() as usize;
        let (g, t) = (lane / 4, lane % 4);
        let mut d = c;
        for (i, d) in d.iter_mut().enumerate() {
            let (row, col) = (g + 8 * (i / 2), 2 * t + i % 2);
            for k in 0..4 {
                *d = a_at(row, k).mul_add(b_at(k, col), *d);
            }
        }
        d
    }
}

/// The host's exchange of a warp's f64 registers (at most 6): each as two words, low first,
/// in the order given; returns every lane's words.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn exchange_f64(regs: &[f64]) -> [[u32; super::host::EXCHANGE_WORDS]; 32] {
    let mut mine = [0u32; super::host::EXCHANGE_WORDS];
    for (i, x) in regs.iter().enumerate() {
        let bits = x.to_bits();
        (mine[2 * i], mine[2 * i + 1]) = (bits as u32, (bits >> 32) as u32);
    }
    super::host::warp_exchange(mine)
}

/// The host's m16n8k8 with one element per register: `words(lane, register)` is what a lane
/// handed in for register 0..4 (A) and 4..6 (B); `value` reads one element from it. The
/// sum runs in K order, in f64 fused multiply-adds, rounded to f32 after every step when
/// `f32_steps` (exact products: TF32 x TF32 fits f32's mantissa).
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulate_k8<W: Copy>(
    words: &dyn Fn(usize, usize) -> W,
    c: [f64; 4],
    value: impl Fn(W) -> f64,
    f32_steps: bool,
) -> [f64; 4] {
    let lane = super::host::lane_id() as usize;
    // A(r, k): lane 4 (r % 8) + k % 4, register (r >= 8) + 2 (k >= 4).
    let a_at = |r: usize, k: usize| {
        value(words(
            4 * (r % 8) + k % 4,
            (r >= 8) as usize + 2 * (k >= 4) as usize,
        ))
    };
    // B(k, n): lane 4 n + k % 4, register 4 + (k >= 4).
    let b_at = |k: usize, n: usize| value(words(4 * n + k % 4, 4 + (k >= 4) as usize));
    let (g, t) = (lane / 4, lane % 4);
    // As `emulate`: this lane's two rows of A and two columns of B, each element read once,
    // then summed in K order (in f32 steps for TF32, whose values are f32s).
    let rows: [[f64; 8]; 2] =
        core::array::from_fn(|h| core::array::from_fn(|k| a_at(g + 8 * h, k)));
    let cols: [[f64; 8]; 2] =
        core::array::from_fn(|e| core::array::from_fn(|k| b_at(k, 2 * t + e)));
    if f32_steps {
        let narrow = |x: [[f64; 8]; 2]| x.map(|r| r.map(|v| v as f32));
        let mut d = c.map(|x| x as f32);
        super::host_sums::fused_sums(&mut d, &narrow(rows), &narrow(cols));
        d.map(|x| x as f64)
    } else {
        let mut d = c;
        super::host_sums::fused_sums(&mut d, &rows, &cols);
        d
    }
}

/// `x` rounded to TF32 (`cvt.rna.tf32.f32`: 10 mantissa bits, to nearest, ties away from
/// zero), as the bits of an f32 whose 13 low mantissa bits are zero: a TF32 operand of
/// [`m16n8k8_tf32`]. Overflow gives Inf; NaN stays NaN.
#[inline(always)]
pub fn round_tf32(x: f32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let bits: u32;
        // SAFETY: a conversion between registers.
        unsafe {
            core::arch::asm!("cvt.rna.tf32.f32 {b}, {x};", b = out(reg32) bits, x = in(reg32) x)
        };
        bits
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if x.is_nan() {
            return 0x7fff_e000;
        }
        // Sign and magnitude: adding half a unit of TF32's last place to the magnitude rounds
        // it half away from zero; the carry may reach the exponent (and Inf), as it should.
        x.to_bits().wrapping_add(0x1000) & !0x1fff
    }
}

/// `mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64` (compute capability 9.0): two
/// [`m16n8k8_f64`] steps in one instruction (SASS `DMMA.16x8x16`); the fragments are the
/// two steps' side by side: A registers 0..4 hold columns 0..8 and 4..8 columns 8..16 (each
/// as m16n8k8's), B registers 0, 1 rows 0..8 and 2, 3 rows 8..16. The host runs the two
/// steps in K order.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn m16n8k16_f64(a: [f64; 8], b: [f64; 4], c: [f64; 4]) -> [f64; 4] {
    #[cfg(target_arch = "nvptx64")]
    return mma_sync!(
        "m16n8k16.row.col.f64.f64.f64.f64",
        reg64,
        a => [a0, a1, a2, a3, a4, a5, a6, a7],
        b => [b0, b1, b2, b3],
        c
    );
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let low = m16n8k8_f64([a[0], a[1], a[2], a[3]], [b[0], b[1]], c);
        m16n8k8_f64([a[4], a[5], a[6], a[7]], [b[2], b[3]], low)
    }
}
