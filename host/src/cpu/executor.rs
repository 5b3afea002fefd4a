//! Launch semantics on the CPU.
//!
//! Scheduling: each GPU thread of a block is a coroutine (corosensei) with its own stack,
//! and a block runs on one OS thread, switching coroutines at barriers. A thread runs until
//! it reaches `sync_threads()` or returns; when every thread of the block waits at the same
//! barrier, all are resumed. This gives the barrier its real meaning (every write before
//! it is visible to every read after it) at the cost of a context switch (tens of
//! nanoseconds), where one OS thread per GPU thread would cost a kernel-level wake-up per
//! thread per barrier. Blocks are independent, so they are spread over a few OS threads.
//!
//! Warp-wide operations (`mma.sync`, and later `ldmatrix`, shuffles) are barriers of the
//! warp: each lane hands in its operands and waits; when all 32 lanes of the warp wait at
//! the same operation, they resume and each computes its own part from what all handed in.
//!
//! Misuse ends the launch with [`Error::KernelFault`] naming the kernel, block and thread:
//! threads waiting at different `sync_threads()` calls (a divergent barrier), a thread that
//! returns while others wait at a barrier, a warp-wide operation that not every lane of the
//! warp reaches, and any panic in the kernel: out-of-bounds shared or global access, a
//! shared tile larger than the launch's shared bytes, `trap`.
use crate::error::{Error, Result};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use rgemm_kernels::device::host::{
    BlockAsync, EXCHANGE_WORDS, GlobalRegion, HostThread, set_current,
};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, Location, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What went wrong inside a kernel on the CPU executor.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// This thread waits at one `sync_threads()` call while another waits at a different one.
    DivergentBarrier {
        here: String,
        other_thread: (u32, u32, u32),
        other: String,
    },
    /// This thread returned while another waits at a barrier it will never pass.
    ExitedWhileOthersWait {
        waiting_thread: (u32, u32, u32),
        waiting_at: String,
    },
    /// This lane waits at a warp-wide (or warpgroup-wide) operation that another thread of
    /// its warp (warpgroup) does not reach: it waits elsewhere (`other`) or has returned.
    WarpDivergence {
        here: String,
        other_lane: (u32, u32, u32),
        other: String,
    },
    /// This thread waits for an mbarrier phase that can never complete: every other thread
    /// of the block (and of its cluster) waits too (elsewhere) or has returned.
    MbarrierNeverCompletes {
        here: String,
        barrier: u32,
        parity: u32,
    },
    /// The kernel panicked: an out-of-bounds shared or global access, `trap`, a read of
    /// shared memory a TMA copy has not delivered to this thread, ...
    Panic(String),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::DivergentBarrier {
                here,
                other_thread,
                other,
            } => write!(
                f,
                "divergent barrier: waits at sync_threads() at {here} while thread {other_thread:?} waits at {other}"
            ),
            Fault::ExitedWhileOthersWait {
                waiting_thread,
                waiting_at,
            } => write!(
                f,
                "returned while thread {waiting_thread:?} waits at sync_threads() at {waiting_at}: a barrier not every thread reaches"
            ),
            Fault::WarpDivergence {
                here,
                other_lane,
                other,
            } => write!(
                f,
                "waits at a warp- or warpgroup-wide operation at {here} that thread {other_lane:?} of its warp or warpgroup does not reach ({other})"
            ),
            Fault::MbarrierNeverCompletes {
                here,
                barrier,
                parity,
            } => write!(
                f,
                "waits at {here} for phase parity {parity} of the mbarrier at shared address {barrier:#x}, which can never complete"
            ),
            Fault::Panic(message) => write!(f, "panicked: {message}"),
        }
    }
}

/// One launch: the kernel's name (for errors), grid, block, shared bytes per block, the
/// global buffers the kernel may touch, and the blocks of a cluster along x (1: none).
#[derive(Clone, Debug)]
pub struct CpuLaunch<'a> {
    pub kernel: &'a str,
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: usize,
    pub globals: &'a [GlobalRegion],
    /// Blocks of a cluster along x (1: no clusters): blocks `c cluster .. (c + 1) cluster` of
    /// a row of the grid are cluster `c`, which run together and reach each other's shared
    /// memory; the grid's x is a multiple of it.
    pub cluster: u32,
}

