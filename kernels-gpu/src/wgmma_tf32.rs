//! f32 products in TF32 on Hopper's `wgmma` ([`Precision::Tf32`], only when asked):
//! `wgmma_persistent`'s pipeline (TMA, warp-specialised, persistent grid) with
//! `wgmma.mma_async.m64n256k8.f32.tf32.tf32`, after a pack launch.
//!
//! Why a pack launch: TF32 `wgmma` reads both operands K-major only (no transpose
//! immediates), so a row-major B (N contiguous) cannot be read as it is stored; and TF32
//! means each input rounded to nearest (`cvt.rna.tf32.f32`), which the instruction does not
//! do (it reads the upper 19 bits). [`pack_tf32`] therefore writes, into the launch's
//! workspace, B as `n x k` (B^T) and, unless the main launch reads A in place, A as `m x k`,
//! both row-major with rows of [`Packing::row`] elements (16-byte units), every element
//! rounded to TF32, whatever the caller's layout, transposes, leading dimensions and batch
//! strides: every form of the product becomes one K-major pair. It reads and writes each
//! operand once.
//!
//! A row-major A that TMA can read as it lies ([`Packing::a_in_place`]: 16-byte aligned
//! rows and planes) is not packed: the main launch's maps read the caller's A, and each
//! consumer warp loads its A fragments from the stage into registers, rounding them on the
//! way, for `wgmma` with A from registers (`wgmma_tma`'s `mainloop_tf32`). At 4096^3 that
//! drops half of the pack's 256 MB of traffic: 0.376 ms against 0.397 (H200). (TMA's own
//! TFLOAT32 maps round a tie such as 1 + 2^-11 down, not away from zero as `cvt.rna`, H200:
//! they are not used.)
//!
//! The main launch's problem block describes the operands it reads (B transposed with
//! leading dimension [`Packing::row`], one plane per product or one for a shared operand;
//! A packed so too, or the caller's); its tensor maps read them with boxes of 128 x 32 and
//! 256 x 32 elements (128-byte rows, swizzled as `wgmma` reads them); C is the caller's,
//! alpha and beta applied by the same epilogue as the 16-bit kernels.
//!
//! Launch rules ([`SPEC`]): the pack, grid `ceil(row / 64) x (ceil(n / 64) [+ ceil(m /
//! 64)]) x batch` blocks of 32 x 8 threads, 16,640 shared bytes; then as `wgmma_persistent`
//! (4 stages of 48 KiB, TF32 elements 4 bytes); the workspace holds the two maps and the
//! packed operands ([`Packing`], room for A whether or not it is packed); f32 only, sm_90a.
use crate::catalogue::{Elem, Grid, KernelSpec, Pack, Precision, Shared, TensorMaps};
use crate::device::global::{load, store};
use crate::device::shared::SharedArena;
use crate::device::thread::{
    block_idx_x, block_idx_y, block_idx_z, sync_threads, thread_idx_x, thread_idx_y,
};
use crate::element::{Accumulator, Element};
use crate::problem::{Gemm, Problem, TRANSPOSED_B, entry_points};
use crate::wgmma_async::{ATOM, BM, BN, STAGES};
use crate::wgmma_tma::{stage_k, warp_specialised};

/// K elements of a stage: 32 TF32 elements, one 128-byte row.
const BK: u32 = stage_k::<f32>();

pub const SPEC: KernelSpec = KernelSpec {
    name: "wgmma_tf32",
    file: file!(),
    idea: "f32 in TF32 when asked: B (and an A TMA cannot read K-major) packed K-major and rounded (`cvt.rna`) by a first launch, a row-major A read in place, rounded on its way to `wgmma`'s A registers; `wgmma_persistent`'s pipeline with `wgmma` m64n256k8 tf32",
    grid: Grid::Persistent,
    shared: Shared::InputElements(STAGES * (BM * BK + BK * BN) + ATOM / 4 + 2 * 2 * STAGES),
    elements: &[Elem::F32],
    tma: Some(TensorMaps::packed(
        (BM, BN, BK),
        Pack {
            name: "pack_tf32",
            parts: 1,
        },
    )),
    precision: Precision::Tf32,
    ..crate::wgmma_tma::SPEC
};

/// Threads of a pack block (32 x 8) and the side of its square of elements (16 a thread,
/// all loaded before any is stored: 32 x 32 squares, 4 a thread, moved 2.1 TB/s on an H200).
pub const PACK_BLOCK: (u32, u32) = (32, 8);
const SIDE: u32 = 64;
/// Shared bytes of a pack block per part: its square, rows padded by one word (no bank
/// conflicts either way it is read).
pub const PACK_SHARED: u32 = SIDE * (SIDE + 1) * 4;

