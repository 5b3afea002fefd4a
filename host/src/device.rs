//! [`Device`]: what a context holds on its GPU: the CUDA context and stream, the PTX
//! modules and the kernels made ready from them, the workspace and the table of a batch of
//! views; and the one place that queues a kernel's launches on that stream.
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::kernels::{Arch, Kernel, Launches};
use crate::occupancy::{BlockResources, Occupancy};
use crate::props::DeviceProps;
use cudarc::driver::sys::CUfunction_attribute as FuncAttr;
use cudarc::driver::sys::cudaError_enum as CuResult;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use rgemm_kernels::catalogue::TensorMaps;
use rgemm_kernels::problem::Problem;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

/// Number of CUDA devices, or why there are none usable: [`Error::NoDriver`] when the
/// driver library cannot be loaded. Never panics.
pub fn device_count() -> Result<usize> {
    if !crate::library::present(&["cuda", "nvcuda"]) {
        return Err(Error::NoDriver(
            "libcuda.so could not be loaded (is the NVIDIA driver installed?)".into(),
        ));
    }
    match CudaContext::device_count() {
        Ok(n) => Ok(n.max(0) as usize),
        Err(e) if e.0 == CuResult::CUDA_ERROR_NO_DEVICE => Ok(0),
        Err(e) => Err(Error::NoDriver(format!(
            "the driver did not initialise: {e}"
        ))),
    }
}

/// A kernel made ready for one element type on this device, once: its functions loaded
/// (module included), its shared-memory limit raised where it needs more than the default,
/// its occupancy computed. Later launches of it make no driver queries.
#[derive(Debug)]
pub(crate) struct Resolved {
    pub(crate) entry: String,
    pub(crate) main: CudaFunction,
    /// The second launch's function (`stream_k`'s fix-up).
    fixup: Option<CudaFunction>,
    pub(crate) occupancy: Occupancy,
    /// Blocks of a cluster (1: the kernel has none).
    cluster: u32,
    /// Clusters of the kernel resident at once on the device (`cuOccupancyMaxActiveClusters`;
    /// 0 for a kernel without clusters): a persistent grid of clusters launches at most
    /// these.
    clusters: u32,
}

impl Resolved {
    /// The main launch `cfg` of a persistent grid of clusters launching no more clusters
    /// than are resident at once (its blocks walk the rest); `cfg` for any other kernel.
    pub(crate) fn clustered(&self, cfg: &LaunchConfig) -> LaunchConfig {
        match self.cluster {
            1 => *cfg,
            blocks => LaunchConfig {
                grid_dim: (
                    cfg.grid_dim.0.min(blocks * self.clusters),
                    cfg.grid_dim.1,
                    cfg.grid_dim.2,
                ),
                ..*cfg
            },
        }
    }
}

/// Kernels made ready, per (kernel, entry suffix), shared by the contexts of one device.
type ResolvedCache = Arc<Mutex<HashMap<(Kernel, &'static str), Arc<Resolved>>>>;

/// The launch attribute of clusters of `blocks` blocks along x.
fn cluster_dimension(blocks: u32) -> cudarc::driver::sys::CUlaunchAttribute {
    use cudarc::driver::sys;
    let mut dims = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        // SAFETY: plain data, all-zero valid; the cluster's dimensions are set below.
        value: unsafe { std::mem::zeroed() },
    };
    dims.value.clusterDim.x = blocks;
    dims.value.clusterDim.y = 1;
    dims.value.clusterDim.z = 1;
    dims
}

/// The problem block as a kernel parameter (passed by value: the driver copies its bytes).
#[repr(transparent)]
struct ProblemArg(Problem);

// SAFETY: `Problem` is `#[repr(C)]` plain data, laid out as the kernels declare it (the PTX
// test checks its size and alignment against every entry point).
unsafe impl DeviceRepr for ProblemArg {}

