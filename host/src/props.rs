//! The device properties the kernel choice and the occupancy report are computed from.
use cudarc::driver::CudaContext;
use cudarc::driver::sys::CUdevice_attribute as Attr;

/// What this crate reads off a device (`cuDeviceGetAttribute`). Plain data, so the
/// occupancy arithmetic can also be checked against properties written by hand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProps {
    pub name: String,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (u32, u32),
    pub multiprocessors: u32,
    pub warp_size: u32,
    pub max_threads_per_block: u32,
    pub max_block_dim: (u32, u32, u32),
    pub max_grid_dim: (u32, u32, u32),
    pub max_threads_per_multiprocessor: u32,
    pub max_blocks_per_multiprocessor: u32,
    /// Shared bytes a block gets without opting in (48 KiB).
    pub shared_bytes_per_block: u32,
    /// Shared bytes a block may get after raising its dynamic limit.
    pub shared_bytes_per_block_optin: u32,
    pub shared_bytes_per_multiprocessor: u32,
    /// Shared bytes the system keeps for each resident block.
    pub reserved_shared_bytes_per_block: u32,
    pub registers_per_block: u32,
    pub registers_per_multiprocessor: u32,
    /// SM clock, kHz.
    pub clock_khz: u32,
    /// Memory clock, kHz, and bus width in bits.
    pub memory_clock_khz: u32,
    pub memory_bus_width_bits: u32,
}

impl DeviceProps {
    pub(crate) fn query(ctx: &CudaContext) -> Result<Self, cudarc::driver::DriverError> {
        let get = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as u32);
        let (major, minor) = ctx.compute_capability()?;
        Ok(Self {
            name: ctx.name()?,
            compute_capability: (major as u32, minor as u32),
            multiprocessors: get(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            warp_size: get(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
            max_threads_per_block: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dim: (
                get(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                get(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                get(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ),
            max_grid_dim: (
                get(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                get(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                get(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ),
            max_threads_per_multiprocessor: get(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )?,
            max_blocks_per_multiprocessor: get(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
            )?,
            shared_bytes_per_block: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            shared_bytes_per_block_optin: get(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            shared_bytes_per_multiprocessor: get(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            )?,
            reserved_shared_bytes_per_block: get(
                Attr::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
            )?,
            registers_per_block: get(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
            registers_per_multiprocessor: get(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
            )?,
            clock_khz: get(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
            memory_clock_khz: get(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
            memory_bus_width_bits: get(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        })
    }

    /// FP32 peak, FLOP/s: SMs x FP32 lanes per SM x 2 (an FMA) x clock. Lanes per SM are
    /// 128 on compute capability 8.6/8.9/9.0 and 64 on 7.x/8.0 (the CUDA guide's table).
    pub fn fp32_peak_flops(&self) -> f64 {
        let lanes = match self.compute_capability {
            (8, 6) | (8, 9) | (9, _) | (10, _) | (12, _) => 128.0,
            _ => 64.0,
        };
        self.multiprocessors as f64 * lanes * 2.0 * self.clock_khz as f64 * 1e3
    }

    /// FP64 SIMT peak (no tensor cores), FLOP/s: FP64 lanes per SM are 64 on 9.0, 32 on
    /// 7.0 and 8.0, and 2 on the other (consumer) parts (the CUDA guide's table).
    pub fn fp64_peak_flops(&self) -> f64 {
        let lanes = match self.compute_capability {
            (9, 0) => 64.0,
            (7, 0) | (8, 0) => 32.0,
            _ => 2.0,
        };
        self.multiprocessors as f64 * lanes * 2.0 * self.clock_khz as f64 * 1e3
    }

    /// Dense f16/bf16 tensor-core peak with f32 accumulation, FLOP/s: SMs x FLOP per SM per
    /// clock (4096 on 9.0: 4 tensor cores of 512 multiply-adds; 2048 on 8.0; 1024 on the other
    /// 8.x and 7.x parts, for f32 accumulation) x clock. NVIDIA quotes 989 TFLOP/s for an
    /// H100 SXM, at a lower clock (1.83 GHz) than the rated one read here.
    pub fn tensor16_peak_flops(&self) -> f64 {
        let per_sm_clock = match self.compute_capability {
            (9, 0) => 4096.0,
            (8, 0) => 2048.0,
            _ => 1024.0,
        };
        self.multiprocessors as f64 * per_sm_clock * self.clock_khz as f64 * 1e3
    }

    /// FP64 tensor-core (DMMA) peak, FLOP/s: 256 FLOP per SM per clock on 9.0 (twice its
    /// SIMT rate; NVIDIA quotes 67 TFLOP/s for an H100 SXM), 128 on 8.0; the SIMT peak on
    /// devices without FP64 tensor cores.
    pub fn fp64_tensor_peak_flops(&self) -> f64 {
        let per_sm_clock = match self.compute_capability {
            (9, 0) => 256.0,
            (8, 0) => 128.0,
            _ => return self.fp64_peak_flops(),
        };
        self.multiprocessors as f64 * per_sm_clock * self.clock_khz as f64 * 1e3
    }

    /// Dense TF32 tensor-core peak, FLOP/s: half the 16-bit rate.
    pub fn tf32_peak_flops(&self) -> f64 {
        self.tensor16_peak_flops() / 2.0
    }

    /// Peak device-memory bandwidth, bytes/s: memory clock x 2 (double data rate) x bus
    /// width.
    pub fn memory_bandwidth(&self) -> f64 {
        self.memory_clock_khz as f64 * 1e3 * 2.0 * self.memory_bus_width_bits as f64 / 8.0
    }
}
