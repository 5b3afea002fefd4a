//! f32 products at FP32-class accuracy on Hopper's TF32 `wgmma` ([`Precision::Tf32x3`],
//! only when asked): `wgmma_tf32`'s pack launch splits each element x into big = tf32(x)
//! and small = tf32(x - big) (`pack::split_tf32`), written as planes of their own; the main
//! launch is `wgmma_tf32`'s warp-specialised persistent pipeline on 128 x 128 block tiles,
//! each stage holding A's and B^T's big and small tiles, and three `wgmma`s per K step:
//! small x big, big x small, big x big (small x small, about 2^-22 of the product, is
//! dropped).
//!
//! Accumulation: the tensor cores' f32 additions do not round to nearest (`mma_3xtf32`
//! measured the error growing with K to 10-20x FP32's when the products accumulate in the
//! instructions). So each consumer warpgroup multiplies a stage into partial sums that start
//! from zero (`wgmma` m64n128k8, the `scale-d` predicate off for the first) and adds them to
//! its accumulators with FP32 adds, rounded to nearest: 64 accumulators and 64 partial sums
//! a thread. (128 x 256 tiles, each warpgroup's in two halves of partial sums, needed 192
//! registers for them: ptxas spilled 776 bytes at the launch bounds' 168.)
//!
//! Inf and NaN: where big is not finite (x is Inf or NaN) small is 0, and a cross term can
//! then be Inf x 0 = NaN where IEEE gives Inf (an Inf against an element that TF32 holds
//! exactly). A tile whose sums hold a NaN is therefore multiplied again as big x big (Inf x b
//! as IEEE says; NaN where IEEE asks for one) for its NaN elements: the consumers tell the
//! producer through a shared word and an mbarrier at the end of each tile, and the producer
//! loads the tile's stages once more. Only tiles with a NaN pay for it; the others pay one
//! wait at each tile's end, before the producer loads the next tile.
//!
//! Launch rules ([`SPEC`]): the pack with two parts (grid as `wgmma_tf32`'s, 2 x 16,640
//! shared bytes); then 384 threads on a persistent grid of 128 x 128 tiles, 3 stages of 64
//! KiB (32 K of A's and B^T's two parts), 1 KiB to align them, 7 mbarriers and 2 words; f32
//! only, sm_90a.
use crate::catalogue::PtxFact::{Barriers, Count, Lacks};
use crate::catalogue::PtxFacts;
use crate::catalogue::{Elem, Grid, KernelSpec, Pack, Precision, Shared, TensorMaps, box_rows};
use crate::device::mbarrier;
use crate::device::shared::{SharedArena, shared_address};
use crate::device::thread::{sync_threads, thread_idx_x};
use crate::device::tma::{self, MAP_BYTES};
use crate::device::wgmma::{self, Descriptor, Swizzle};
use crate::element::Element;
use crate::parts::schedule::tile_order::TileOrder;
use crate::parts::wgmma::epilogue::epilogue;
use crate::parts::wgmma::pack::{Tf32x3, pack};
use crate::parts::wgmma::warp_specialised::{StageBarriers, consumes, spec, stage_k};
use crate::parts::wgmma::warpgroup::{ATOM, BM};
use crate::problem::{Gemm, entry_points, kernel};

/// K elements of a stage: 32 TF32 elements, one 128-byte row of each part.
const BK: u32 = stage_k::<f32>();
/// Columns of a block tile.
const BN: u32 = 128;
/// Three stages: each holds both parts of A and B^T (64 KiB).
const STAGES: u32 = 3;
/// Bytes of one part of A's stage and of B^T's (128 rows of 128 bytes each).
const A_PART: u32 = BM * BK * 4;
const B_PART: u32 = BN * BK * 4;
const STAGE: u32 = 2 * (A_PART + B_PART);
/// Threads that arrive on an `empty` barrier or the verdict: both consumer warpgroups.
const CONSUMERS: u32 = 256;

// Shared memory: the stages, the alignment slack, 7 mbarriers and the 2 verdict words, in
// 4-byte elements.
kernel! {
    SPEC = KernelSpec { shared: Shared::InputElements(STAGE / 4 * STAGES + ATOM / 4 + 2 * (2 * STAGES + 1) + 2),
        ..spec(("wgmma_3xtf32", file!()), "FP32-class accuracy on TF32 `wgmma` when asked: operands packed as big and small TF32 parts, three `wgmma` m64n128k8 per K step into partial sums added in FP32 each stage",
            (BN, STAGES), Grid::Persistent) }
        .with_elements(&[Elem::F32]).with_precision(Precision::Tf32x3).with_tma(TensorMaps::packed((BM, BN, BK), Pack { name: "pack_3xtf32", parts: 2, width: 4 }))
        .with_ptx(&[PtxFacts::all(&[Barriers(1), Count("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", 12 + 4), Count("cp.async.bulk.tensor.3d", 8),
                Lacks("mma.sync"), Lacks("m64n256")]),
            PtxFacts::second(&[Barriers(1), Count("cvt.rna.tf32.f32", 32), Lacks(".local")])]);
    fn wgmma_3xtf32;
    strided entries wgmma_3xtf32_f32: f32;
}