/// Where a pack launch ([`pack_tf32`], or 3xTF32's with two parts) puts the packed
/// operands: byte offsets in the workspace (after the two tensor maps), each `parts x
/// planes x rows x row` 4-byte elements, part `i` of product `z` at plane `i planes + z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packing {
    /// Elements of a packed row: K rounded up to 4 (16 bytes).
    pub row: u32,
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
    pub fn of(p: &Problem, parts: u32) -> Self {
        // (At least one 16-byte unit: a tensor map's row stride cannot be 0, and K = 0
        // still launches the main kernel, which then reads nothing.)
        let row = p.k.div_ceil(4).max(1) * 4;
        let planes = |stride: u64| if stride == 0 { 1 } else { p.batch };
        let planes = (planes(p.batch_stride_a), planes(p.batch_stride_b));
        let part = |planes: u32, rows: u32| {
            parts as usize * planes as usize * rows as usize * row as usize * 4
        };
        let (a_bytes, b_bytes) = (part(planes.0, p.m), part(planes.1, p.n));
        let a_at = TensorMaps::BYTES;
        let b_at = a_at + a_bytes.div_ceil(256) * 256;
        Self {
            row,
            a_at,
            b_at,
            planes,
            parts,
            bytes: b_at + b_bytes,
        }
    }

    /// Whether the main launch reads the caller's A at address `a` in place rather than a
    /// packed copy: TF32 of one part, A row-major (K contiguous, as `wgmma` reads it) and
    /// readable by TMA as it lies ([`crate::device::tma::reads_operand`]). Its consumers
    /// round each stage of A to TF32 in shared memory (`wgmma_tma`'s mainloop), and the pack
    /// launch writes only B^T: half the pack's traffic at a square shape.
    #[inline(always)]
    pub fn a_in_place(&self, p: &Problem, a: u64) -> bool {
        let (stride, batch) = (p.batch_stride_a, p.batch);
        self.parts == 1
            && !p.strides().a_t
            && crate::device::tma::reads_operand(a, (p.m, p.lda), stride, batch, 4)
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

/// The main launch: the packed operands through their tensor maps.
///
/// # Safety
/// See the entry points; 384 threads per block; T is f32; the workspace holds the maps and
/// the operands [`pack_tf32`] wrote for this problem (the block is [`Packing::problem`]).
#[inline(always)]
pub unsafe fn wgmma_tf32<T: Element>(gemm: Gemm<T>) {
    unsafe { warp_specialised::<T, true, [f32; 128], STAGES>(gemm) }
}

/// The pack launch: block `(x, y, z)` writes a 64 x 64 square of product `z`'s packed B^T
/// (the first `ceil(n / 64)` rows of blocks) or A (the others, if launched), elements `(r, q)` = `(row
/// of A or column of B, K)`, zeros past K up to the packed row. Each square is read along
/// whichever of its two indices is contiguous in the caller's layout, and written along K.
///
/// # Safety
/// See the entry points; 32 x 8 threads, [`PACK_SHARED`] bytes; T is f32; the block is the
/// caller's problem, the workspace [`Packing::bytes`] long.
#[inline(always)]
pub unsafe fn pack_tf32<T: Element>(gemm: Gemm<T>) {
    unsafe { pack::<T, 1>(gemm) }
}

/// The pack launch of `PARTS` parts (1: each element rounded to TF32; 2: 3xTF32's big =
/// tf32(x) and small = tf32(x - big), in planes of their own, [`Packing`]), as
/// [`pack_tf32`] says; `PARTS` squares of [`PACK_SHARED`] bytes.
///
/// # Safety
/// As [`pack_tf32`], with `PARTS x PACK_SHARED` shared bytes.
#[inline(always)]
pub(crate) unsafe fn pack<T: Element, const PARTS: u32>(gemm: Gemm<T>) {
    let p = gemm.p;
    let (s, pack) = (p.strides(), Packing::of(&p, PARTS));
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
    let plane = (rows as usize) * (pack.row as usize) * 4;
    let dst = |part: u32| {
        let at = at + (z + part * planes) as usize * plane;
        words.wrapping_add(at).cast::<u32>()
    };
    // SAFETY: the launch provides PARTS x PACK_SHARED bytes.
    let mut arena = unsafe { SharedArena::<u32>::launch_sized() };
    let big = arena.tile(SIDE, SIDE + 1);
    let small = arena.tile(SIDE, (SIDE + 1) * (PARTS - 1));
    let place = |e: u32| {
        let (i, j) = (e / 2, e % 2);
        match along_k {
            true => (ty + 8 * i, tx + 32 * j),
            false => (tx + 32 * j, ty + 8 * i),
        }
    };
    // All 16 loads in flight before the first store.
    let mut x = [T::Acc::ZERO; (SIDE * SIDE / 256) as usize];
    for (e, x) in x.iter_mut().enumerate() {
        let (r, q) = place(e as u32);
        let (gr, gq) = (r0 + r, q0 + q);
        if gr < rows && gq < p.k {
            // SAFETY: inside the caller's view of product z (the host checked it).
            *x = unsafe { load(base, gr as usize * sr + gq as usize * sq) }.widen();
        }
    }
    for (e, x) in x.into_iter().enumerate() {
        let (r, q) = place(e as u32);
        if PARTS == 1 {
            unsafe { big.set(r, q, x.tf32()) };
        } else {
            let [hi, lo] = split_tf32(x);
            unsafe {
                big.set(r, q, hi);
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
                // SAFETY: inside the packed planes (Packing::of sized the workspace).
                unsafe {
                    store(dst(0), at, big.get(r, q));
                    if PARTS == 2 {
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
pub(crate) fn split_tf32<A: Accumulator>(x: A) -> [u32; 2] {
    let rounded = x.tf32();
    let past = !A::from_tf32(rounded).is_finite() && x.is_finite();
    let big = rounded - 0x2000 * past as u32;
    let rest = x - A::from_tf32(big);
    let small = if rest.is_finite() { rest.tf32() } else { 0 };
    let over = past && !(A::from_tf32(big) + A::from_tf32(small)).is_finite();
    [big, small - 0x2000 * over as u32]
}

entry_points!(strided wgmma_tf32; wgmma_tf32_f32: f32);
entry_points!(strided pack_tf32; pack_tf32_f32: f32);
