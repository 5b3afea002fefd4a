//! The kernel catalogue: each kernel's entry name, its parameter list and its launch rules
//! (block shape, shared bytes, grid from the shape). The kernels themselves are in
//! `kernels-gpu/`; the PTX test checks that every entry named here exists there with
//! exactly the parameters declared here.
use crate::element::Element;
use crate::error::{Error, Result};
use crate::props::DeviceProps;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use rgemm_kernels::stream_k::{self, Schedule};

/// Largest M, N or K: the kernels index rows and columns with 32-bit integers, and
/// `block index * tile + thread index` must not wrap.
pub const MAX_DIM: usize = i32::MAX as usize;

/// Tile widths with their own compiled entry points (loops unrolled at compile time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FixedTile {
    W8 = 8,
    W16 = 16,
    W32 = 32,
}

impl FixedTile {
    pub const ALL: [FixedTile; 3] = [FixedTile::W8, FixedTile::W16, FixedTile::W32];

    pub fn width(self) -> u32 {
        self as u32
    }
}

/// Which kernel computes a product. Each is one idea of the progression from the textbook
/// to register tiling, in its own file under `kernels-gpu/src/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// One thread per element of C (`naive.rs`); 32 x 8 blocks, so a warp reads 32
    /// consecutive elements of a row of B.
    Naive,
    /// Shared-memory tiling with a compile-time tile width (`tiled.rs`).
    Tiled(FixedTile),
    /// Shared-memory tiling with the tile width passed at launch and the shared memory
    /// sized at launch (`tiled_dyn_*`). Any width with `width^2` threads per block.
    TiledDynamic(u32),
    /// Thread coarsening: 8 elements of a column of C per thread, 64 x 64 block tile
    /// (`coarse.rs`).
    Coarse,
    /// 2D register tiling: an 8 x 8 thread tile, 128 x 128 block tile (`register_tiled.rs`).
    RegisterTiled,
    /// Register tiling with 128-bit global and shared accesses, A transposed in shared
    /// memory, a conflict-free thread-tile layout (`vectorized.rs`, `block_tile.rs`).
    Vectorized,
    /// The vectorized kernel with two shared stages and the next phase's loads in flight
    /// during the multiply-adds (`double_buffered.rs`).
    DoubleBuffered,
    /// The double-buffered kernel with each warp owning a compact patch of thread tiles
    /// (`warp_tiled.rs`).
    WarpTiled,
    /// Warp tiling with BK = 16: half the barriers per multiply-add (`warp_tiled.rs`).
    WarpTiledK16,
    /// Warp tiling with 64 x 64 block tiles and BK = 16, for products too small to fill the
    /// GPU with 128 x 128 tiles (`warp_tiled.rs`).
    WarpTiled64,
    /// Warp tiling with fragment double buffering: each K step's shared-memory reads one
    /// step ahead, across the barrier too; A^T padded (`fragment_buffered.rs`).
    FragmentBuffered,
    /// Fragment double buffering with BK = 16, the next phase's loads in two parts and an
    /// unchecked mainloop for interior blocks (`fragment_buffered.rs`).
    FragmentBufferedK16,
    /// `fragment_buffered_k16` with B copied by `cp.async` (no registers, no shared stores)
    /// and A still through registers (`async_copy.rs`; compute capability 8.0+, from the
    /// sm_80 PTX module).
    AsyncCopy,
    /// `async_copy` with each warp's lanes paired so that shared memory returns every
    /// fragment read in 2 wavefronts instead of 3 (`paired_lanes.rs`; compute capability
    /// 8.0+).
    PairedLanes,
    /// Thin products (a row vector times a matrix, a matrix times a column vector, and near
    /// them): the K loop split among a block's 1024 threads, coalesced loads, partial sums
    /// summed in shared memory (`thin.rs`). Its grid depends on which side of C is thin.
    Thin,
    /// `paired_lanes`' block tile with the last, partial wave of tiles shared out by K phases
    /// among one wave of blocks, their parts added by a second launch (`stream_k.rs`;
    /// compute capability 8.0+). No block waits on another.
    StreamK,
}

/// Block of the naive kernel: a warp spans 32 columns of one row of C.
const NAIVE_BLOCK: (u32, u32) = (32, 8);