/// The pack launch: as `wgmma_tf32`'s, each element split into big and small.
///
/// # Safety
/// As `wgmma_tf32::pack_tf32`, with twice its shared bytes.
#[inline(always)]
pub unsafe fn pack_3xtf32(gemm: Gemm<f32>) {
    // SAFETY: `pack::<f32, Tf32x3>` needs the pack launch of 32 x 8 threads with 2 x PACK_SHARED bytes
    // (two parts), T f32, the caller's problem and a `Packing::bytes` workspace: this fn's
    // contract.
    unsafe { pack::<f32, Tf32x3>(gemm) }
}

/// The stages, their mbarriers, and the verdict (an mbarrier and two words) in shared
/// memory.
#[derive(Clone, Copy)]
struct Pipe {
    stages: *mut u8,
    bars: StageBarriers<STAGES>,
    /// Completes (phase `i`) when both consumer warpgroups have said whether tile `i` holds
    /// a NaN: in [`Pipe::word`] `i % 2`.
    verdict: *mut u64,
    words: *mut u32,
}

impl Pipe {
    #[inline(always)]
    fn word(&self, i: u32) -> *mut u32 {
        self.words.wrapping_add((i % 2) as usize)
    }

    /// Stage `s`: A's big and small parts, then B^T's.
    #[inline(always)]
    fn stage(&self, s: u32) -> *mut u8 {
        self.stages.wrapping_add((s * STAGE) as usize)
    }
}

/// # Safety
/// See the entry points; 384 threads per block; T is f32; the workspace holds the maps and
/// the two parts [`pack_3xtf32()`] wrote for this problem (the block is its packed problem).
#[inline(always)]
pub unsafe fn wgmma_3xtf32<T: Element>(gemm: Gemm<T>) {
    let (_, _, _, m, n, k) = gemm.plain();
    let order = TileOrder::of_width(true, (m, n), gemm.p.batch, BN);
    let tid = thread_idx_x();
    // SAFETY: the launch provides the stages, the alignment slack, the barriers and words.
    let mut arena = unsafe { SharedArena::<u8>::launch_sized() };
    let stages = arena.aligned(ATOM, STAGES * STAGE);
    let bars = StageBarriers(arena.aligned(8, 2 * STAGES * 8).cast::<u64>());
    let verdict = arena.aligned(8, 8).cast::<u64>();
    let words = arena.aligned(4, 8).cast::<u32>();
    let pipe = Pipe {
        stages,
        bars,
        verdict,
        words,
    };
    if tid == 0 {
        // SAFETY: thread 0 alone, before the barrier below publishes them: `bars` (2 x STAGES) and
        // `verdict` are 8-byte aligned mbarriers carved for nothing else, `words` two aligned u32s
        // of the arena that no other thread touches yet.
        unsafe {
            bars.init(CONSUMERS);
            mbarrier::init(verdict, CONSUMERS);
            pipe.word(0).write_volatile(0);
            pipe.word(1).write_volatile(0);
        }
        mbarrier::fence_init();
    }
    sync_threads(); // the barriers and words are ready
    let phases = k.div_ceil(BK);
    // SAFETY: `consumes` runs `produce` on thread 0 only, after the barrier above published the
    // initialised barriers; the workspace holds the packed operands' maps (this fn's contract).
    if !consumes(tid, || unsafe { produce(&gemm, pipe, order, phases) }) {
        return;
    }
    let t = tid - 128;
    let warpgroup = t / 128;
    let operands = Operands::of(pipe, warpgroup);
    let mut it = 0;
    for i in 0..order.len() {
        let (z, row0, col0) = order.at(i);
        let out = gemm.strided_product(z).c_out();
        let mut acc = [0.0f32; 64];
        let mut part = [0.0f32; 64];
        for _ in 0..phases {
            let s = it % STAGES;
            // SAFETY: `full(s)` and `empty(s)` were initialised and published above; after the wait
            // stage s has landed, as `three` requires; all 256 consumer threads run this loop
            // alike, one arrival each of the CONSUMERS that `empty` counts.
            unsafe {
                mbarrier::wait(pipe.bars.full(s), (it / STAGES) % 2);
                operands.three(&mut acc, &mut part, s);
                mbarrier::arrive(pipe.bars.empty(s));
            }
            it += 1;
        }
        // The verdict: does either warpgroup's tile hold a NaN?
        // (By reference: a loop over the array by value stayed a loop, in local memory.)
        let mut nan = false;
        for x in &acc {
            nan |= x.is_nan();
        }
        // SAFETY: `word(i)` is an aligned u32 of the block's words, cleared at init or by the
        // producer before it loaded tile i; `verdict`, initialised above, counts one arrival per
        // consumer thread, each of which arrives once per tile.
        let repair = unsafe {
            if nan {
                pipe.word(i).write_volatile(1);
            }
            mbarrier::arrive(pipe.verdict);
            mbarrier::wait(pipe.verdict, i % 2);
            pipe.word(i).read_volatile() != 0
        };
        if repair {
            // SAFETY: the producer read the same word after the same verdict and loads the tile's
            // phases again (`produce`), as `big_only` requires; every consumer thread takes this
            // branch alike (one shared word).
            unsafe { operands.big_only(&mut acc, &mut part, (pipe, phases, &mut it)) };
        }
        let at = (row0 + warpgroup * 64, col0);
        // SAFETY: `out` is product z's C (`strided_product`), `m x n` at its `ldc` (the entry
        // point's contract); the tile is this block's alone (persistent order), rows
        // `row0 + 64 warpgroup..` this warpgroup's, each element one thread's.
        unsafe { epilogue::<T, 64>(&out, &acc, (m, n), at, t % 128) };
    }
}

