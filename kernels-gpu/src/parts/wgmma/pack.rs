//! The pre-launch pack of the `wgmma` kernels that read packed operands: A and B copied into
//! the workspace K-major, in rows of whole 128-byte lines, in the layout their tensor maps
//! read, each element as an [`Encoding`] says: rounded to TF32, split into 3xTF32's big and
//! small parts, or as stored (16-bit operands whose rows or bases TMA cannot read).
use crate::catalogue::PtxFact::{Barriers, Lacks};
use crate::catalogue::{PtxFacts, TensorMaps};
use crate::device::global::{load, store};
use crate::device::mma::round_tf32;
use crate::device::shared::SharedArena;
use crate::device::thread::{
    block_idx_x, block_idx_y, block_idx_z, sync_threads, thread_idx_x, thread_idx_y,
};
use crate::element::Element;
use crate::problem::{Gemm, Problem, TRANSPOSED_B};

/// What a pack launch writes for each element it reads: `PARTS` planes of `Word`s.
pub trait Encoding<T> {
    type Word: Copy;
    /// Planes per operand: 1, or 2 for 3xTF32's big and small parts.
    const PARTS: u32;
    /// The parts of `x` (the second unused with one part).
    fn encode(x: T) -> [Self::Word; 2];
}

/// TF32: each element rounded to nearest (`cvt.rna`).
pub struct Tf32;

impl Encoding<f32> for Tf32 {
    type Word = u32;
    const PARTS: u32 = 1;
    #[inline(always)]
    fn encode(x: f32) -> [u32; 2] {
        [round_tf32(x), 0]
    }
}

/// 3xTF32: big = tf32(x) and small = tf32(x - big) (`split_tf32`).
pub struct Tf32x3;

impl Encoding<f32> for Tf32x3 {
    type Word = u32;
    const PARTS: u32 = 2;
    #[inline(always)]
    fn encode(x: f32) -> [u32; 2] {
        split_tf32(x)
    }
}

/// The element as stored, bit for bit.
pub struct AsStored;

impl<T: Element> Encoding<T> for AsStored {
    type Word = T;
    const PARTS: u32 = 1;
    #[inline(always)]
    fn encode(x: T) -> [T; 2] {
        [x, x]
    }
}

/// What the entries of a pack launch that copies each element as stored show (the second
/// launch of `wgmma_packed` and `wgmma_packed_split`): one barrier, no local memory, no
/// conversion.
pub const AS_STORED_PACK: PtxFacts = PtxFacts::second(&[
    Barriers(1),
    Lacks(".local"),
    Lacks("cvt.f32"),
    Lacks("cvt.rn"),
]);

/// Threads of a pack block (32 x 8) and the side of its square of elements (16 a thread,
/// all loaded before any is stored: 32 x 32 squares, 4 a thread, moved 2.1 TB/s on an H200).
pub const PACK_BLOCK: (u32, u32) = (32, 8);
const SIDE: u32 = 64;
/// Shared bytes of a pack block per part: its square, rows padded by one word (no bank
/// conflicts either way it is read).
pub const PACK_SHARED: u32 = SIDE * (SIDE + 1) * 4;

/// Where a pack launch (`wgmma_tf32`'s `pack_tf32`, 3xTF32's with two parts, `wgmma_packed`'s
/// `pack_16`) puts the packed operands: byte offsets in the workspace (after the two tensor
/// maps), each `parts x planes x rows x row` elements of `width` bytes, part `i` of product
/// `z` at plane `i planes + z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packing {
    /// Elements of a packed row: K rounded up to whole 128-byte lines, so that each row of a
    /// TMA box (128 bytes of K) is one line (rows 16 bytes off the lines cost `wgmma_packed`
    /// 74% more time at 4096 x 4096 x 4099, H100).
    pub row: u32,
    /// Bytes of a packed element: 4 (TF32 words) or 2 (16-bit elements).
    pub width: u32,
    pub a_at: usize,
    pub b_at: usize,
    /// Planes of each part: the batch, or 1 for a shared operand (batch stride 0).
    pub planes: (u32, u32),
    /// Parts of each element (1: TF32; 2: big and small).
    pub parts: u32,
    /// Workspace bytes in all.
    pub bytes: usize,
}

