//! The host side of the device module. rgemm's CPU executor runs each simulated GPU thread
//! as a coroutine on an OS thread; before one runs it installs that thread's
//! [`HostThread`] (its coordinates, its block's shared region, the launch's global buffers
//! and the block barrier), which the functions of [`super::thread`], [`super::shared`]
//! and [`super::global`] read.
use std::cell::{Cell, RefCell};
use std::panic::Location;

/// A global buffer of a launch: `bytes` bytes from address `addr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalRegion {
    pub addr: usize,
    pub bytes: usize,
}

/// Everything a simulated thread can ask about itself.
#[derive(Debug)]
pub struct HostThread {
    pub thread_idx: [u32; 3],
    pub block_idx: [u32; 3],
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
    /// The block's launch-sized shared region (aligned to 32 bytes).
    pub shared: *mut u8,
    pub shared_len: usize,
    /// The launch's global buffers; every global access must fall inside one.
    pub globals: *const [GlobalRegion],
    /// Waits at the block barrier; the argument is the `sync_threads()` call site.
    pub barrier: fn(&'static Location<'static>),
    /// Waits until every thread of this thread's group of `width` threads (32: its warp,
    /// for `mma.sync` and the like; 128: its warpgroup, for `wgmma`) has reached the same
    /// operation; the second argument is its call site.
    pub lanes_barrier: fn(usize, &'static Location<'static>),
    /// This warp's exchange area: what each lane hands in to a warp-wide operation, in two
    /// copies used alternately (a lane that runs ahead into the next operation writes the
    /// other copy while its warp still reads this one).
    pub exchange: *mut [[[u32; EXCHANGE_WORDS]; 32]; 2],
    /// Warp-wide operations this thread has taken part in (which copy is next).
    pub collectives: Cell<u32>,
    /// The block's mbarriers and TMA copies.
    pub async_state: *mut BlockAsync,
    /// Suspends this thread until the mbarrier at the first argument (a shared address)
    /// completes the phase of the parity in the second; the third is the call site.
    pub mbarrier_wait: fn(u32, u32, &'static Location<'static>),
    /// Per mbarrier (shared address), the phases this thread has seen complete.
    pub seen: RefCell<Vec<(u32, u32)>>,
    /// The asynchronous state of every block of this thread's cluster, by rank (one entry,
    /// its own block's, outside a cluster launch): where a multicast copy or a remote
    /// arrival lands.
    pub cluster: *const [*mut BlockAsync],
    /// Waits at the cluster barrier (every thread of every block of the cluster); the
    /// argument is the call site.
    pub cluster_barrier: fn(&'static Location<'static>),
}

/// The asynchronous side of a block on the host: its mbarriers and the TMA copies issued
/// into its shared memory (see `super::mbarrier` and `super::tma`), by its own threads or, in
/// a cluster, by another block's. One per block; only the OS thread running its cluster
/// touches it.
#[derive(Debug)]
pub struct BlockAsync {
    shared: *mut u8,
    shared_len: usize,
    barriers: Vec<Barrier>,
    copies: Vec<AsyncCopy>,
}

#[derive(Debug)]
struct Barrier {
    at: u32,
    count: u32,
    pending: u32,
    tx: i64,
    /// Phases completed so far: the current phase's parity is `completed % 2`.
    completed: u32,
}

#[derive(Debug)]
struct AsyncCopy {
    barrier: u32,
    dst: u32,
    len: u32,
    /// The bytes, until the barrier's phase completes and they are written to shared memory.
    data: Option<Vec<u8>>,
    /// The phase (count of completed phases) whose completion delivered it.
    delivered_in: u32,
}

impl BlockAsync {
    /// The state of a block whose shared region is `shared_len` bytes at `shared`.
    pub fn new(shared: *mut u8, shared_len: usize) -> Self {
        Self {
            shared,
            shared_len,
            barriers: Vec::new(),
            copies: Vec::new(),
        }
    }

    fn barrier(&mut self, at: u32) -> &mut Barrier {
        match self.barriers.iter().position(|b| b.at == at) {
            Some(i) => &mut self.barriers[i],
            None => panic!("mbarrier at shared address {at:#x} used before mbarrier.init"),
        }
    }

