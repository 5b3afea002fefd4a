//! The host side of the device module. rgemm's CPU executor runs each simulated GPU thread
//! as a coroutine on an OS thread; before one runs it installs that thread's
//! [`HostThread`] (its coordinates, its block's shared region, the launch's global buffers
//! and the block barrier), which the functions of [`super::thread`], [`super::shared`]
//! and [`super::global`] read.
use std::cell::Cell;
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
    /// Waits until every lane of this thread's warp has reached the same warp-wide
    /// operation (`mma.sync` and the like); the argument is its call site.
    pub warp_barrier: fn(&'static Location<'static>),
    /// Waits until every thread of this thread's warpgroup (4 warps, 128 threads) has
    /// reached the same warpgroup-wide operation (`wgmma`); the argument is its call site.
    pub warpgroup_barrier: fn(&'static Location<'static>),
    /// This warp's exchange area: what each lane hands in to a warp-wide operation, in two
    /// copies used alternately (a lane that runs ahead into the next operation writes the
    /// other copy while its warp still reads this one).
    pub exchange: *mut [[[u32; EXCHANGE_WORDS]; 32]; 2],
    /// Warp-wide operations this thread has taken part in (which copy is next).
    pub collectives: Cell<u32>,
}

/// 32-bit words a lane hands in to one warp-wide operation, at most.
pub const EXCHANGE_WORDS: usize = 8;

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
    (me.warp_barrier)(site);
    CURRENT.set(this);
    // SAFETY: as above; every lane wrote this copy before the warp barrier released.
    unsafe { (*current().exchange)[copy] }
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
    (me.warpgroup_barrier)(site);
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