impl<'a> CpuLaunch<'a> {
    /// Entry `kernel` launched as `cfg` says, over the buffers `globals`, without clusters.
    pub fn of(
        kernel: &'a str,
        cfg: &cudarc::driver::LaunchConfig,
        globals: &'a [GlobalRegion],
    ) -> Self {
        Self {
            kernel,
            grid: cfg.grid_dim,
            block: cfg.block_dim,
            shared_bytes: cfg.shared_mem_bytes as usize,
            globals,
            cluster: 1,
        }
    }

    /// The same launch in clusters of `blocks` blocks along x.
    pub fn in_clusters(self, blocks: u32) -> Self {
        Self {
            cluster: blocks,
            ..self
        }
    }
}

/// Runs kernel launches on the CPU (see the module documentation). Clones share one pool
/// of thread stacks, so repeated launches do not map fresh stacks.
#[derive(Clone, Debug)]
pub struct CpuExecutor {
    workers: usize,
    stack_bytes: usize,
    stacks: Arc<Mutex<Vec<FreeStack>>>,
    /// The device whose launch limits and SM count the launches follow (see `emulating`).
    device: Option<Arc<crate::props::DeviceProps>>,
}

/// A coroutine stack no coroutine is using: plain memory, free to move between threads.
struct FreeStack(DefaultStack);

// SAFETY: only stacks of finished coroutines enter the pool (`into_stack` after `done`),
// so nothing points into them, and an mmap'd stack has no tie to the thread that made it.
unsafe impl Send for FreeStack {}

impl std::fmt::Debug for FreeStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FreeStack")
    }
}

impl Default for CpuExecutor {
    fn default() -> Self {
        Self::new()
    }
}

/// Where a suspended thread waits.
#[derive(Clone, Copy, Debug)]
enum Wait {
    /// At `sync_threads()`, for the whole block.
    Block(&'static Location<'static>),
    /// At a warp-wide (`width` 32) or warpgroup-wide (128) operation, for the threads of
    /// its warp or warpgroup.
    Lanes {
        width: usize,
        site: &'static Location<'static>,
    },
    /// For a phase of an mbarrier (its shared address and the parity waited for).
    Mbarrier {
        at: u32,
        parity: u32,
        site: &'static Location<'static>,
    },
    /// At the cluster barrier, for every thread of the cluster (one barrier, whatever the
    /// call site).
    Cluster(&'static Location<'static>),
}

type ThreadCoroutine = Coroutine<(), Wait, (), DefaultStack>;
type ThreadYielder = Yielder<(), Wait>;

thread_local! {
    /// The yielder of the coroutine running on this OS thread.
    static YIELDER: Cell<*const ThreadYielder> = const { Cell::new(std::ptr::null()) };
}

/// Suspends this GPU thread, telling the scheduler where it waits.
fn suspend(wait: Wait) {
    let yielder = YIELDER.get();
    // SAFETY: set by this coroutine's entry below, restored after every suspension; the
    // yielder lives as long as the coroutine.
    unsafe { (*yielder).suspend(wait) };
    YIELDER.set(yielder);
}

/// `sync_threads()` on the host.
fn barrier(call_site: &'static Location<'static>) {
    suspend(Wait::Block(call_site));
}

/// A warp-wide (`width` 32, see `rgemm_kernels::device::host::warp_exchange`) or
/// warpgroup-wide (128, `wgmma`) operation on the host.
fn lanes_barrier(width: usize, site: &'static Location<'static>) {
    suspend(Wait::Lanes { width, site });
}

/// An mbarrier wait on the host.
fn mbarrier_wait(at: u32, parity: u32, site: &'static Location<'static>) {
    suspend(Wait::Mbarrier { at, parity, site });
}

/// The cluster barrier on the host.
fn cluster_barrier(site: &'static Location<'static>) {
    suspend(Wait::Cluster(site));
}

fn site_of(l: &Location) -> String {
    format!("{}:{}:{}", l.file(), l.line(), l.column())
}

fn same_site(a: &Location, b: &Location) -> bool {
    (a.file(), a.line(), a.column()) == (b.file(), b.line(), b.column())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".into()
    }
}