    pub fn init(&mut self, at: u32, count: u32) {
        assert!(count > 0, "mbarrier.init with a count of 0");
        self.barriers.retain(|b| b.at != at);
        self.barriers.push(Barrier {
            at,
            count,
            pending: count,
            tx: 0,
            completed: 0,
        });
    }

    /// One arrival, expecting `tx` more bytes.
    pub fn arrive(&mut self, at: u32, tx: u32) {
        let b = self.barrier(at);
        b.tx += tx as i64;
        b.pending -= 1;
        self.settle(at);
    }

    /// A TMA copy of `data` to shared address `dst`, counted on the barrier at `bar`.
    pub fn copy(&mut self, bar: u32, dst: u32, data: Vec<u8>) {
        let len = data.len() as u32;
        assert!(
            dst as usize + len as usize <= self.shared_len,
            "TMA copy out of bounds: {len} bytes at shared address {dst:#x} of a {}-byte region",
            self.shared_len
        );
        let overlaps = |c: &AsyncCopy| c.dst < dst + len && dst < c.dst + c.len;
        if let Some(c) = self.copies.iter().find(|c| overlaps(c) && c.data.is_some()) {
            panic!(
                "TMA copy to {dst:#x} overwrites the copy to {:#x} (mbarrier {:#x}) before its phase completed",
                c.dst, c.barrier
            );
        }
        self.copies.retain(|c| !overlaps(c));
        self.barrier(bar).tx -= len as i64;
        self.copies.push(AsyncCopy {
            barrier: bar,
            dst,
            len,
            data: Some(data),
            delivered_in: 0,
        });
        self.settle(bar);
    }

    /// Completes the barrier's phase if every arrival and byte is in, delivering its copies.
    fn settle(&mut self, at: u32) {
        let b = self.barrier(at);
        if b.pending > 0 || b.tx != 0 {
            return;
        }
        b.completed += 1;
        b.pending = b.count;
        let phase = b.completed;
        for c in self.copies.iter_mut().filter(|c| c.barrier == at) {
            if let Some(data) = c.data.take() {
                // SAFETY: inside the block's shared region (checked when issued).
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        data.as_ptr(),
                        self.shared.add(c.dst as usize),
                        data.len(),
                    )
                };
                c.delivered_in = phase;
            }
        }
    }

    /// Phases the barrier at `at` has completed.
    pub fn completed(&self, at: u32) -> Option<u32> {
        self.barriers
            .iter()
            .find(|b| b.at == at)
            .map(|b| b.completed)
    }

    /// Whether the phase of parity `parity` of the barrier at `at` has completed (the
    /// current phase's parity is another): `mbarrier.try_wait.parity`.
    pub fn phase_done(&self, at: u32, parity: u32) -> Option<bool> {
        self.completed(at).map(|c| c % 2 != parity)
    }

    /// Why this thread may not read `len` shared bytes at `at` yet, if it may not: a TMA copy
    /// into them not delivered, or delivered in a phase this thread has not waited for.
    pub fn unready(&self, at: u32, len: u32, seen: &[(u32, u32)]) -> Option<String> {
        let overlapping = |c: &&AsyncCopy| c.dst < at + len && at < c.dst + c.len;
        self.copies.iter().filter(overlapping).find_map(|c| {
            let seen = phase_seen(seen, c.barrier);
            if c.data.is_some() {
                Some(format!(
                    "reads shared bytes {at:#x}.. that a TMA copy has not delivered (mbarrier {:#x}'s phase is not complete)",
                    c.barrier
                ))
            } else if seen < c.delivered_in {
                Some(format!(
                    "reads shared bytes {at:#x}.. delivered by a TMA copy in phase {} of mbarrier {:#x}, which this thread has not waited for",
                    c.delivered_in - 1,
                    c.barrier
                ))
            } else {
                None
            }
        })
    }

    /// The shared ranges `(at, len)` of the copies this thread may not read yet (those
    /// [`unready`](Self::unready) names): a read that overlaps none of them is ready.
    pub fn unready_ranges(&self, seen: &[(u32, u32)]) -> Vec<(u32, u32)> {
        self.copies
            .iter()
            .filter(|c| c.data.is_some() || phase_seen(seen, c.barrier) < c.delivered_in)
            .map(|c| (c.dst, c.len))
            .collect()
    }
}