impl Kernel {
    /// Every compiled kernel with a fixed configuration, in the order of the progression.
    pub const FIXED: [Kernel; 17] = [
        Kernel::Naive,
        Kernel::Tiled(FixedTile::W8),
        Kernel::Tiled(FixedTile::W16),
        Kernel::Tiled(FixedTile::W32),
        Kernel::Coarse,
        Kernel::RegisterTiled,
        Kernel::Vectorized,
        Kernel::DoubleBuffered,
        Kernel::WarpTiled,
        Kernel::WarpTiledK16,
        Kernel::WarpTiled64,
        Kernel::FragmentBuffered,
        Kernel::FragmentBufferedK16,
        Kernel::AsyncCopy,
        Kernel::PairedLanes,
        Kernel::StreamK,
        Kernel::Thin,
    ];

    /// `thin` is a candidate for `matmul` only where C has at most this many rows or
    /// columns: it reads the larger input once per row (or column) of C, so past a few it
    /// cannot win, and timing it on first use of a large square shape cost seconds (f64
    /// 8192^3: 1.0 s a run, f32 0.5 s; measured on an H200).
    pub const THIN_SIDE: usize = 32;

    /// The entry point's name for element type `T`, e.g. `tiled16_f32`.
    pub fn entry_name<T: Element>(&self) -> String {
        format!("{}_{}", self.family(), T::NAME)
    }

    /// The entry name without the element suffix.
    pub fn family(&self) -> String {
        match self {
            Kernel::Naive => "naive".into(),
            Kernel::Tiled(t) => format!("tiled{}", t.width()),
            Kernel::TiledDynamic(_) => "tiled_dyn".into(),
            Kernel::Coarse => "coarse".into(),
            Kernel::RegisterTiled => "register_tiled".into(),
            Kernel::Vectorized => "vectorized".into(),
            Kernel::DoubleBuffered => "double_buffered".into(),
            Kernel::WarpTiled => "warp_tiled".into(),
            Kernel::WarpTiledK16 => "warp_tiled_k16".into(),
            Kernel::WarpTiled64 => "warp_tiled_64".into(),
            Kernel::AsyncCopy => "async_copy".into(),
            Kernel::PairedLanes => "paired_lanes".into(),
            Kernel::Thin => "thin".into(),
            Kernel::StreamK => "stream_k".into(),
            Kernel::FragmentBuffered => "fragment_buffered".into(),
            Kernel::FragmentBufferedK16 => "fragment_buffered_k16".into(),
        }
    }

    /// The tile width, for the textbook tiled kernels.
    pub fn tile(&self) -> Option<u32> {
        match self {
            Kernel::Tiled(t) => Some(t.width()),
            Kernel::TiledDynamic(t) => Some(*t),
            _ => None,
        }
    }

    /// Launch rule: the block shape `(x, y)`; for 2D blocks x runs along N (columns of
    /// C) and y along M.
    pub fn block(&self) -> (u32, u32) {
        match self {
            Kernel::Naive => NAIVE_BLOCK,
            Kernel::Tiled(_) | Kernel::TiledDynamic(_) => {
                let t = self.tile().unwrap_or(0);
                (t, t)
            }
            Kernel::Coarse => (512, 1),
            Kernel::Thin => (1024, 1),
            Kernel::WarpTiled64 => (64, 1),
            _ => (256, 1),
        }
    }

    /// Launch rule: the block tile, the `rows x cols` of C one block computes.
    pub fn block_tile(&self) -> (u32, u32) {
        match self {
            Kernel::Naive => (NAIVE_BLOCK.1, NAIVE_BLOCK.0),
            Kernel::Tiled(_) | Kernel::TiledDynamic(_) => self.block(),
            Kernel::Coarse | Kernel::WarpTiled64 => (64, 64),
            // Its few-rows tile; the grid comes from `block_tile_for`.
            Kernel::Thin => (1, 32),
            _ => (128, 128),
        }
    }

    /// Launch rule: the block tile for an `m x n` C. As [`Kernel::block_tile`], except for
    /// `thin`, whose blocks take 32 elements of one row of C when `m <= n` and 32 whole rows
    /// otherwise.
    pub fn block_tile_for(&self, m: usize, n: usize) -> (u32, u32) {
        match self {
            Kernel::Thin if m <= n => (1, 32),
            Kernel::Thin => (32, n.clamp(1, u32::MAX as usize) as u32),
            _ => self.block_tile(),
        }
    }