/// An `(x, y, z)` index from a linear one, x fastest.
fn unflatten(i: u64, dim: (u32, u32, u32)) -> (u32, u32, u32) {
    let (x, y) = (dim.0 as u64, dim.1 as u64);
    ((i % x) as u32, ((i / x) % y) as u32, (i / (x * y)) as u32)
}

impl CpuExecutor {
    /// One worker OS thread per available core; 256 KiB of (lazily committed) stack per
    /// GPU thread.
    pub fn new() -> Self {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            workers,
            stack_bytes: 256 * 1024,
            stacks: Arc::default(),
            device: None,
        }
    }

    /// Launches as they would be on the device `props` describes: its launch limits, and
    /// its SM count where a kernel's grid follows it (`stream_k`'s sharing wave), so the
    /// executor computes what that GPU computes, in the same order.
    pub fn emulating(props: crate::props::DeviceProps) -> Self {
        Self {
            device: Some(Arc::new(props)),
            ..Self::new()
        }
    }

    pub(crate) fn emulated(&self) -> Option<&crate::props::DeviceProps> {
        self.device.as_deref()
    }

    /// The same, with `workers` OS threads running blocks.
    pub fn with_workers(workers: usize) -> Self {
        Self {
            workers: workers.max(1),
            ..Self::new()
        }
    }

    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Runs `body` once for every thread of every block of `launch`. `body` is the kernel
    /// with its arguments bound; inside it the `rgemm_kernels::device` functions see the
    /// running thread's coordinates, its block's shared region (poisoned with 0xFF bytes,
    /// as uninitialised shared memory has no defined value) and the launch's buffers.
    pub fn launch(&self, launch: &CpuLaunch, body: &(dyn Fn() + Sync)) -> Result<()> {
        let (g, b) = (launch.grid, launch.block);
        let cluster = launch.cluster.max(1);
        if !g.0.is_multiple_of(cluster) {
            return Err(Error::KernelFault {
                kernel: launch.kernel.to_string(),
                block: (0, 0, 0),
                thread: (0, 0, 0),
                fault: Fault::Panic(format!(
                    "a grid {} blocks wide in clusters of {cluster}",
                    g.0
                )),
            });
        }
        // Clusters are the unit of work: `g.0 / cluster` along x.
        let clusters = (g.0 / cluster, g.1, g.2);
        let blocks = clusters.0 as u64 * clusters.1 as u64 * clusters.2 as u64;
        let threads = b.0 as u64 * b.1 as u64 * b.2 as u64;
        if blocks == 0 || threads == 0 {
            return Ok(());
        }
        let next = AtomicU64::new(0);
        let failed = AtomicBool::new(false);
        let first_error: Mutex<Option<(u64, Error)>> = Mutex::new(None);
        let workers = self.workers.min(blocks as usize);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    let mut worker = Worker::new(launch, self, threads as usize);
                    loop {
                        let block = next.fetch_add(1, Ordering::Relaxed);
                        if block >= blocks || failed.load(Ordering::Relaxed) {
                            break;
                        }
                        let (x, y, z) = unflatten(block, clusters);
                        if let Err(e) = worker.run_cluster((x * cluster, y, z), body) {
                            failed.store(true, Ordering::Relaxed);
                            let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                            // Report the lowest-numbered failing block, as a rerun would.
                            if slot.as_ref().is_none_or(|(b, _)| block < *b) {
                                *slot = Some((block, e));
                            }
                            break;
                        }
                    }
                });
            }
        });
        match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }
}

/// Shared memory is allocated in these, so the region is 32-byte aligned as on the GPU
/// build (where packed groups of four f64 need it).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct SharedChunk([u8; 32]);

/// One OS thread's state: reusable stacks and the shared regions of a cluster's blocks.
struct Worker<'l> {
    launch: &'l CpuLaunch<'l>,
    executor: &'l CpuExecutor,
    stacks: Vec<DefaultStack>,
    shared: Vec<SharedChunk>,
    /// One exchange area per warp (see `HostThread::exchange`).
    exchange: Vec<[[[u32; EXCHANGE_WORDS]; 32]; 2]>,
    /// Threads of a block.
    threads: usize,
    /// Blocks of a cluster.
    blocks: usize,
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        let mut pool = self
            .executor
            .stacks
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        pool.extend(self.stacks.drain(..).map(FreeStack));
    }
}