/// Phases of the mbarrier at `barrier` this thread has waited for (`seen`, its record).
fn phase_seen(seen: &[(u32, u32)], barrier: u32) -> u32 {
    seen.iter()
        .find(|(b, _)| *b == barrier)
        .map_or(0, |(_, p)| *p)
}

/// The block's asynchronous state.
pub fn block_async() -> &'static mut BlockAsync {
    // SAFETY: the executor gives every block its own state for the block's lifetime, and
    // only the block's OS thread, running one simulated thread at a time, touches it.
    unsafe { &mut *current().async_state }
}

/// The asynchronous state of block `rank` of this thread's cluster: a multicast copy's or a
/// remote arrival's destination.
#[track_caller]
pub fn cluster_async(rank: u32) -> &'static mut BlockAsync {
    // SAFETY: `set_current`'s contract; the executor runs a cluster's blocks on one OS
    // thread, one simulated thread at a time, so nothing else touches their states now.
    let blocks = unsafe { &*current().cluster };
    assert!(
        (rank as usize) < blocks.len(),
        "block {rank} of a cluster of {} blocks",
        blocks.len()
    );
    // SAFETY: as above; each pointer is a block's state, alive for the cluster's launch.
    unsafe { &mut *blocks[rank as usize] }
}

/// This thread's part in the cluster barrier (see `super::cluster`).
#[track_caller]
pub fn cluster_barrier() {
    let site = Location::caller();
    let this = CURRENT.get();
    (current().cluster_barrier)(site);
    CURRENT.set(this);
}

/// Waits for the phase of parity `parity` of the mbarrier at `at` (see `super::mbarrier`).
#[track_caller]
pub fn mbarrier_wait(at: u32, parity: u32) {
    let site = Location::caller();
    match block_async().phase_done(at, parity) {
        None => panic!("mbarrier at shared address {at:#x} used before mbarrier.init"),
        Some(false) => {
            let this = CURRENT.get();
            (current().mbarrier_wait)(at, parity, site);
            CURRENT.set(this);
        }
        Some(true) => {}
    }
    let completed = block_async().completed(at).unwrap_or(0);
    let mut seen = current().seen.borrow_mut();
    match seen.iter_mut().find(|(b, _)| *b == at) {
        Some((_, p)) => *p = completed,
        None => seen.push((at, completed)),
    }
}

/// Panics if this thread may not read `len` shared bytes at `at` yet (see
/// [`BlockAsync::unready`]).
#[track_caller]
pub fn check_async_read(at: u32, len: u32) {
    let me = current();
    if let Some(why) = block_async().unready(at, len, &me.seen.borrow()) {
        panic!("{why}");
    }
}

/// [`check_async_read`] for many reads `(at, len)`: the copies this thread may not read
/// yet are found once, and only a read that overlaps one of them is checked (and panics).
#[track_caller]
pub fn check_async_reads(reads: impl IntoIterator<Item = (u32, u32)>) {
    let unready = block_async().unready_ranges(&current().seen.borrow());
    if unready.is_empty() {
        return;
    }
    for (at, len) in reads {
        if unready
            .iter()
            .any(|&(dst, n)| dst < at + len && at < dst + n)
        {
            check_async_read(at, len);
        }
    }
}

/// 32-bit words a lane hands in to one warp-wide operation, at most.
pub const EXCHANGE_WORDS: usize = 12;

thread_local! {
    static CURRENT: Cell<*const HostThread> = const { Cell::new(std::ptr::null()) };
}

/// Makes `thread` the simulated thread that device functions on this OS thread refer to;
/// returns the previous one.
///
/// # Safety
/// `thread` (and the regions it points to) stays valid until it is replaced.
pub unsafe fn set_current(thread: *const HostThread) -> *const HostThread {
    CURRENT.replace(thread)
}