    /// Launch rule: dynamic shared bytes per block. Tiles hold the accumulator type.
    pub fn shared_bytes<T: Element>(&self) -> u32 {
        let acc = std::mem::size_of::<T::Out>() as u32;
        let elements = match self {
            Kernel::Naive => 0,
            Kernel::Tiled(_) | Kernel::TiledDynamic(_) => {
                let t = self.tile().unwrap_or(0);
                2 * t * t
            }
            Kernel::Coarse => 64 * 8 + 8 * 64,
            Kernel::Thin => 32 * 33,
            Kernel::RegisterTiled | Kernel::Vectorized => 128 * 8 + 8 * 128,
            Kernel::DoubleBuffered | Kernel::WarpTiled => 2 * (128 * 8 + 8 * 128),
            Kernel::WarpTiledK16 => 2 * (128 * 16 + 16 * 128),
            Kernel::WarpTiled64 => 2 * (64 * 16 + 16 * 64),
            Kernel::AsyncCopy | Kernel::PairedLanes | Kernel::StreamK => {
                2 * (16 * (128 + 4) + 16 * 128)
            }
            Kernel::FragmentBuffered => 2 * (8 * (128 + 4) + 8 * 128),
            Kernel::FragmentBufferedK16 => 2 * (16 * (128 + 4) + 16 * 128),
        };
        elements * acc
    }

    /// The oldest GPU that can run it: `cp.async` needs compute capability 8.0; the rest run
    /// from the sm_70 module.
    pub fn min_compute_capability(&self) -> (u32, u32) {
        match self {
            Kernel::AsyncCopy | Kernel::PairedLanes | Kernel::StreamK => (8, 0),
            _ => (7, 0),
        }
    }

    /// The second entry point of a kernel that runs as two launches, for element type `T`:
    /// `stream_k_fixup_f32` / `_f64` (by output type), which adds `stream_k`'s parts of shared
    /// tiles, with its PTX parameter list `(partials, c, m, n, k, ctas)`.
    pub fn fixup_entry<T: Element>(&self) -> Option<(String, &'static [PtxParam])> {
        let out = if T::NAME == "f64" { "f64" } else { "f32" };
        (*self == Kernel::StreamK)
            .then(|| (format!("stream_k_fixup_{out}"), GemmArgs::<f32>::PTX_FIXUP))
    }