impl Packing {
    #[inline(always)]
    pub fn of(p: &Problem, parts: u32, width: u32) -> Self {
        // (At least one line: a tensor map's row stride cannot be 0, and K = 0
        // still launches the main kernel, which then reads nothing.)
        let unit = 128 / width;
        let row = p.k.div_ceil(unit).max(1) * unit;
        let planes = |stride: u64| if stride == 0 { 1 } else { p.batch };
        let planes = (planes(p.batch_stride_a), planes(p.batch_stride_b));
        let part = |planes: u32, rows: u32| {
            parts as usize * planes as usize * rows as usize * row as usize * width as usize
        };
        let (a_bytes, b_bytes) = (part(planes.0, p.m), part(planes.1, p.n));
        let a_at = TensorMaps::BYTES;
        let b_at = a_at + a_bytes.div_ceil(256) * 256;
        Self {
            row,
            width,
            a_at,
            b_at,
            planes,
            parts,
            bytes: b_at + b_bytes,
        }
    }

    /// Whether the main launch reads the caller's A at address `a` in place rather than a
    /// packed copy: one part, A row-major (K contiguous, as `wgmma` reads it) and readable
    /// by TMA as it lies ([`crate::device::tma::reads_operand`]). The pack launch then
    /// writes only B^T: half the pack's traffic at a square shape. (In TF32 the consumers
    /// round each stage of A on its way to `wgmma`: `wgmma_tma`'s mainloop.)
    #[inline(always)]
    pub fn a_in_place(&self, p: &Problem, a: u64) -> bool {
        let (stride, batch) = (p.batch_stride_a, p.batch);
        self.parts == 1
            && !p.strides().a_t
            && crate::device::tma::reads_operand(a, (p.m, p.lda), stride, batch, self.width as u64)
    }

    /// The main launch's problem: `p` over the packed operands (A row-major, B transposed,
    /// both `row` apart; a plane per product unless shared), or over the caller's A where
    /// it is read in place ([`Packing::a_in_place`]).
    #[inline(always)]
    pub fn problem(&self, p: &Problem, a_in_place: bool) -> Problem {
        let plane = |planes: u32, rows: u32| match planes {
            1 => 0,
            _ => rows as u64 * self.row as u64,
        };
        let (lda, batch_stride_a) = match a_in_place {
            true => (p.lda, p.batch_stride_a),
            false => (self.row, plane(self.planes.0, p.m)),
        };
        Problem {
            lda,
            ldb: self.row,
            layout: TRANSPOSED_B,
            batch_stride_a,
            batch_stride_b: plane(self.planes.1, p.n),
            ..*p
        }
    }

    /// The pack launch's grid: B^T's rows of blocks first, then A's unless it is read in
    /// place.
    pub fn grid(&self, p: &Problem, a_in_place: bool) -> (u32, u32, u32) {
        let a_blocks = if a_in_place { 0 } else { p.m.div_ceil(SIDE) };
        (
            self.row.div_ceil(SIDE),
            p.n.div_ceil(SIDE) + a_blocks,
            p.batch,
        )
    }
}