pub fn current() -> &'static HostThread {
    let thread = CURRENT.get();
    assert!(
        !thread.is_null(),
        "a device function was called outside a kernel launch"
    );
    // SAFETY: `set_current`'s contract.
    unsafe { &*thread }
}

/// The host pointer of shared address `at` (a byte offset in the block's shared region, as
/// [`super::shared::shared_address`] gives on the host), for `len` bytes that must lie
/// inside the region: the shared-address forms of `ldmatrix` and `cp.async`.
#[track_caller]
pub fn shared_byte(at: u32, len: usize) -> *mut u8 {
    let me = current();
    assert!(
        at as usize + len <= me.shared_len,
        "shared address {at:#x} + {len} bytes lies outside the block's shared region ({} bytes)",
        me.shared_len
    );
    // SAFETY: inside the region, checked above.
    unsafe { me.shared.add(at as usize) }
}

pub(crate) fn barrier(call_site: &'static Location<'static>) {
    let me = CURRENT.get();
    (current().barrier)(call_site);
    // Other simulated threads ran on this OS thread meanwhile: be this one again.
    CURRENT.set(me);
}

/// This lane's part in a warp-wide operation: hands in `mine`, waits until every lane of the
/// warp has reached the same call site, and returns what each lane handed in (by lane).
/// A lane that never arrives (it waits elsewhere or has returned) is reported by the
/// executor as a fault naming both places.
#[track_caller]
pub fn warp_exchange(mine: [u32; EXCHANGE_WORDS]) -> [[u32; EXCHANGE_WORDS]; 32] {
    let site = Location::caller();
    let me = current();
    let copy = (me.collectives.get() % 2) as usize;
    me.collectives.set(me.collectives.get().wrapping_add(1));
    let lane = lane_id() as usize;
    // SAFETY: the executor gives every warp its own area for the block's lifetime, and only
    // this block's OS thread touches it; lanes write their own slot.
    unsafe { (*me.exchange)[copy][lane] = mine };
    let this = CURRENT.get();
    (me.lanes_barrier)(32, site);
    CURRENT.set(this);
    // SAFETY: as above; every lane wrote this copy before the warp barrier released.
    unsafe { (*current().exchange)[copy] }
}

/// This thread's part in `__syncwarp()`: waits until all 32 lanes of its warp have reached
/// the same call site (lanes at another one are a divergence fault).
#[track_caller]
pub fn warp_meet() {
    let site = Location::caller();
    let me = current();
    let this = CURRENT.get();
    (me.lanes_barrier)(32, site);
    CURRENT.set(this);
}

/// This thread's part in a warpgroup-wide operation: waits until all 128 threads of its
/// warpgroup have reached the same call site. The block's threads must be whole warpgroups.
#[track_caller]
pub fn warpgroup_meet() {
    let site = Location::caller();
    let me = current();
    let threads = me.block_dim[0] * me.block_dim[1] * me.block_dim[2];
    assert!(
        threads.is_multiple_of(128),
        "a warpgroup-wide operation in a block of {threads} threads (not whole warpgroups)"
    );
    let this = CURRENT.get();
    (me.lanes_barrier)(128, site);
    CURRENT.set(this);
}

/// This thread's lane in its warp (threads are numbered x fastest, then y, then z).
pub fn lane_id() -> u32 {
    let me = current();
    let linear = me.thread_idx[0]
        + me.block_dim[0] * (me.thread_idx[1] + me.block_dim[1] * me.thread_idx[2]);
    linear % 32
}

#[track_caller]
pub(crate) fn check_global(addr: usize, bytes: usize, access: &str) {
    // SAFETY: `set_current`'s contract.
    let globals = unsafe { &*current().globals };
    let inside = globals
        .iter()
        .any(|r| addr >= r.addr && addr.wrapping_add(bytes) <= r.addr + r.bytes);
    assert!(
        inside,
        "global memory {access} out of bounds: {bytes} bytes at {addr:#x} are outside every buffer of the launch"
    );
}