impl<'l> Worker<'l> {
    fn new(launch: &'l CpuLaunch<'l>, executor: &'l CpuExecutor, threads: usize) -> Self {
        let blocks = launch.cluster.max(1) as usize;
        Self {
            launch,
            executor,
            stacks: Vec::new(),
            shared: vec![SharedChunk([0; 32]); blocks * launch.shared_bytes.div_ceil(32)],
            exchange: vec![[[[0; EXCHANGE_WORDS]; 32]; 2]; blocks * threads.div_ceil(32)],
            threads,
            blocks,
        }
    }

    fn stack(&mut self) -> Result<DefaultStack> {
        if let Some(stack) = self.stacks.pop() {
            return Ok(stack);
        }
        let pooled = self
            .executor
            .stacks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        match pooled {
            Some(FreeStack(stack)) => Ok(stack),
            None => DefaultStack::new(self.executor.stack_bytes).map_err(|e| Error::KernelFault {
                kernel: self.launch.kernel.to_string(),
                block: (0, 0, 0),
                thread: (0, 0, 0),
                fault: Fault::Panic(format!("could not allocate a thread stack: {e}")),
            }),
        }
    }

    /// Runs the blocks of one cluster (one block outside a cluster launch), the first at
    /// `first`, the others after it along x.
    fn run_cluster(&mut self, first: (u32, u32, u32), body: &(dyn Fn() + Sync)) -> Result<()> {
        let launch = self.launch;
        let (threads, blocks) = (self.threads, self.blocks);
        let block_of = |b: usize| (first.0 + b as u32, first.1, first.2);
        // Uninitialised shared memory: 0xFF bytes read as NaN in f32 and f64.
        self.shared.fill(SharedChunk([0xFF; 32]));
        let chunks = launch.shared_bytes.div_ceil(32);
        let shared: Vec<*mut u8> = (0..blocks)
            .map(|b| {
                self.shared
                    .as_mut_ptr()
                    .wrapping_add(b * chunks)
                    .cast::<u8>()
            })
            .collect();
        let exchange = self.exchange.as_mut_ptr();
        let mut async_states: Vec<BlockAsync> = shared
            .iter()
            .map(|&region| BlockAsync::new(region, launch.shared_bytes))
            .collect();
        let async_ptrs: Vec<*mut BlockAsync> = async_states
            .iter_mut()
            .map(|state| state as *mut BlockAsync)
            .collect();
        let cluster: *const [*mut BlockAsync] = async_ptrs.as_slice();
        // Thread `i` of the cluster is thread `i % threads` of block `i / threads`.
        let records: Vec<HostThread> = (0..blocks * threads)
            .map(|i| {
                let (b, t) = (i / threads, i % threads);
                let (x, y, z) = unflatten(t as u64, launch.block);
                let block_idx = block_of(b);
                HostThread {
                    thread_idx: [x, y, z],
                    block_idx: [block_idx.0, block_idx.1, block_idx.2],
                    block_dim: [launch.block.0, launch.block.1, launch.block.2],
                    grid_dim: [launch.grid.0, launch.grid.1, launch.grid.2],
                    shared: shared[b],
                    shared_len: launch.shared_bytes,
                    globals: launch.globals as *const [GlobalRegion],
                    barrier,
                    lanes_barrier,
                    // In bounds: one area per 32 threads of each block.
                    exchange: exchange.wrapping_add(b * threads.div_ceil(32) + t / 32),
                    collectives: Cell::new(0),
                    async_state: async_ptrs[b],
                    mbarrier_wait,
                    seen: Default::default(),
                    cluster,
                    cluster_barrier,
                }
            })
            .collect();

        let mut coroutines: Vec<ThreadCoroutine> = Vec::with_capacity(blocks * threads);
        for record in &records {
            let record: *const HostThread = record;
            let stack = self.stack()?;
            let entry = move |yielder: &ThreadYielder, ()| {
                YIELDER.set(yielder);
                // SAFETY: `records` outlives every coroutine (they end or drop first).
                unsafe { set_current(record) };
                body();
            };
            // SAFETY: `body` and `records` outlive the coroutines, which are driven to
            // completion or dropped (unwound) before this function returns.
            coroutines.push(unsafe { Coroutine::with_stack_unchecked(stack, entry) });
        }

        let fault = |i: usize, fault: Fault| Error::KernelFault {
            kernel: launch.kernel.to_string(),
            block: block_of(i / threads),
            thread: unflatten((i % threads) as u64, launch.block),
            fault,
        };
        let thread_of = |i: usize| unflatten((i % threads) as u64, launch.block);
        // Whether thread `i`'s mbarrier phase has completed.
        let phase_done = |i: usize, at: u32, parity: u32| {
            // SAFETY: `async_ptrs[b]` is `async_states[b]`, alive until this function
            // returns; every coroutine is suspended, so nothing else uses it.
            unsafe { (*async_ptrs[i / threads]).phase_done(at, parity) == Some(true) }
        };
        #[derive(Clone, Copy)]
        enum State {
            Run,
            Waits(Wait),
            Done,
        }
        let mut state = vec![State::Run; blocks * threads];
        let outcome = 'blk: loop {
            // Every runnable thread runs until it waits or returns.
            for (i, co) in coroutines.iter_mut().enumerate() {
                if !matches!(state[i], State::Run) {
                    continue;
                }
                match catch_unwind(AssertUnwindSafe(|| co.resume(()))) {
                    Ok(CoroutineResult::Yield(wait)) => state[i] = State::Waits(wait),
                    Ok(CoroutineResult::Return(())) => state[i] = State::Done,
                    Err(payload) => {
                        state[i] = State::Done;
                        break 'blk Err(fault(i, Fault::Panic(panic_message(&*payload))));
                    }
                }
            }
            // Warps whose lanes all wait at one warp-wide operation go on; a warp with a
            // lane there and another anywhere else can never complete it. Then the same for
            // warpgroups (every warp-wide wait is released or a fault by then).
            let (mut released, mut held) = (false, false);
            for width in [32, 128] {
                if released || held {
                    break;
                }
                let groups = (0..blocks).flat_map(|b| {
                    (0..threads)
                        .step_by(width)
                        .map(move |g| b * threads + g..b * threads + (g + width).min(threads))
                });
                for lanes in groups {
                    let Some((first, site)) = lanes.clone().find_map(|i| match state[i] {
                        State::Waits(Wait::Lanes { width: w, site }) if w == width => {
                            Some((i, site))
                        }
                        _ => None,
                    }) else {
                        continue;
                    };
                    // A lane whose mbarrier phase has completed since it began to wait is
                    // on its way (released below): the others wait for it.
                    let mut on_its_way = false;
                    for i in lanes.clone() {
                        let other = match state[i] {
                            State::Waits(Wait::Lanes { width: w, site: at })
                                if w == width && same_site(at, site) =>
                            {
                                continue;
                            }
                            State::Waits(Wait::Mbarrier { at, parity, .. })
                                if phase_done(i, at, parity) =>
                            {
                                on_its_way = true;
                                continue;
                            }
                            State::Waits(Wait::Lanes { site: at, .. })
                            | State::Waits(Wait::Block(at))
                            | State::Waits(Wait::Cluster(at))
                            | State::Waits(Wait::Mbarrier { site: at, .. }) => site_of(at),
                            State::Done => "it has returned".to_string(),
                            State::Run => unreachable!("every runnable thread ran"),
                        };
                        break 'blk Err(fault(
                            first,
                            Fault::WarpDivergence {
                                here: site_of(site),
                                other_lane: thread_of(i),
                                other,
                            },
                        ));
                    }
                    if on_its_way {
                        held = true;
                        continue;
                    }
                    for i in lanes {
                        state[i] = State::Run;
                    }
                    released = true;
                }
            }
            if released {
                continue;
            }
            // Threads whose mbarrier phase has completed go on.
            for (i, s) in state.iter_mut().enumerate() {
                if let State::Waits(Wait::Mbarrier { at, parity, .. }) = *s
                    && phase_done(i, at, parity)
                {
                    *s = State::Run;
                    released = true;
                }
            }
            if released {
                continue;
            }
            // A block barrier: every thread of the block that has not returned waits at one
            // call site. (In a cluster another block may still complete what a thread of
            // this one waits for: a block with a thread waiting elsewhere waits.)
            for b in 0..blocks {
                let range = b * threads..(b + 1) * threads;
                let waiting = range.clone().find_map(|i| match state[i] {
                    State::Waits(Wait::Block(at)) => Some((i, at)),
                    _ => None,
                });
                let Some((j, at)) = waiting else {
                    continue;
                };
                let elsewhere = range.clone().any(|i| {
                    matches!(
                        state[i],
                        State::Waits(Wait::Mbarrier { .. } | Wait::Cluster(_))
                    )
                });
                if elsewhere {
                    continue;
                }
                for i in range.clone() {
                    match state[i] {
                        State::Waits(Wait::Block(other)) if !same_site(other, at) => {
                            break 'blk Err(fault(
                                i,
                                Fault::DivergentBarrier {
                                    here: site_of(other),
                                    other_thread: thread_of(j),
                                    other: site_of(at),
                                },
                            ));
                        }
                        State::Done => {
                            break 'blk Err(fault(
                                i,
                                Fault::ExitedWhileOthersWait {
                                    waiting_thread: thread_of(j),
                                    waiting_at: site_of(at),
                                },
                            ));
                        }
                        _ => {}
                    }
                }
                for i in range {
                    state[i] = State::Run;
                }
                released = true;
            }
            if released {
                continue;
            }
            // The cluster barrier: every thread of every block of the cluster waits there.
            let at_cluster = state.iter().enumerate().find_map(|(i, s)| match s {
                State::Waits(Wait::Cluster(at)) => Some((i, *at)),
                _ => None,
            });
            if let Some((j, at)) = at_cluster
                && state
                    .iter()
                    .all(|s| matches!(s, State::Waits(Wait::Cluster(_)) | State::Done))
            {
                if let Some(i) = state.iter().position(|s| matches!(s, State::Done)) {
                    break 'blk Err(fault(
                        i,
                        Fault::ExitedWhileOthersWait {
                            waiting_thread: thread_of(j),
                            waiting_at: site_of(at),
                        },
                    ));
                }
                for s in state.iter_mut() {
                    *s = State::Run;
                }
                continue;
            }
            // Nothing else can move: a thread still waiting for a phase waits forever.
            if let Some((i, at, parity, site)) = state.iter().enumerate().find_map(|(i, s)| match s
            {
                State::Waits(Wait::Mbarrier { at, parity, site }) => Some((i, *at, *parity, *site)),
                _ => None,
            }) {
                break 'blk Err(fault(
                    i,
                    Fault::MbarrierNeverCompletes {
                        here: site_of(site),
                        barrier: at,
                        parity,
                    },
                ));
            }
            // Threads at the block barrier and at the cluster barrier: neither completes.
            let barrier_at = |i: usize| match state[i] {
                State::Waits(Wait::Block(at) | Wait::Cluster(at)) => Some(at),
                _ => None,
            };
            if let Some((i, here)) = (0..state.len()).find_map(|i| barrier_at(i).map(|a| (i, a))) {
                let other = (0..state.len()).find_map(|j| {
                    barrier_at(j)
                        .filter(|at| !same_site(at, here))
                        .map(|a| (j, a))
                });
                let (j, there) = other.unwrap_or((i, here));
                break 'blk Err(fault(
                    i,
                    Fault::DivergentBarrier {
                        here: site_of(here),
                        other_thread: thread_of(j),
                        other: site_of(there),
                    },
                ));
            }
            break Ok(()); // every thread returned
        };
        // SAFETY: null is never dereferenced (`current()` asserts non-null), so `records`,
        // which drop with this function, can no longer be reached through it.
        unsafe { set_current(std::ptr::null()) };
        for co in coroutines {
            if co.done() {
                self.stacks.push(co.into_stack());
            } else {
                drop(co); // unwinds the suspended thread; its stack is freed
            }
        }
        drop(async_states);
        outcome
    }
}
