//! Shared-memory tiling: the textbook's second kernel, with its boundary checks.
//!
//! Launch rules ([`TILED16`] and its siblings): block `TILE x TILE` threads, grid
//! `ceil(n / TILE) x ceil(m / TILE)`, shared bytes `2 * TILE * TILE * size_of(Acc)`
//! (the A tile, then the B tile, in the accumulator type).
//!
//! Each phase (one TILE step along K) every thread loads one element of A and one of B
//! into shared memory, zero where the element lies outside the matrix, so the
//! multiply-add loop needs no checks; `ceil(k / TILE)` phases cover any K. The three
//! boundary checks (load A, load B, store C) are independent: a thread whose C element is
//! outside the matrix still loads for its neighbours. Both barriers sit in block-uniform
//! control flow: every thread runs the same number of phases.
use crate::catalogue::PtxFact::Barriers;
use crate::catalogue::PtxFacts;
use crate::catalogue::{
    ALL_ELEMENTS, Arch, Candidate, Grid, KernelSpec, PerAcc, Precision, Shared, Threads, Tile,
};
use crate::device::global::load;
use crate::device::shared::SharedArena;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y};
use crate::element::{Accumulator, Element};
use crate::element::{Bf16, Narrow};
use crate::problem::{Gemm, entry_points};

/// Two barriers per phase: after loading, and after use.
const PTX: &[PtxFacts] = &[PtxFacts::all(&[Barriers(2)])];

/// The spec of the tiled kernel of width `w` compiled in (`threads`, `tile`) or given at
/// launch (`Square`).
const fn tiled_spec(
    (name, idea): (&'static str, &'static str),
    threads: Threads,
    tile: Tile,
    shared: Shared,
) -> KernelSpec {
    KernelSpec {
        name,
        file: file!(),
        idea,
        arch: Arch::Sm70,
        threads,
        tile,
        grid: Grid::Tiles,
        shared,
        min_blocks_per_sm: PerAcc::NONE,
        elements: ALL_ELEMENTS,
        candidate: Candidate::Always,
        tensor_cores: false,
        tma: None,
        precision: Precision::Exact,
        strided: true,
        b_transposed: false,
        cpu: true,
        ptx: PTX,
    }
}

const fn fixed_width(name: &'static str, w: u32) -> KernelSpec {
    let tile = Tile::Fixed { rows: w, cols: w };
    let one_stage = Shared::Stages {
        stages: 1,
        bk: w,
        a_pad: 0,
    };
    let idea = "TILE x TILE shared tiles, collaborative loads, a barrier after loading and one after use, three independent boundary checks with zero padding; width compiled in";
    tiled_spec((name, idea), Threads::Fixed(w, w), tile, one_stage)
}

pub const TILED8: KernelSpec = fixed_width("tiled8", 8);
pub const TILED16: KernelSpec = fixed_width("tiled16", 16);
pub const TILED32: KernelSpec = fixed_width("tiled32", 32);
/// The width a launch argument, the shared memory sized at launch.
pub const TILED_DYN: KernelSpec = tiled_spec(
    (
        "tiled_dyn",
        "the same, width a launch argument, shared memory sized at launch",
    ),
    Threads::Square,
    Tile::Square,
    Shared::Squares { tiles: 2 },
);

/// `tiled` bodies of a tile width known at compile time: the inner loop unrolls.
macro_rules! fixed_tiled {
    ($($name:ident = $tile:literal),*) => {$(
        /// Tile width known at compile time: the inner loop unrolls.
        ///
        /// # Safety
        #[doc = concat!("See the entry points; block is ", $tile, " x ", $tile, ".")]
        #[inline(always)]
        pub unsafe fn $name<T: Element>(g: Gemm<T>) {
            // SAFETY: the entry point's contract, and the launch follows the spec
            // (`fixed_width`): a `TILE x TILE` block and one stage of `2 TILE^2` accumulators,
            // `tiled_body`'s contract for this tile.
            unsafe { tiled_body(g, $tile) }
        }
    )*};
}
fixed_tiled!(tiled8 = 8, tiled16 = 16, tiled32 = 32);