    /// The PTX parameter list of this kernel's entry points.
    pub fn params(&self) -> &'static [PtxParam] {
        match self {
            Kernel::TiledDynamic(_) => GemmArgs::<f32>::PTX_WITH_TILE,
            Kernel::StreamK => GemmArgs::<f32>::PTX_WITH_PARTIALS,
            _ => GemmArgs::<f32>::PTX,
        }
    }

    /// Checks that `props`' device can run this kernel's block at all (for element `T`).
    pub fn check_device<T: Element>(&self, props: &DeviceProps) -> Result<()> {
        let unsupported = |reason: String| match self.tile() {
            Some(tile) => Error::UnsupportedTile {
                tile,
                device: props.name.clone(),
                reason,
            },
            None => Error::UnsupportedKernel {
                kernel: self.to_string(),
                device: props.name.clone(),
                reason,
            },
        };
        if self.tile() == Some(0) {
            return Err(unsupported("a tile must be at least 1 wide".into()));
        }
        let (major, minor) = self.min_compute_capability();
        if props.compute_capability < (major, minor) {
            return Err(unsupported(format!(
                "needs compute capability {major}.{minor}; the device has {}.{}",
                props.compute_capability.0, props.compute_capability.1
            )));
        }
        let (bx, by) = self.block();
        let threads = bx as u64 * by as u64;
        if threads > props.max_threads_per_block as u64
            || bx > props.max_block_dim.0
            || by > props.max_block_dim.1
        {
            return Err(unsupported(format!(
                "a {bx}x{by} block has {threads} threads; the device allows {} per block",
                props.max_threads_per_block
            )));
        }
        let shared = self.shared_bytes::<T>();
        if shared > props.shared_bytes_per_block_optin {
            return Err(unsupported(format!(
                "needs {shared} shared bytes per block; the device gives at most {}",
                props.shared_bytes_per_block_optin
            )));
        }
        Ok(())
    }

    /// The launch configuration for an `m x n` output: grid `ceil(n / block tile cols) x
    /// ceil(m / block tile rows)`.
    pub fn launch_config<T: Element>(
        &self,
        props: &DeviceProps,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<LaunchConfig> {
        self.check_device::<T>(props)?;
        let too_large = |reason: String| Error::ShapeTooLarge { m, n, k, reason };
        if m > MAX_DIM || n > MAX_DIM || k > MAX_DIM {
            return Err(too_large(format!(
                "each dimension must be at most {MAX_DIM}"
            )));
        }
        let (rows, cols) = self.block_tile_for(m, n);
        let (gx, gy) = match self {
            Kernel::StreamK => {
                let ctas = stream_k_ctas::<T>(props);
                let mnk = (m as u32, n as u32, k as u32);
                if !Schedule::fits(mnk, ctas) {
                    return Err(too_large(format!(
                        "stream_k counts tiles and phases in 32 bits; {m}x{n}x{k} on {ctas} blocks needs more"
                    )));
                }
                let s = Schedule::new(mnk, ctas);
                let sharing = if s.split > 0 { ctas } else { 0 };
                (s.whole as usize + sharing as usize, 1)
            }
            _ => (n.div_ceil(cols as usize), m.div_ceil(rows as usize)),
        };
        if gx > props.max_grid_dim.0 as usize || gy > props.max_grid_dim.1 as usize {
            return Err(too_large(format!(
                "needs a {gx}x{gy} grid of {rows}x{cols} block tiles; the device allows {}x{}",
                props.max_grid_dim.0, props.max_grid_dim.1
            )));
        }
        let (bx, by) = self.block();
        Ok(LaunchConfig {
            grid_dim: (gx as u32, gy as u32, 1),
            block_dim: (bx, by, 1),
            shared_mem_bytes: self.shared_bytes::<T>(),
        })
    }
}

/// Launch rule of `stream_k`: blocks resident per SM (one for f64, whose 64 accumulators
/// take ~250 registers; two for the others, which `launch_bounds` caps at 128 registers),
/// so its sharing blocks are one wave.
pub fn stream_k_blocks_per_sm<T: Element>() -> u32 {
    if T::NAME == "f64" { 1 } else { 2 }
}

/// `stream_k`'s sharing blocks: one wave of resident blocks.
pub fn stream_k_ctas<T: Element>(props: &DeviceProps) -> u32 {
    (props.multiprocessors * stream_k_blocks_per_sm::<T>()).max(1)
}

/// The second launch of `stream_k`, which adds the parts of the shared tiles, if this
/// shape has any (`None` otherwise): entry `stream_k_fixup_<output type>`, 256 threads,
/// `FIXUP_CHUNKS` blocks per split tile, no shared memory.
pub fn stream_k_fixup_config<T: Element>(
    props: &DeviceProps,
    (m, n, k): (usize, usize, usize),
) -> Option<(String, LaunchConfig, u32)> {
    let ctas = stream_k_ctas::<T>(props);
    let s = Schedule::new((m as u32, n as u32, k as u32), ctas);
    let (entry, _) = Kernel::StreamK.fixup_entry::<T>()?;
    (s.split > 0).then(|| {
        let cfg = LaunchConfig {
            grid_dim: (s.split * stream_k::FIXUP_CHUNKS, 1, 1),
            block_dim: (stream_k::FIXUP_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        (entry, cfg, ctas)
    })
}

/// Accumulators of `stream_k`'s workspace: two block tiles per block.
pub fn stream_k_workspace<T: Element>(props: &DeviceProps) -> usize {
    (stream_k::SLOTS_PER_CTA * stream_k_ctas::<T>(props)) as usize
        * (stream_k::BM * stream_k::BN) as usize
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kernel::TiledDynamic(t) => write!(f, "tiled_dyn({t})"),
            k => f.write_str(&k.family()),
        }
    }
}

/// A kernel parameter as PTX declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxParam {
    /// `.param .u64 .ptr`: a device pointer.
    Ptr,
    /// `.param .u32`
    U32,
}