/// The producer (one thread): per phase, A's 128 x 32 and B^T's 128 x 32 boxes of both
/// parts (part 1 of plane `z` is plane `z + planes`); after each tile the verdict, and the
/// tile's phases once more where it asks for the repair.
///
/// # Safety
/// The workspace holds the maps of the packed operands; the barriers are initialised.
#[inline(always)]
unsafe fn produce<T: Element>(gemm: &Gemm<T>, pipe: Pipe, order: TileOrder, phases: u32) {
    let maps = gemm.workspace.cast::<u8>().cast_const();
    let (a_map, b_map) = (maps, maps.wrapping_add(MAP_BYTES));
    let p = &gemm.p;
    // A shared operand (batch stride 0) has one plane per part.
    let planes = |stride: u64| if stride == 0 { 1 } else { p.batch };
    let plane = |stride: u64, z: u32| if stride == 0 { 0 } else { z };
    let (pa, pb) = (planes(p.batch_stride_a), planes(p.batch_stride_b));
    // Where C has at most 64 rows, A's boxes have 64 (`TensorMaps::a_box_rows`).
    let stage_bytes = STAGE - 2 * (A_PART - box_rows(BM, p.m) * BK * 4);
    // Phases issued so far, over all tiles: stage `it % STAGES`, round `it / STAGES`.
    let mut it = 0;
    for i in 0..order.len() {
        let (z, row0, col0) = order.at(i);
        let (za, zb) = (plane(p.batch_stride_a, z), plane(p.batch_stride_b, z));
        // The tile's phases, into the stages as the consumers free them.
        let mut load_tile = || {
            for phase in 0..phases {
                let s = it % STAGES;
                let full = pipe.bars.full(s);
                if it >= STAGES {
                    // The consumers are done with this stage's previous round.
                    // SAFETY: `empty(s)` was initialised before the block barrier that preceded
                    // `produce` (its contract).
                    unsafe { mbarrier::wait(pipe.bars.empty(s), (it / STAGES - 1) % 2) };
                }
                let k0 = phase * BK;
                let a_s = pipe.stage(s);
                let b_s = a_s.wrapping_add(2 * A_PART as usize);
                // SAFETY: `full(s)` is initialised and expects `stage_bytes`, the four boxes below
                // (A's of 16 KiB, or 8 where C has at most 64 rows; B's of 16 KiB); stage s
                // (1024-aligned, parts at 16 KiB) is free (first round, or `empty` waited for
                // above) and read only after `full(s)`; the maps, 64-byte aligned at the
                // workspace's start, are the packed operands' (the contract).
                unsafe {
                    mbarrier::arrive_expect_tx(full, stage_bytes);
                    tma::load_3d(a_s, a_map, (k0, row0, za), full);
                    let a_small = a_s.wrapping_add(A_PART as usize);
                    tma::load_3d(a_small, a_map, (k0, row0, za + pa), full);
                    tma::load_3d(b_s, b_map, (k0, col0, zb), full);
                    let b_small = b_s.wrapping_add(B_PART as usize);
                    tma::load_3d(b_small, b_map, (k0, col0, zb + pb), full);
                }
                it += 1;
            }
        };
        load_tile();
        // The verdict before anything past this tile; the consumers have read the other
        // word (tile i - 1's) before arriving, so it is cleared for tile i + 1.
        // SAFETY: `verdict` is initialised; once its phase i completes every consumer has written
        // `word(i)` if need be and read `word(i + 1)` (tile i - 1's) before arriving, so no one
        // else accesses either word now.
        let repair = unsafe {
            mbarrier::wait(pipe.verdict, i % 2);
            let repair = pipe.word(i).read_volatile() != 0;
            pipe.word(i + 1).write_volatile(0);
            repair
        };
        if repair {
            load_tile();
        }
    }
}

