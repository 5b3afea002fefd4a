//! The kernels on the CPU executor, where there is no GPU (CI): every kernel x element type
//! against the CPU reference, the fixed cases, and the executor's own checks, which test
//! kernels written here (and only here) break on purpose.
//!
//! Case count: `PROPTEST_CASES` (default 64) per kernel x type, sides up to 128.
use libtest_mimic::{Arguments, Failed, Trial};
use rgemm::internals::GlobalRegion;
use rgemm::{CpuExecutor, Element, Error, Output};
use rgemm::{CpuLaunch, Fault};
use rgemm_kernels::device::global::{load, store};
use rgemm_kernels::device::shared::SharedArena;
use rgemm_kernels::device::thread::{block_dim_x, sync_threads, thread_idx_x};
use rgemm_kernels::device::tma::EmulatedMap;
use rgemm_tests::{Backend, Under, cases, fail};

fn backend() -> Backend {
    Backend::Cpu(CpuExecutor::new())
}

fn trial(
    name: impl Into<String>,
    test: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Trial {
    Trial::test(name, move || test().map_err(Failed::from))
}

fn properties() -> Vec<Trial> {
    fn one<T: Element>(under: Under) -> Trial {
        trial(
            format!("property::{}::{}", under.name(), T::NAME),
            move || rgemm_tests::property::<T>(&backend(), under, cases(64), 128),
        )
    }
    // C in the 16-bit input type, rounded once at the store.
    fn one_as<T: Element, O: Output<T>>(under: Under) -> Trial {
        trial(
            format!("property::{}::{}", under.name(), O::SUFFIX),
            move || rgemm_tests::property_as::<T, O>(&backend(), under, cases(64), 128),
        )
    }
    let mut trials = rgemm_tests::property_trials!(one);
    trials.extend(rgemm_tests::narrow_property_trials!(one_as));
    trials
}

/// Launches `body` on one block of `threads` threads with `shared` bytes and the buffer
/// `data` as its only global region.
fn launch_one_block(
    threads: u32,
    shared: usize,
    data: &mut [f32],
    body: fn(*mut f32),
) -> rgemm::Result<()> {
    launch_blocks(1, (threads, shared), data, body)
}

/// Launches `body` on one cluster of `blocks` blocks (one block, no cluster, for 1) of
/// `threads` threads each with `shared` bytes a block, the buffer `data` the only global
/// region.
fn launch_blocks(
    blocks: u32,
    (threads, shared): (u32, usize),
    data: &mut [f32],
    body: fn(*mut f32),
) -> rgemm::Result<()> {
    let globals = [GlobalRegion {
        addr: data.as_ptr() as usize,
        bytes: std::mem::size_of_val(data),
    }];
    let ptr = data.as_mut_ptr() as usize;
    let launch = CpuLaunch {
        kernel: "test_kernel",
        grid: (blocks, 1, 1),
        block: (threads, 1, 1),
        shared_bytes: shared,
        globals: &globals,
        cluster: 1,
    }
    .in_clusters(blocks);
    CpuExecutor::with_workers(1).launch(&launch, &move || body(ptr as *mut f32))
}

/// One warpgroup: thread 0 copies a 64 x 64 bf16 tile by TMA (the map at `p`) on an
/// mbarrier, everyone writes a B tile and meets at a barrier, waits for the copy's phase if
/// `wait`, and multiplies.
fn tma_then_wgmma(p: *mut f32, wait: bool) {
    use rgemm_kernels::device::shared::shared_address;
    use rgemm_kernels::device::wgmma::{Descriptor, Swizzle};
    use rgemm_kernels::device::{mbarrier, tma};
    use rgemm_kernels::element::{Bf16, WgmmaInput};
    let tid = thread_idx_x();
    // SAFETY: the launch's 16384 + 1024 + 64 shared bytes hold the 1024-aligned tiles and the
    // barrier; `p` holds the map. Without `wait` the wgmma reads early on purpose: a fault here.
    unsafe {
        let mut arena = SharedArena::<u8>::launch_sized();
        let tiles = arena.aligned(1024, 16384);
        let bar = arena.aligned(8, 8).cast::<u64>();
        if tid == 0 {
            mbarrier::init(bar, 1);
        }
        sync_threads();
        if tid == 0 {
            mbarrier::arrive_expect_tx(bar, 8192);
            tma::load_3d(tiles, p.cast::<u8>(), (0, 0, 0), bar);
        }
        for i in 0..32 {
            let at = 8192 + 2 * (tid + 128 * i) as usize;
            tiles.add(at).cast::<u16>().write(0);
        }
        sync_threads();
        if wait {
            mbarrier::wait(bar, 0);
        }
        let mut acc = [0.0f32; 128];
        let a = Descriptor::new(shared_address(tiles), 16, 1024, Swizzle::B128);
        let b = Descriptor::new(shared_address(tiles) + 8192, 2048, 1024, Swizzle::B128);
        Bf16::wgmma_m64n256::<false, true>(&mut acc, a, b);
    }
}

/// One warpgroup: A (64 x 16, K-major) and B (16 x 256, N-major, four 64-column panels) of
/// small integers stored in the 128-byte-swizzled layout; the executor's `wgmma` must give
/// the exact product in the documented D layout: `m64n256k16`, or over B's first `cols`
/// columns `m64n128k16` (two panels) or `m64n64k16` (one).
fn wgmma_product_is_exact(cols: u32) -> Result<(), String> {
    let mut data = vec![0.0f32; 64 * 256];
    let body = match cols {
        64 => wgmma_product::<64>,
        128 => wgmma_product::<128>,
        _ => wgmma_product::<256>,
    };
    launch_one_block(128, 16384, &mut data, body).map_err(fail)?;
    for row in 0..64u32 {
        for col in 0..256u32 {
            let want: f32 = match col < cols {
                true => (0..16u32).map(|k| av(row, k) * bv(k, col)).sum(),
                false => 0.0, // not part of D
            };
            let got = data[(row * 256 + col) as usize];
            if got != want {
                return Err(format!("D[{row}][{col}] = {got}, want {want}"));
            }
        }
    }
    Ok(())
}

/// [`wgmma_product_is_exact`]'s block: D stored row-major (256 columns) at `p`.
fn wgmma_product<const COLS: u32>(p: *mut f32) {
    use rgemm_kernels::device::shared::shared_address;
    use rgemm_kernels::device::wgmma::{self, Descriptor, Swizzle};
    use rgemm_kernels::element::{Bf16, WgmmaInput};
    // SAFETY: the 16 KiB launch holds the arena (offset 0 on the host): A's swizzled rows
    // below 8192, B's above; `p` holds 64 x 256 f32, each D element stored by one lane.
    unsafe {
        let base = SharedArena::<u8>::launch_sized().aligned(1024, 16384);
        let put = |at: u32, x: f32| {
            let swizzled = at ^ (((at >> 7) & 7) << 4);
            base.add(swizzled as usize)
                .cast::<u16>()
                .write((x.to_bits() >> 16) as u16)
        };
        let tid = thread_idx_x();
        for i in 0..8 {
            let e = tid + 128 * i; // A: 64 x 16
            let (r, k) = (e / 16, e % 16);
            put((r / 8) * 1024 + (r % 8) * 128 + 2 * k, av(r, k));
        }
        for i in 0..32 {
            let e = tid + 128 * i; // B: 16 x 256
            let (k, n) = (e / 256, e % 256);
            let at = 8192 + (n / 64) * 2048 + (k / 8) * 1024 + (k % 8) * 128;
            put(at + 2 * (n % 64), bv(k, n));
        }
        sync_threads();
        wgmma::fence_proxy_async();
        let a = Descriptor::new(shared_address(base), 16, 1024, Swizzle::B128);
        let b = Descriptor::new(shared_address(base) + 8192, 2048, 1024, Swizzle::B128);
        let (w, g, t) = (tid / 32, (tid % 32) / 4, tid % 4);
        let put_d = |acc: &[f32]| {
            for (r, &v) in acc.iter().enumerate() {
                let (j, h, e) = (r as u32 / 4, (r as u32 / 2) % 2, r as u32 % 2);
                let (row, col) = (16 * w + g + 8 * h, 8 * j + 2 * t + e);
                store(p, (row * 256 + col) as usize, v);
            }
        };
        // One `wgmma` of the shape on `$len` accumulators, waited for and stored.
        macro_rules! one {
            ($mma:ident, $len:literal) => {{
                let mut acc = [0.0f32; $len];
                wgmma::fence(&mut acc);
                Bf16::$mma::<false, true>(&mut acc, a, b);
                wgmma::commit_group();
                wgmma::wait_group::<0>(&mut acc);
                put_d(&acc);
            }};
        }
        match COLS {
            64 => one!(wgmma_m64n64, 32),
            128 => one!(wgmma_m64n128, 64),
            _ => one!(wgmma_m64n256, 128),
        }
    }
}

/// Small integers (exact in bf16) for the wgmma check's A and B.
fn av(r: u32, k: u32) -> f32 {
    ((r * 3 + k * 5) % 7) as f32 - 3.0
}

fn bv(k: u32, n: u32) -> f32 {
    ((k * 2 + n) % 5) as f32 - 2.0
}

/// Launches `body` on one cluster of two blocks of `threads` threads each, with 64 shared
/// bytes a block and the buffer `data` as the only global region.
fn launch_one_cluster(threads: u32, data: &mut [f32], body: fn(*mut f32)) -> rgemm::Result<()> {
    launch_blocks(2, (threads, 64), data, body)
}

/// Each block of a pair: thread 0 initialises an mbarrier that one arrival completes, the
/// cluster meets, and thread 0 arrives on the other block's barrier, waits on its own (which
/// only the other block completes) and writes its rank + 1.
fn pair_hands_over(p: *mut f32) {
    use rgemm_kernels::device::cluster::sync_cluster;
    use rgemm_kernels::device::mbarrier;
    use rgemm_kernels::device::thread::block_idx_x;
    let (tid, rank) = (thread_idx_x(), block_idx_x() % 2);
    // SAFETY: the launch's 64 shared bytes hold the barrier; the other block initialised
    // its own before the cluster barrier and leaves only after the last one; `p` holds 2
    // f32s.
    unsafe {
        let bar = SharedArena::<u8>::launch_sized()
            .aligned(8, 8)
            .cast::<u64>();
        if tid == 0 {
            mbarrier::init(bar, 1);
            mbarrier::fence_init();
        }
        sync_cluster();
        if tid == 0 {
            mbarrier::arrive_cluster(bar, 1 - rank);
            mbarrier::wait(bar, 0);
            store(p, rank as usize, (rank + 1) as f32);
        }
        sync_cluster();
    }
}

/// A pair whose second block returns before the cluster barrier the first waits at.
fn pair_half_returns(_: *mut f32) {
    use rgemm_kernels::device::cluster::sync_cluster;
    use rgemm_kernels::device::thread::block_idx_x;
    if block_idx_x() == 1 {
        return;
    }
    sync_cluster();
}

fn fault_of(r: rgemm::Result<()>) -> Result<(u32, Fault), String> {
    match r {
        Err(Error::KernelFault {
            kernel,
            block: (0, 0, 0),
            thread,
            fault,
        }) if kernel == "test_kernel" => Ok((thread.0, fault)),
        other => Err(format!("expected a kernel fault, got {other:?}")),
    }
}

/// Runs one warp of `body`, whose lanes 0-15 reach a warp-wide operation that lanes 16-31
/// return before: the executor must report lane 0 waiting there and name lane 16's return.
fn only_half_the_warp_reaches(body: fn(*mut f32)) -> Result<(), String> {
    let mut data = vec![0.0f32; 32];
    match fault_of(launch_one_block(32, 0, &mut data, body))? {
        (
            0,
            Fault::WarpDivergence {
                other_lane: (16, 0, 0),
                other,
                ..
            },
        ) if other.contains("returned") => Ok(()),
        other => Err(format!("{other:?}")),
    }
}

fn checks() -> Vec<Trial> {
    vec![
        trial("checks::cluster_blocks_arrive_on_each_other", || {
            let mut data = vec![0.0f32; 2];
            launch_one_cluster(64, &mut data, pair_hands_over).map_err(fail)?;
            match data[..] {
                [1.0, 2.0] => Ok(()),
                _ => Err(format!("{data:?}")),
            }
        }),
        trial("checks::cluster_barrier_a_block_leaves_is_reported", || {
            let mut data = vec![0.0f32; 1];
            match launch_one_cluster(32, &mut data, pair_half_returns) {
                Err(Error::KernelFault {
                    block: (1, 0, 0),
                    fault: Fault::ExitedWhileOthersWait { waiting_at, .. },
                    ..
                }) if waiting_at.contains("executor.rs") => Ok(()),
                other => Err(format!("{other:?}")),
            }
        }),
        trial("checks::barriers_order_shared_memory", || {
            // Reverse a block through shared memory: right only if the barrier holds every
            // thread until all have written.
            let mut data: Vec<f32> = (0..64).map(|i| i as f32).collect();
            // SAFETY: the 1 x 64 f32 tile is the launch's 256 bytes, set and read on either side
            // of the barrier; thread t loads and stores only element t of the 64 in `data`.
            launch_one_block(64, 64 * 4, &mut data, |p| unsafe {
                let t = thread_idx_x();
                let tile = SharedArena::<f32>::launch_sized().tile(1, block_dim_x());
                tile.set(0, t, load(p, t as usize));
                sync_threads();
                store(p, t as usize, tile.get(0, block_dim_x() - 1 - t));
            })
            .map_err(fail)?;
            let want: Vec<f32> = (0..64).rev().map(|i| i as f32).collect();
            if data != want {
                return Err(format!("{data:?}"));
            }
            Ok(())
        }),
        trial("checks::divergent_barrier_is_reported", || {
            let mut data = vec![0.0f32; 32];
            let r = launch_one_block(32, 0, &mut data, |_| {
                // Two different barriers on purpose: the identical branches are the point.
                #[allow(clippy::if_same_then_else)]
                if thread_idx_x().is_multiple_of(2) {
                    sync_threads();
                } else {
                    sync_threads();
                }
            });
            match fault_of(r)? {
                (
                    1,
                    Fault::DivergentBarrier {
                        other_thread: (0, 0, 0),
                        here,
                        other,
                    },
                ) if here != other => Ok(()),
                other => Err(format!("{other:?}")),
            }
        }),
        trial(
            "checks::barrier_only_some_threads_reach_is_reported",
            || {
                let mut data = vec![0.0f32; 32];
                let r = launch_one_block(32, 0, &mut data, |_| {
                    if thread_idx_x() < 16 {
                        sync_threads();
                    }
                });
                match fault_of(r)? {
                    (
                        16,
                        Fault::ExitedWhileOthersWait {
                            waiting_thread: (0, 0, 0),
                            ..
                        },
                    ) => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            },
        ),
        trial(
            "checks::shared_tile_beyond_the_launch_size_is_reported",
            || {
                let mut data = vec![0.0f32; 32];
                // SAFETY: breaks `launch_sized`'s contract on purpose (128 bytes of 124): the
                // executor's `tile` checks them against the launch and panics before any access.
                let r = launch_one_block(32, 31 * 4, &mut data, |_| unsafe {
                    SharedArena::<f32>::launch_sized()
                        .tile(1, 32)
                        .set(0, thread_idx_x(), 1.0);
                });
                match fault_of(r)? {
                    (0, Fault::Panic(m)) if m.contains("shared memory out of bounds") => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            },
        ),
        trial("checks::shared_access_outside_its_tile_is_reported", || {
            let mut data = vec![0.0f32; 32];
            // SAFETY: the 2 x 32 f32 tile is the launch's 256 bytes; thread 31's column 32 breaks
            // `set`'s contract on purpose, and the executor's bounds check panics before it.
            let r = launch_one_block(32, 64 * 4, &mut data, |_| unsafe {
                let tile = SharedArena::<f32>::launch_sized().tile(2, 32);
                tile.set(thread_idx_x() / 16, thread_idx_x() + 1, 1.0); // thread 31 writes col 32
            });
            match fault_of(r)? {
                (31, Fault::Panic(m)) if m.contains("(1, 32) in a 2x32 tile") => Ok(()),
                other => Err(format!("{other:?}")),
            }
        }),
        trial(
            "checks::mma_that_not_every_lane_reaches_is_reported",
            || {
                // Half a warp reaches a tensor-core operation, the other half returns: on a GPU
                // a hang or garbage; here a fault naming both places.
                only_half_the_warp_reaches(|_| {
                    if thread_idx_x() < 16 {
                        let d = <rgemm_kernels::element::Bf16 as rgemm_kernels::element::Half>::mma_m16n8k16([0; 4], [0; 2], [0.0; 4]);
                        std::hint::black_box(d);
                    }
                })
            },
        ),
        trial("checks::mma_lanes_see_each_others_fragments", || {
            // One warp multiplies a 16 x 16 A of small integers by a 16 x 8 B on the
            // executor's mma; every lane's four elements of D must be the exact product.
            let mut data = vec![0.0f32; 16 * 8];
            // SAFETY: each of the 32 lanes stores its own 4 of D's 16 x 8 elements, all inside
            // the 128 of `data`.
            launch_one_block(32, 0, &mut data, |p| unsafe {
                use rgemm_kernels::element::{Bf16, Half};
                let lane = thread_idx_x();
                let (g, t) = (lane / 4, lane % 4);
                let av = |r: u32, k: u32| ((r * 3 + k * 5) % 7) as f32 - 3.0;
                let bv = |k: u32, n: u32| ((k * 2 + n) % 5) as f32 - 2.0;
                let bits = |x: f32| x.to_bits() >> 16; // bf16 bits: exact for small integers
                let pair = |lo: f32, hi: f32| bits(lo) | bits(hi) << 16;
                let a = [
                    pair(av(g, 2 * t), av(g, 2 * t + 1)),
                    pair(av(g + 8, 2 * t), av(g + 8, 2 * t + 1)),
                    pair(av(g, 2 * t + 8), av(g, 2 * t + 9)),
                    pair(av(g + 8, 2 * t + 8), av(g + 8, 2 * t + 9)),
                ];
                let b = [
                    pair(bv(2 * t, g), bv(2 * t + 1, g)),
                    pair(bv(2 * t + 8, g), bv(2 * t + 9, g)),
                ];
                let d = Bf16::mma_m16n8k16(a, b, [0.0; 4]);
                for (i, v) in d.into_iter().enumerate() {
                    let (row, col) = (g + 8 * (i as u32 / 2), 2 * t + i as u32 % 2);
                    store(p, (row * 8 + col) as usize, v);
                }
            })
            .map_err(fail)?;
            for row in 0..16u32 {
                for col in 0..8u32 {
                    let want: f32 = (0..16u32)
                        .map(|k| {
                            (((row * 3 + k * 5) % 7) as f32 - 3.0)
                                * (((k * 2 + col) % 5) as f32 - 2.0)
                        })
                        .sum();
                    let got = data[(row * 8 + col) as usize];
                    if got != want {
                        return Err(format!("D[{row}][{col}] = {got}, want {want}"));
                    }
                }
            }
            Ok(())
        }),
        trial(
            "checks::shuffle_xor_gives_each_lane_its_partners_words",
            || {
                // Two warps; every lane hands in eight words naming itself and receives lane
                // `lane ^ mask`'s, for each butterfly mask.
                const MASKS: [u32; 5] = [1, 2, 4, 8, 16];
                let mut data = vec![0.0f32; 64 * 8 * MASKS.len()];
                // SAFETY: every lane calls `xor` with the same masks in warp-uniform order, and
                // stores only its own 8 words per mask, inside the 64 x 8 x 5 of `data`.
                launch_one_block(64, 0, &mut data, |p| unsafe {
                    use rgemm_kernels::device::shuffle;
                    let t = thread_idx_x();
                    let mine: [u32; 8] = std::array::from_fn(|i| 100 * t + i as u32);
                    for (m, mask) in MASKS.into_iter().enumerate() {
                        for (i, w) in shuffle::xor(mine, mask).into_iter().enumerate() {
                            store(p, ((m * 64 + t as usize) * 8) + i, w as f32);
                        }
                    }
                })
                .map_err(fail)?;
                for (m, mask) in MASKS.into_iter().enumerate() {
                    for t in 0..64u32 {
                        for i in 0..8u32 {
                            // The partner is in the same warp: the mask flips only lane bits.
                            let want = 100 * (t ^ mask) + i;
                            let got = data[(m * 64 + t as usize) * 8 + i as usize];
                            if got != want as f32 {
                                return Err(format!(
                                    "mask {mask}: thread {t} word {i} = {got}, want {want}"
                                ));
                            }
                        }
                    }
                }
                Ok(())
            },
        ),
        trial(
            "checks::shuffle_that_not_every_lane_reaches_is_reported",
            || {
                // SAFETY: breaks `xor`'s warp-uniform contract on purpose: the host executor
                // reports the lanes that never arrive as a fault instead of exchanging.
                only_half_the_warp_reaches(|_| unsafe {
                    if thread_idx_x() < 16 {
                        let w = rgemm_kernels::device::shuffle::xor([thread_idx_x()], 1);
                        std::hint::black_box(w);
                    }
                })
            },
        ),
        trial(
            "checks::wgmma_that_not_every_warp_reaches_is_reported",
            || {
                // Three warps of a warpgroup reach a wgmma, the fourth returns.
                let mut data = vec![0.0f32; 32];
                // SAFETY: the descriptors lie in the launch's 16 KiB; breaking the whole-warpgroup
                // contract on purpose, the executor faults at the warpgroup barrier instead.
                let r = launch_one_block(128, 16384, &mut data, |_| unsafe {
                    use rgemm_kernels::device::wgmma::{Descriptor, Swizzle};
                    use rgemm_kernels::element::{Bf16, WgmmaInput};
                    if thread_idx_x() < 96 {
                        let mut acc = [0.0f32; 128];
                        let a = Descriptor::new(0, 16, 1024, Swizzle::B128);
                        let b = Descriptor::new(8192, 2048, 1024, Swizzle::B128);
                        Bf16::wgmma_m64n256::<false, true>(&mut acc, a, b);
                    }
                });
                match fault_of(r)? {
                    (
                        0,
                        Fault::WarpDivergence {
                            other_lane: (96, 0, 0),
                            other,
                            ..
                        },
                    ) if other.contains("returned") => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            },
        ),
        trial("checks::wgmma_reads_swizzled_tiles_exactly", || {
            wgmma_product_is_exact(256)
        }),
        trial("checks::wgmma_m64n128_reads_swizzled_tiles_exactly", || {
            wgmma_product_is_exact(128)
        }),
        trial("checks::wgmma_m64n64_reads_swizzled_tiles_exactly", || {
            wgmma_product_is_exact(64)
        }),
        trial(
            "checks::mbarrier_phase_that_never_completes_is_reported",
            || {
                // A barrier expecting two arrivals gets one; everyone waits for the phase.
                let mut data = vec![0.0f32; 32];
                // SAFETY: `bar` is 8-byte aligned in the launch's 64 bytes, used for nothing else,
                // initialised and published by `sync_threads` before `arrive` and `wait`.
                let r = launch_one_block(32, 64, &mut data, |_| unsafe {
                    use rgemm_kernels::device::mbarrier;
                    let bar = SharedArena::<u64>::launch_sized().aligned(8, 1);
                    if thread_idx_x() == 0 {
                        mbarrier::init(bar, 2);
                    }
                    sync_threads();
                    if thread_idx_x() == 0 {
                        mbarrier::arrive(bar);
                    }
                    mbarrier::wait(bar, 0);
                });
                match fault_of(r)? {
                    (0, Fault::MbarrierNeverCompletes { parity: 0, .. }) => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            },
        ),
        trial(
            "checks::tma_stage_read_before_its_mbarrier_phase_is_reported",
            || {
                // A TMA copy of A's tile completes on an mbarrier; a wgmma reads it. With
                // the wait it runs; without it, it is a fault, though the bytes have
                // already been delivered on the host (as they may not on a GPU).
                let run = |body: fn(*mut f32)| {
                    let mut data = vec![0.0f32; 32 + 64 * 64 / 2];
                    let map = EmulatedMap {
                        base: data.as_ptr() as u64 + 128,
                        dims: [64, 64, 1],
                        strides: [128, 128 * 64],
                        boxes: [64, 64],
                        elem_bytes: 2,
                        swizzle: 128,
                    };
                    // SAFETY: `data` has 8320 bytes, the first 128 kept for the map; the write
                    // is unaligned, so the `Vec<f32>`'s 4-byte alignment suffices.
                    unsafe { data.as_mut_ptr().cast::<EmulatedMap>().write_unaligned(map) };
                    launch_one_block(128, 16384 + 1024 + 64, &mut data, body)
                };
                run(|p| tma_then_wgmma(p, true)).map_err(fail)?;
                match fault_of(run(|p| tma_then_wgmma(p, false)))? {
                    (0, Fault::Panic(m)) if m.contains("has not waited for") => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            },
        ),
        trial("checks::global_access_out_of_bounds_is_reported", || {
            let mut data = vec![0.0f32; 32];
            // SAFETY: thread 31 reads element 32 on purpose: the executor checks it against
            // `data` and panics first; the block's threads run one at a time on one OS thread.
            let r = launch_one_block(32, 0, &mut data, |p| unsafe {
                let t = thread_idx_x() as usize;
                store(p, t, load(p, t + 1)); // thread 31 reads element 32
            });
            match fault_of(r)? {
                (31, Fault::Panic(m)) if m.contains("global memory read out of bounds") => Ok(()),
                other => Err(format!("{other:?}")),
            }
        }),
    ]
}

fn main() {
    let args = Arguments::from_args();
    // Every form on every kernel that computes it (CI's coverage of the general product),
    // and batches of independent views (gemmBatched) on every kernel that takes them. They
    // go first: the longest trials are among them, and the many short property trials then
    // fill the test threads to the end.
    let make =
        |name: String, test: rgemm_tests::forms::FormTest| trial(name, move || test(&backend()));
    let mut trials = rgemm_tests::backend_trials(
        &make,
        (cases(16), cases(6), 96),
        (cases(4), cases(3), 64),
        false,
    );
    trials.extend(checks());
    trials.extend(properties());
    libtest_mimic::run(&args, trials).exit();
}