/// The arguments of every GEMM entry, in order: `(a, b, c, m, n, k)`, and `tile` for the
/// `tiled_dyn_*` entries. The one place that pushes kernel arguments, so their types,
/// order and count are fixed here and checked by the compiler.
pub(crate) struct GemmArgs<'a, T: Element> {
    pub a: &'a CudaSlice<T>,
    pub b: &'a CudaSlice<T>,
    pub c: &'a mut CudaSlice<T::Out>,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub tile: Option<u32>,
    /// `stream_k`'s workspace (see [`stream_k_workspace`]) and sharing blocks
    /// ([`stream_k_ctas`]).
    pub partials: Option<(&'a mut CudaSlice<u8>, u32)>,
}

impl<T: Element> GemmArgs<'_, T> {
    pub const PTX: &'static [PtxParam] = &[
        PtxParam::Ptr,
        PtxParam::Ptr,
        PtxParam::Ptr,
        PtxParam::U32,
        PtxParam::U32,
        PtxParam::U32,
    ];
    pub const PTX_WITH_TILE: &'static [PtxParam] = &[
        PtxParam::Ptr,
        PtxParam::Ptr,
        PtxParam::Ptr,
        PtxParam::U32,
        PtxParam::U32,
        PtxParam::U32,
        PtxParam::U32,
    ];
    /// `stream_k_*`: `(a, b, c, m, n, k, partials, ctas)`.
    pub const PTX_WITH_PARTIALS: &'static [PtxParam] = &[
        PtxParam::Ptr,
        PtxParam::Ptr,
        PtxParam::Ptr,
        PtxParam::U32,
        PtxParam::U32,
        PtxParam::U32,
        PtxParam::Ptr,
        PtxParam::U32,
    ];
    /// `stream_k_fixup_*`: `(partials, c, m, n, k, ctas)`.
    pub const PTX_FIXUP: &'static [PtxParam] = &[
        PtxParam::Ptr,
        PtxParam::Ptr,
        PtxParam::U32,
        PtxParam::U32,
        PtxParam::U32,
        PtxParam::U32,
    ];

    /// Launches `func` (an entry of `kernel`) with these arguments.
    pub fn launch(
        mut self,
        stream: &CudaStream,
        func: &CudaFunction,
        kernel: Kernel,
        cfg: LaunchConfig,
    ) -> Result<()> {
        debug_assert_eq!(
            self.tile.is_some(),
            matches!(kernel, Kernel::TiledDynamic(_))
        );
        debug_assert_eq!(self.partials.is_some(), kernel == Kernel::StreamK);
        let mut builder = stream.launch_builder(func);
        builder
            .arg(self.a)
            .arg(self.b)
            .arg(&mut *self.c)
            .arg(&self.m)
            .arg(&self.n)
            .arg(&self.k);
        if let Some(tile) = &self.tile {
            builder.arg(tile);
        }
        if let Some((partials, ctas)) = &mut self.partials {
            builder.arg(&mut **partials).arg(&*ctas);
        }
        // SAFETY: the parameter list above is the entry's (checked against the PTX by the
        // test suite); buffers hold m*k, k*n and m*n elements (checked by the caller);
        // `cfg` follows `kernel`'s launch rules.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }
}

/// The arguments of `stream_k_fixup_*`: `(partials, c, m, n, k, ctas)`.
pub(crate) struct FixupArgs<'a, T: Element> {
    /// `stream_k`'s workspace: `stream_k_workspace::<T>()` accumulators.
    pub partials: &'a CudaSlice<u8>,
    pub c: &'a mut CudaSlice<T::Out>,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub ctas: u32,
}

impl<T: Element> FixupArgs<'_, T> {
    pub fn launch(self, stream: &CudaStream, func: &CudaFunction, cfg: LaunchConfig) -> Result<()> {
        let mut builder = stream.launch_builder(func);
        builder
            .arg(self.partials)
            .arg(&mut *self.c)
            .arg(&self.m)
            .arg(&self.n)
            .arg(&self.k)
            .arg(&self.ctas);
        // SAFETY: the parameter list is `PTX_FIXUP` (checked against the PTX by the test
        // suite); `partials` was written by the `stream_k` launch of `ctas` blocks for this
        // shape, queued before on the same stream; `c` holds m*n elements.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }
}
