//! Occupancy as the textbook computes it: how many blocks of a launch fit on one SM at
//! once, and which resource stops the next one.
//!
//! Four limits, each a whole number of blocks per SM:
//! - threads: `max_threads_per_multiprocessor / (warps per block * warp size)`;
//! - blocks: `max_blocks_per_multiprocessor`;
//! - shared memory: `shared_bytes_per_multiprocessor / (shared bytes per block + the
//!   system's reserved bytes per block, rounded up to 128)`;
//! - registers: registers are given out per warp in units of 256 and the register file is
//!   split between the SM's 4 partitions, so
//!   `(4 * floor(registers_per_multiprocessor / 4 / regs_per_warp)) / warps per block`.
//!
//! The smallest limit wins; a GPU test checks these numbers against the driver's
//! `cuOccupancyMaxActiveBlocksPerMultiprocessor`.
use crate::props::DeviceProps;

/// What one block of a launch uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockResources {
    pub threads: u32,
    /// Dynamic plus static shared bytes.
    pub shared_bytes: u32,
    /// Registers per thread (from the compiled kernel: `CU_FUNC_ATTRIBUTE_NUM_REGS`).
    pub registers_per_thread: u32,
}

/// The resource that limits how many blocks are resident on one SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limiter {
    Threads,
    Blocks,
    SharedMemory,
    Registers,
}

/// The occupancy of one launch configuration on one device.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Occupancy {
    pub resources: BlockResources,
    /// Resident blocks per SM, and what each limit alone would allow.
    pub blocks_per_sm: u32,
    pub blocks_by_threads: u32,
    pub blocks_by_block_limit: u32,
    pub blocks_by_shared_memory: u32,
    pub blocks_by_registers: u32,
    pub limiter: Limiter,
    pub threads_per_sm: u32,
    /// Resident threads over the SM's maximum, 0..=1.
    pub fraction: f64,
    /// Shared bytes per resident thread.
    pub shared_bytes_per_thread: f64,
}

const SHARED_ALLOCATION_UNIT: u32 = 128;
const REGISTER_ALLOCATION_UNIT: u32 = 256;
const SM_PARTITIONS: u32 = 4;

impl Occupancy {
    /// Occupancy of blocks using `resources` on the device `props` describes.
    pub fn compute(props: &DeviceProps, resources: BlockResources) -> Self {
        let warp = props.warp_size.max(1);
        let warps_per_block = resources.threads.div_ceil(warp).max(1);
        let threads_alloc = warps_per_block * warp;

        let by_threads = props.max_threads_per_multiprocessor / threads_alloc;
        let by_blocks = props.max_blocks_per_multiprocessor;
        let shared_alloc = (resources.shared_bytes + props.reserved_shared_bytes_per_block)
            .next_multiple_of(SHARED_ALLOCATION_UNIT);
        let by_shared = props
            .shared_bytes_per_multiprocessor
            .checked_div(shared_alloc)
            .unwrap_or(u32::MAX);
        let regs_per_warp =
            (resources.registers_per_thread * warp).next_multiple_of(REGISTER_ALLOCATION_UNIT);
        let by_registers = match regs_per_warp {
            0 => u32::MAX,
            r => {
                let warps =
                    SM_PARTITIONS * (props.registers_per_multiprocessor / SM_PARTITIONS / r);
                warps / warps_per_block
            }
        };

        let limits = [
            (by_threads, Limiter::Threads),
            (by_blocks, Limiter::Blocks),
            (by_shared, Limiter::SharedMemory),
            (by_registers, Limiter::Registers),
        ];
        let (blocks, limiter) = limits.into_iter().min_by_key(|(b, _)| *b).unwrap();
        let threads_per_sm = blocks * resources.threads;
        Self {
            resources,
            blocks_per_sm: blocks,
            blocks_by_threads: by_threads,
            blocks_by_block_limit: by_blocks,
            blocks_by_shared_memory: by_shared,
            blocks_by_registers: by_registers,
            limiter,
            threads_per_sm,
            fraction: threads_per_sm as f64 / props.max_threads_per_multiprocessor.max(1) as f64,
            shared_bytes_per_thread: resources.shared_bytes as f64
                / resources.threads.max(1) as f64,
        }
    }
}