/// Tile width chosen at launch (the textbook's run-time `TILE_WIDTH`, with shared memory
/// sized at launch). The block must be `tile x tile` (`Problem::tile`).
///
/// # Safety
/// See the entry points.
#[inline(always)]
pub unsafe fn tiled_dyn<T: Element>(g: Gemm<T>) {
    // SAFETY: the entry point's contract, and the launch follows TILED_DYN: a `tile x tile` block
    // for `g.p.tile` and two such squares of shared memory, `tiled_body`'s contract.
    unsafe { tiled_body(g, g.p.tile) }
}

/// Reads A, B and C where [`Strides`](crate::problem::Strides) says (leading dimensions,
/// transposes) and stores `alpha AB + beta C`.
///
/// # Safety
/// See the entry points; the block is `tile x tile` threads and the launch provides
/// `2 tile^2` accumulators of shared memory (with `tile` 0 nothing is touched).
#[inline(always)]
unsafe fn tiled_body<T: Element>(g: Gemm<T>, tile: u32) {
    let (a, b, _, m, n, k) = g.plain();
    let (s, out) = (g.p.strides(), g.c_out());
    if tile == 0 {
        return; // the host never launches this; uniform, so no barrier is skipped by some only
    }
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let row = block_idx_y() * tile + ty;
    let col = block_idx_x() * tile + tx;

    // SAFETY: the launch provides 2 * tile * tile accumulator elements of shared memory.
    let mut arena = unsafe { SharedArena::<T::Acc>::launch_sized() };
    let a_tile = arena.tile(tile, tile);
    let b_tile = arena.tile(tile, tile);

    let mut acc = T::Acc::ZERO;
    let phases = k.div_ceil(tile);
    for phase in 0..phases {
        // Collaborative load; zero padding outside A and B.
        let a_col = phase * tile + tx;
        let a_val = if row < m && a_col < k {
            // SAFETY: row < m and a_col < k (checked), so `s.a` indexes op(A) inside `a` as the
            // entry point's contract lays it out.
            unsafe { load(a, s.a(row, a_col)).widen() }
        } else {
            T::Acc::ZERO
        };
        let b_row = phase * tile + ty;
        let b_val = if b_row < k && col < n {
            // SAFETY: b_row < k and col < n (checked): `s.b` indexes op(B) inside `b`, as for A.
            unsafe { load(b, s.b(b_row, col)).widen() }
        } else {
            T::Acc::ZERO
        };
        // SAFETY: (ty, tx) < (tile, tile), the block's shape; each thread writes only its own
        // element, after the barrier that ended the previous phase's reads.
        unsafe {
            a_tile.set(ty, tx, a_val);
            b_tile.set(ty, tx, b_val);
        }
        sync_threads(); // read-after-write: the tiles are complete

        for i in 0..tile {
            // SAFETY: i < tile; nobody writes the tiles until the next barrier.
            acc = acc.mul_add(unsafe { a_tile.get(ty, i) }, unsafe { b_tile.get(i, tx) });
        }
        sync_threads(); // write-after-read: everyone is done before the next phase loads
    }

    if row < m && col < n {
        // SAFETY: (row, col) is inside C (checked), which `s.c` indexes at `ldc`; the element is
        // this thread's alone, and a single element needs no alignment.
        unsafe { out.put(s.c(row, col), acc) };
    }
}

entry_points!(tiled8;
    tiled8_f32: f32, tiled8_f64: f64, tiled8_f16: f16, tiled8_bf16: Bf16, tiled8_f16_f16: Narrow<f16>, tiled8_bf16_bf16: Narrow<Bf16>);
entry_points!(tiled16;
    tiled16_f32: f32, tiled16_f64: f64, tiled16_f16: f16, tiled16_bf16: Bf16, tiled16_f16_f16: Narrow<f16>, tiled16_bf16_bf16: Narrow<Bf16>);
entry_points!(tiled32;
    tiled32_f32: f32, tiled32_f64: f64, tiled32_f16: f16, tiled32_bf16: Bf16, tiled32_f16_f16: Narrow<f16>, tiled32_bf16_bf16: Narrow<Bf16>);
entry_points!(tiled_dyn;
    tiled_dyn_f32: f32, tiled_dyn_f64: f64, tiled_dyn_f16: f16, tiled_dyn_bf16: Bf16, tiled_dyn_f16_f16: Narrow<f16>, tiled_dyn_bf16_bf16: Narrow<Bf16>);