/// One device as a context uses it. The modules and ready kernels are shared with the
/// contexts forked from it; the stream, workspace and table are its own.
pub(crate) struct Device {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) props: DeviceProps,
    /// The entry points' modules (each entry alone, see `ptx::entry`), loaded on first use.
    modules: Arc<Mutex<HashMap<String, Arc<CudaModule>>>>,
    /// Kernels made ready per (kernel, entry suffix: input and output types).
    resolved: ResolvedCache,
    /// Scratch memory for kernels that need it (partial sums, tensor maps).
    workspace: Mutex<Workspace>,
    /// The table of a batch of views ([`Problem::batch_table`]), grown as needed.
    table: Mutex<Option<CudaSlice<u64>>>,
}

/// The device's scratch memory: `stream_k`'s partial sums, or the tensor maps of a TMA
/// kernel (which stay there while the next products use the same ones).
#[derive(Default)]
struct Workspace {
    buf: Option<CudaSlice<u8>>,
    maps: Option<[u8; TensorMaps::BYTES]>,
    /// Bytes known to be zero: the last split-K product's counters, which it leaves zero
    /// (`decode_async`, `decode_mma`, `few_columns`; `decode_tma`'s after its maps).
    zero: Range<usize>,
}

impl Workspace {
    /// The buffer, grown to at least `bytes` (never shrunk: an allocation per product cost
    /// 60-80 us on an H200, the stream-ordered pool handing its memory back at each
    /// synchronisation), with `maps` at its start where given: copied only when they are
    /// not what it already holds, and its bytes `zeroed` zero: set only when another use
    /// may have left something else there.
    fn ready(
        &mut self,
        stream: &Arc<CudaStream>,
        bytes: usize,
        maps: impl FnOnce(u64) -> Result<Option<[u8; TensorMaps::BYTES]>>,
        zeroed: Range<usize>,
    ) -> Result<&mut CudaSlice<u8>> {
        if self.buf.as_ref().is_none_or(|w| w.len() < bytes) {
            // Drop the old buffer first (its free is stream-ordered after its last use).
            self.buf = None;
            self.maps = None;
            self.zero = 0..0;
            // SAFETY: uninitialised bytes are never read: the kernels read only what they
            // wrote in the same product, plus the counters and tensor maps set below.
            self.buf = Some(unsafe { stream.alloc::<u8>(bytes.max(TensorMaps::BYTES)) }?);
        }
        let buf = self.buf.as_mut().expect("just set");
        let maps = maps(buf.device_ptr(stream).0)?;
        if zeroed.is_empty() {
            self.zero = 0..0;
        } else {
            let known = self.zero.start <= zeroed.start && zeroed.end <= self.zero.end;
            if !known {
                stream.memset_zeros(&mut buf.slice_mut(zeroed.clone()))?;
                if zeroed.start < TensorMaps::BYTES {
                    self.maps = None; // zeroed over
                }
            }
            // The kernel leaves its own counters zero, but writes its planes right after
            // them: bytes a larger set of counters took before are zero no longer.
            self.zero = zeroed;
        }
        match maps {
            Some(maps) if self.maps != Some(maps) => {
                stream.memcpy_htod(&maps[..], &mut buf.slice_mut(..TensorMaps::BYTES))?;
                self.maps = Some(maps);
            }
            Some(_) => {}
            // Anything else may overwrite them.
            None => self.maps = None,
        }
        Ok(buf)
    }
}

