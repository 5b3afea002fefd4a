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
}

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

pub(crate) fn current() -> &'static HostThread {
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