/// The pack launch: each element encoded by `E` ([`Encoding`]: TF32, 3xTF32's two parts in
/// planes of their own, or as stored) into the layout [`Packing`] says; `E::PARTS` squares
/// of at most [`PACK_SHARED`] bytes.
///
/// # Safety
/// As [`pack_tf32`](crate::kernels::tf32::wgmma_tf32::pack_tf32) says, with `E::PARTS x
/// PACK_SHARED` shared bytes.
#[inline(always)]
pub(crate) unsafe fn pack<T: Element, E: Encoding<T>>(gemm: Gemm<T>) {
    let p = gemm.p;
    let width = core::mem::size_of::<E::Word>() as u32;
    let (s, pack) = (p.strides(), Packing::of(&p, E::PARTS, width));
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (z, tiles_n) = (block_idx_z(), p.n.div_ceil(SIDE));
    let is_a = block_idx_y() >= tiles_n;
    let (rows, stride, at, r0, planes) = match is_a {
        true => (
            p.m,
            p.batch_stride_a,
            pack.a_at,
            (block_idx_y() - tiles_n) * SIDE,
            pack.planes.0,
        ),
        false => (
            p.n,
            p.batch_stride_b,
            pack.b_at,
            block_idx_y() * SIDE,
            pack.planes.1,
        ),
    };
    if stride == 0 && z > 0 {
        return; // a shared operand: product 0's blocks pack its one plane
    }
    let q0 = block_idx_x() * SIDE;
    // The caller's element (r, q), op(A)(r, q) or op(B)(q, r), at `r sr + q sq` from
    // `base` (one expression for every layout: the loads need no branches between them).
    let (base, ld, along_k) = match is_a {
        true => (gemm.a, s.lda as usize, !s.a_t),
        false => (gemm.b, s.ldb as usize, s.b_t),
    };
    let (sr, sq) = if along_k { (ld, 1) } else { (1, ld) };
    let words = gemm.workspace.cast::<u8>();
    let plane = (rows as usize) * (pack.row as usize) * width as usize;
    let dst = |part: u32| {
        let at = at + (z + part * planes) as usize * plane;
        words.wrapping_add(at).cast::<E::Word>()
    };
    // SAFETY: the launch provides PARTS x PACK_SHARED bytes (the contract): the SIDE x (SIDE + 1)
    // words (at most 4 bytes each) of `big`, and for 2 parts of `small`, carved below.
    let mut arena = unsafe { SharedArena::<E::Word>::launch_sized() };
    let big = arena.tile(SIDE, SIDE + 1);
    let small = arena.tile(SIDE, (SIDE + 1) * (E::PARTS - 1));
    let place = |e: u32| {
        let (i, j) = (e / 2, e % 2);
        match along_k {
            true => (ty + 8 * i, tx + 32 * j),
            false => (tx + 32 * j, ty + 8 * i),
        }
    };
    // All 16 loads in flight before the first store.
    let mut x = [T::ZERO; (SIDE * SIDE / 256) as usize];
    for (e, x) in x.iter_mut().enumerate() {
        let (r, q) = place(e as u32);
        let (gr, gq) = (r0 + r, q0 + q);
        if gr < rows && gq < p.k {
            // SAFETY: `load`'s point: gr < rows and gq < k: element (gr, gq) of op(A) or op(B)^T of
            // product z, at gr sr + gq sq in its buffer as `s` lays it out (the entry points'
            // contract).
            *x = unsafe { load(base, gr as usize * sr + gq as usize * sq) };
        }
    }
    for (e, x) in x.into_iter().enumerate() {
        let (r, q) = place(e as u32);
        let [hi, lo] = E::encode(x);
        // SAFETY: `set`'s points: (r, q) < (SIDE, SIDE) in the SIDE x (SIDE + 1) tiles (`small`
        // only with two parts); `place` gives each thread and `e` its own element; nobody
        // reads it before the barrier below.
        unsafe {
            big.set(r, q, hi);
            if E::PARTS == 2 {
                small.set(r, q, lo);
            }
        }
    }
    sync_threads();
    for i in 0..SIDE / 8 {
        for j in 0..SIDE / 32 {
            let (r, q) = (ty + 8 * i, tx + 32 * j);
            let (gr, gq) = (r0 + r, q0 + q);
            if gr < rows && gq < pack.row {
                let at = gr as usize * pack.row as usize + gq as usize;
                // SAFETY: `get`: (r, q) in the tiles, written before the barrier above; `store`: gr
                // < rows, gq < row: inside plane z + part planes of the workspace `Packing::of`
                // sized (the contract), this thread's element only.
                unsafe {
                    store(dst(0), at, big.get(r, q));
                    if E::PARTS == 2 {
                        store(dst(1), at, small.get(r, q));
                    }
                }
            }
        }
    }
}

/// 3xTF32's parts of `x`: big = tf32(x) and small = tf32(x - big), small 0 where x is
/// not finite. Where rounding would carry a finite x past f32's range (|x| above
/// `(2 - 2^-11) 2^127`), big is the largest TF32 of x's sign instead, and small one TF32
/// step smaller in magnitude where big + small would still overflow, so that the sum stays
/// within a few ulp of x (rounded to nearest, big would be Inf and the product Inf where
/// FP32's is finite). Two roundings either way: the fix-ups are selects (sign and
/// magnitude: one less in the bits is one TF32 step nearer zero, Inf's bits less one step
/// the largest TF32).
#[inline(always)]
pub(crate) fn split_tf32(x: f32) -> [u32; 2] {
    let rounded = round_tf32(x);
    let past = !f32::from_bits(rounded).is_finite() && x.is_finite();
    let big = rounded - 0x2000 * past as u32;
    let rest = x - f32::from_bits(big);
    let small = if rest.is_finite() {
        round_tf32(rest)
    } else {
        0
    };
    let over = past && !(f32::from_bits(big) + f32::from_bits(small)).is_finite();
    [big, small - 0x2000 * over as u32]
}
