//! Thread-block clusters (sm_90): the blocks of a cluster are resident at once on one GPC
//! and reach each other's shared memory: a TMA copy can land in several of them
//! (`super::tma::load_3d_multicast`), an mbarrier arrival can go to another's barrier
//! (`super::mbarrier::arrive_cluster`), and the cluster barrier holds every thread of every
//! block.
//!
//! rgemm launches clusters of two or four blocks along a 1D grid (cluster dimensions `s` x
//! 1 x 1): block `s c + r` is rank `r` of cluster `c`.
//!
//! On the host (CPU executor) a cluster's blocks run on one OS thread, their threads
//! interleaved, so that what one block waits for another can deliver.

/// `barrier.cluster.arrive` then `barrier.cluster.wait`: every thread of every block of the
/// cluster meets here (release, then acquire, at cluster scope: shared-memory writes and
/// mbarrier initialisations before it are visible to every block after it). Reach it from
/// every thread of the cluster; on the host threads waiting at two different calls, or one
/// that has returned, are a fault.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_cluster() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a barrier has no memory-safety precondition; every thread reaching it is the
    // caller's rule (above).
    unsafe {
        core::arch::asm!("barrier.cluster.arrive;", "barrier.cluster.wait;")
    }
    #[cfg(not(target_arch = "nvptx64"))]
    super::host::cluster_barrier();
}