/// A consumer warpgroup's operands in stage 0, as descriptors of the first K step: A's
/// rows `64 w ..` of each part, B^T's 128 rows of each part (K-major, 128-byte rows, 8
/// rows an atom; a K step of 8 is 32 bytes along the rows).
#[derive(Clone, Copy)]
struct Operands {
    a_big: Descriptor,
    a_small: Descriptor,
    b_big: Descriptor,
    b_small: Descriptor,
}

impl Operands {
    #[inline(always)]
    fn of(pipe: Pipe, warpgroup: u32) -> Self {
        let base = shared_address(pipe.stage(0));
        let at = |bytes: u32| Descriptor::new(base + bytes, 16, ATOM, Swizzle::B128);
        let a = warpgroup * 64 * 128;
        Self {
            a_big: at(a),
            a_small: at(A_PART + a),
            b_big: at(2 * A_PART),
            b_small: at(2 * A_PART + B_PART),
        }
    }

    /// Stage `s`: its 12 `wgmma`s into `part` from zero, then `part` added to the
    /// accumulators.
    ///
    /// # Safety
    /// Stage `s` has landed (its `full` barrier waited for).
    #[inline(always)]
    unsafe fn three(&self, acc: &mut [f32; 64], part: &mut [f32; 64], s: u32) {
        wgmma::fence(part);
        for step in 0..BK / 8 {
            let at = s * STAGE + 32 * step;
            let (a_big, a_small) = (self.a_big.advanced(at), self.a_small.advanced(at));
            let (b_big, b_small) = (self.b_big.advanced(at), self.b_small.advanced(at));
            // SAFETY: stage s has landed (this fn's contract), `fence(part)` came first, the
            // descriptors (`Operands::of`) are the same across the warpgroup, and the stage stays
            // put until the `empty` arrival after `wait_group::<0>` below, which also precedes any
            // use of `part`.
            unsafe {
                wgmma::m64n128k8_tf32(part, a_small, b_big, step > 0);
                wgmma::m64n128k8_tf32(part, a_big, b_small, true);
                wgmma::m64n128k8_tf32(part, a_big, b_big, true);
            }
        }
        wgmma::commit_group();
        wgmma::wait_group::<0>(part);
        for (sum, x) in acc.iter_mut().zip(part.iter()) {
            *sum += *x;
        }
    }

    /// The repair: the tile's phases again, big x big only, accumulated in the `wgmma`s;
    /// each NaN of the accumulators replaced by its big x big sum.
    ///
    /// # Safety
    /// The producer loads the tile's phases again, as [`produce`] does after a verdict.
    #[inline(always)]
    unsafe fn big_only(
        &self,
        acc: &mut [f32; 64],
        part: &mut [f32; 64],
        (pipe, phases, it): (Pipe, u32, &mut u32),
    ) {
        for phase in 0..phases {
            let s = *it % STAGES;
            // SAFETY: `full(s)` was initialised and published before any consumer runs; the
            // producer loads the tile's phases again (this fn's contract), so the phase completes.
            unsafe { mbarrier::wait(pipe.bars.full(s), (*it / STAGES) % 2) };
            wgmma::fence(part);
            for step in 0..BK / 8 {
                let at = s * STAGE + 32 * step;
                let (a, b) = (self.a_big.advanced(at), self.b_big.advanced(at));
                let first = phase == 0 && step == 0;
                // SAFETY: as in `three`: stage s waited for above, `fence(part)` first, the same
                // descriptors across the warpgroup, the stage kept until the `empty` arrival after
                // `wait_group::<0>`.
                unsafe { wgmma::m64n128k8_tf32(part, a, b, !first) };
            }
            wgmma::commit_group();
            wgmma::wait_group::<0>(part);
            // SAFETY: `empty(s)` is initialised and published; `wait_group::<0>` above retired the
            // `wgmma`s reading the stage.
            unsafe { mbarrier::arrive(pipe.bars.empty(s)) };
            *it += 1;
        }
        for (sum, x) in acc.iter_mut().zip(part.iter()) {
            if sum.is_nan() {
                *sum = *x;
            }
        }
    }
}

entry_points!(strided pack_3xtf32; pack_3xtf32_f32: f32);