impl Device {
    /// Device `ordinal` with a non-blocking stream of its own.
    pub(crate) fn open(ordinal: usize) -> Result<Self> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal)?;
        // SAFETY: every buffer of this context is allocated, used and freed on its one
        // stream, in order, so cudarc's per-buffer events (a record and a wait per buffer per
        // launch, host time inside a timed product) order nothing; a caller who hands a
        // buffer to another stream synchronizes first (see `Context`'s documentation).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream()?;
        Self::from_cudarc(ctx, stream)
    }

    /// An existing cudarc context and a stream of it.
    pub(crate) fn from_cudarc(ctx: Arc<CudaContext>, stream: Arc<CudaStream>) -> Result<Self> {
        if !Arc::ptr_eq(stream.context(), &ctx) {
            return Err(Error::ForeignStream);
        }
        let props = DeviceProps::query(&ctx)?;
        Ok(Self {
            ctx,
            stream,
            props,
            modules: Default::default(),
            resolved: Default::default(),
            workspace: Default::default(),
            table: Default::default(),
        })
    }

    /// The same device on another stream of it, sharing the loaded kernels.
    pub(crate) fn on_stream(&self, stream: Arc<CudaStream>) -> Result<Self> {
        if !Arc::ptr_eq(stream.context(), &self.ctx) {
            return Err(Error::ForeignStream);
        }
        Ok(Self {
            ctx: self.ctx.clone(),
            stream,
            props: self.props.clone(),
            modules: self.modules.clone(),
            resolved: self.resolved.clone(),
            workspace: Default::default(),
            table: Default::default(),
        })
    }

    /// [`Error::ForeignMatrix`] unless a buffer of `owner` is this device's to use.
    pub(crate) fn check_owner(&self, owner: &Arc<CudaContext>) -> Result<()> {
        if Arc::ptr_eq(owner, &self.ctx) {
            Ok(())
        } else {
            Err(Error::ForeignMatrix)
        }
    }

    /// `kernel` for `T`, made ready on first use (see [`Resolved`]); checks that this device
    /// can run it.
    pub(crate) fn resolve<T: Element, O: Output<T>>(
        &self,
        kernel: Kernel,
    ) -> Result<Arc<Resolved>> {
        let key = (kernel, O::SUFFIX);
        if let Some(ready) = self
            .resolved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(ready.clone());
        }
        kernel.check_device::<T>(&self.props)?;
        let arch = kernel.spec().arch;
        let entry = kernel.entry_for::<T, O>();
        let main = self.module(arch, &entry)?.load_function(&entry)?;
        let fixup = match kernel.fixup_entry_for::<T, O>() {
            Some(name) => Some(self.module(arch, &name)?.load_function(&name)?),
            None => None,
        };
        // Checked against the device's limit by `check_device`.
        let shared = kernel.shared_bytes::<T>() as u32;
        // Beyond the default 48 KiB a kernel must opt in to its dynamic shared memory.
        if shared > self.props.shared_bytes_per_block {
            main.set_attribute(
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )?;
        }
        let static_shared = main.get_attribute(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let registers = main.get_attribute(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?;
        let resources = BlockResources {
            threads: kernel.threads() as u32, // at most the device's limit: checked above
            shared_bytes: shared + static_shared.max(0) as u32,
            registers_per_thread: registers.max(0) as u32,
        };
        let cluster = kernel.spec().cluster();
        let clusters = match cluster {
            1 => 0,
            _ => {
                let cfg = LaunchConfig {
                    grid_dim: (cluster * self.props.multiprocessors, 1, 1),
                    block_dim: (kernel.threads() as u32, 1, 1),
                    shared_mem_bytes: shared,
                };
                let mut dims = cluster_dimension(cluster);
                let config = self.cluster_config(cfg, &mut dims);
                let mut clusters = 0;
                // SAFETY: `config` and its one attribute are alive across the call; `main`
                // is a function of this context.
                unsafe {
                    cudarc::driver::sys::cuOccupancyMaxActiveClusters(
                        &mut clusters,
                        main.cu_function(),
                        &config,
                    )
                }
                .result()?;
                if clusters < 1 {
                    return Err(Error::UnsupportedKernel {
                        kernel: kernel.to_string(),
                        device: self.props.name.clone(),
                        reason: format!("the device holds no cluster of {cluster} of its blocks"),
                    });
                }
                clusters as u32
            }
        };
        let ready = Arc::new(Resolved {
            entry,
            main,
            fixup,
            occupancy: Occupancy::compute(&self.props, resources),
            cluster,
            clusters,
        });
        let mut cache = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        Ok(cache.entry(key).or_insert(ready).clone())
    }

    /// The module of entry point `name` of `arch`'s PTX, loaded on first use. The lock is
    /// held while the driver compiles it, so that no two threads compile one entry.
    fn module(&self, arch: Arch, name: &str) -> Result<Arc<CudaModule>> {
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(module) = modules.get(name) {
            return Ok(module.clone());
        }
        let text = crate::ptx::entry(arch, name).ok_or_else(|| Error::UnsupportedKernel {
            kernel: name.to_string(),
            device: self.props.name.clone(),
            reason: format!("this build's {arch:?} module has no such entry point"),
        })?;
        let module = self.ctx.load_module(Ptx::from_src(text))?;
        Ok(modules.entry(name.to_string()).or_insert(module).clone())
    }

    /// Copies a batch's table ([`Problem::batch_table`]) to the device, on the stream, and
    /// returns its address and the lock on it: held until the product's launch is queued,
    /// so that another thread's table cannot be copied over it before (later copies queue
    /// after the launch on the same stream).
    pub(crate) fn upload_table(
        &self,
        entries: &[u64],
    ) -> Result<(u64, MutexGuard<'_, Option<CudaSlice<u64>>>)> {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if table.as_ref().is_none_or(|t| t.len() < entries.len()) {
            // The old one's free is stream-ordered after its last use.
            *table = None;
            *table = Some(self.stream.alloc_zeros::<u64>(entries.len())?);
        }
        let buf = table.as_mut().expect("just set");
        self.stream
            .memcpy_htod(entries, &mut buf.slice_mut(..entries.len()))?;
        let at = buf.device_ptr(&self.stream).0;
        Ok((at, table))
    }

    /// Queues `func` launched as `cfg` says in clusters of `cluster` blocks along x
    /// (`cuLaunchKernelEx` with the cluster dimension; cudarc's launch builder has no
    /// clusters), with the parameters `(a, b, c, workspace, problem)`.
    ///
    /// # Safety
    /// As [`cudarc::driver::LaunchArgs::launch`]: the addresses hold what `problem` reads and
    /// writes, and nothing else uses them until the launch is done; `cfg`'s grid x is a
    /// multiple of `cluster`, and the kernel's spec asks for these clusters.
    unsafe fn launch_clusters(
        &self,
        func: &CudaFunction,
        cfg: LaunchConfig,
        cluster: u32,
        (a, b, c, workspace): (u64, u64, u64, u64),
        problem: Problem,
    ) -> Result<()> {
        let mut problem = problem;
        let (mut a, mut b, mut c, mut workspace) = (a, b, c, workspace);
        let mut params: [*mut std::ffi::c_void; 5] = [
            (&raw mut a).cast(),
            (&raw mut b).cast(),
            (&raw mut c).cast(),
            (&raw mut workspace).cast(),
            (&raw mut problem).cast(),
        ];
        let mut dims = cluster_dimension(cluster);
        let config = self.cluster_config(cfg, &mut dims);
        self.ctx.bind_to_thread()?;
        // SAFETY: `params` points to the five parameters every entry takes, alive across
        // the call (the driver copies them), `config` to its attribute; the rest is this
        // function's contract.
        unsafe {
            cudarc::driver::sys::cuLaunchKernelEx(
                &config,
                func.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()?;
        Ok(())
    }

    /// The driver's launch configuration of `cfg` on this device's stream, with the one
    /// attribute `dims` (which must outlive its use).
    fn cluster_config(
        &self,
        cfg: LaunchConfig,
        dims: &mut cudarc::driver::sys::CUlaunchAttribute,
    ) -> cudarc::driver::sys::CUlaunchConfig {
        cudarc::driver::sys::CUlaunchConfig {
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            hStream: self.stream.cu_stream(),
            attrs: dims,
            numAttrs: 1,
        }
    }

    /// Queues the launches of one product whose A, B and C start at device addresses
    /// `(pa, pb, pc)`.
    ///
    /// # Safety
    /// The addresses hold what `launches.problem` reads and writes there (every product of
    /// its batch), of types `T`, `T` and `O`, and nothing else uses C's elements meanwhile.
    pub(crate) unsafe fn launch_at<T: Element>(
        &self,
        kernel: Kernel,
        (pa, pb, pc): (u64, u64, u64),
        ready: &Resolved,
        launches: &Launches,
    ) -> Result<()> {
        // A packing kernel's main launch reads the packed operands, as its own problem says.
        let elem = std::mem::size_of::<T>();
        let maps = |base: u64| match kernel.spec().tma {
            Some(maps) => {
                let (operands, problem) = launches.main_operands((pa, pb), base);
                match crate::tma::device_maps(maps, operands, &problem, elem)? {
                    // (`runs_as` chose the other kernel wherever the offsets say this; a
                    // buffer that starts off 256 bytes would reach here.)
                    None if maps.otherwise.is_some() => Err(Error::UnsupportedForm {
                        kernel: kernel.to_string(),
                        reason: "it reads A and B only through tensor maps, and TMA cannot read these operands".into(),
                    }),
                    made => Ok(made),
                }
            }
            None => Ok(None),
        };
        // Held until every launch is queued; later users of it queue after them on the same
        // stream, so they cannot overwrite it early.
        let mut workspace = (launches.workspace > 0)
            .then(|| self.workspace.lock().unwrap_or_else(|e| e.into_inner()));
        let bytes = launches.workspace * std::mem::size_of::<T::Out>();
        let unit = std::mem::size_of::<T::Out>();
        let zeroed = launches.zeroed_from * unit..(launches.zeroed_from + launches.zeroed) * unit;
        let mut scratch = match &mut workspace {
            Some(workspace) => Some(workspace.ready(&self.stream, bytes, maps, zeroed)?),
            None => None,
        };
        let base = match scratch.as_deref() {
            Some(scratch) => scratch.device_ptr(&self.stream).0,
            None => 0,
        };
        let ((ka, kb), main_problem) = launches.main_operands((pa, pb), base);
        let null = 0u64;
        // The pack launch's workspace starts where its packed operands' offsets count from.
        let pack_at = base + launches.pack_at() as u64;
        let mut queue = |func: &CudaFunction,
                         cfg: LaunchConfig,
                         (pa, pb): (u64, u64),
                         problem: Problem,
                         packs: bool|
         -> Result<()> {
            // The main launch of a kernel in clusters (its pack or fix-up has none).
            if ready.cluster > 1 && std::ptr::eq(func, &ready.main) {
                // SAFETY: as `launch` below; the spec asks for these clusters, and its plan
                // (`Grid::PersistentPairs`) makes the grid's x a multiple of them.
                return unsafe {
                    self.launch_clusters(
                        func,
                        ready.clustered(&cfg),
                        ready.cluster,
                        (pa, pb, pc, base),
                        problem,
                    )
                };
            }
            let problem = ProblemArg(problem);
            let mut builder = self.stream.launch_builder(func);
            builder.arg(&pa).arg(&pb).arg(&pc);
            match scratch.as_deref_mut() {
                Some(_) if packs => builder.arg(&pack_at),
                Some(scratch) => builder.arg(scratch),
                None => builder.arg(&null),
            };
            builder.arg(&problem);
            // SAFETY: every entry takes `(a, b, c, workspace, problem)` (checked against
            // the PTX by the test suite); the addresses hold what the problem reads and
            // writes (the caller's promise), the workspace what `launches` asks for; `cfg`
            // comes from the kernel's spec.
            unsafe { builder.launch(cfg) }?;
            Ok(())
        };
        if let (Some(config), Some(func)) = (launches.pack_config(pa), &ready.fixup) {
            queue(func, config, (pa, pb), launches.problem, true)?;
        }
        queue(&ready.main, launches.main, (ka, kb), main_problem, false)?;
        if let (Some(cfg), Some(func)) = (launches.fixup, &ready.fixup) {
            queue(func, cfg, (pa, pb), launches.problem, false)?;
        }
        Ok(())
    }
}
