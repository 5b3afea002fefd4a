//! The kernel catalogue on the host: the public [`Kernel`] enum, one variant per line of
//! `rgemm_kernels::for_each_kernel!`, and the launch rules that follow from each kernel's
//! [`KernelSpec`] (declared next to the kernel's code). Nothing here names a kernel: every
//! rule reads the spec, and the grid, second launch and workspace are the plan of the
//! spec's schedule (`Grid::plan`), so a new kernel brings its rules with it.
use crate::element::{Element, Output};
use crate::error::{Error, Result};
use crate::props::DeviceProps;
use cudarc::driver::LaunchConfig;
use rgemm_kernels::catalogue::{Candidate, KernelSpec, Pack, Shared, TensorMaps, Threads, Tile};
use rgemm_kernels::host_bodies::KernelId;
use rgemm_kernels::parts::schedule::plan::{FixupLaunch, Plan, PlanInput};
use rgemm_kernels::parts::wgmma::pack::{PACK_BLOCK, PACK_SHARED, Packing};
use rgemm_kernels::problem::Problem;

pub use rgemm_kernels::catalogue::{Arch, Elem, Precision};

/// Largest M, N or K: the kernels index rows and columns with 32-bit integers, and
/// `block index * tile + thread index` must not wrap.
pub const MAX_DIM: usize = i32::MAX as usize;

/// Generates [`Kernel`] from the catalogue's list.
macro_rules! kernel_enum {
    (
        fixed { $( $(#[$fdoc:meta])* $fixed:ident => $fspec:path, $fbody:expr $(, $ffix:expr)? ; )* }
        sized { $( $(#[$sdoc:meta])* $sized:ident => $sspec:path, $sbody:expr ; )* }
    ) => {
        /// Which kernel computes a product: one variant per kernel of the catalogue
        /// (`kernels-gpu/src/catalogue.rs`), each one idea of the progression in its own
        /// file. [`Kernel::spec`] gives everything rgemm knows about it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Kernel {
            $( $(#[$fdoc])* $fixed, )*
            $( $(#[$sdoc])* $sized(u32), )*
        }

        impl Kernel {
            /// Every kernel whose launch needs nothing but the shape, in the order of the
            /// progression (all but [`Kernel::TiledDynamic`], which needs a width).
            pub const FIXED: [Kernel; [$(stringify!($fixed)),*].len()] = [$(Kernel::$fixed),*];

            /// The kernel's spec: block, block tile, shared memory, module, launch bounds.
            pub fn spec(&self) -> &'static KernelSpec {
                match self {
                    $( Kernel::$fixed => &$fspec, )*
                    $( Kernel::$sized(_) => &$sspec, )*
                }
            }

            /// The tile width a sized kernel was given (`None` for the fixed ones).
            pub fn width(&self) -> Option<u32> {
                match self {
                    $( Kernel::$fixed => None, )*
                    $( Kernel::$sized(w) => Some(*w), )*
                }
            }

            /// The row of this kernel in the CPU executor's table of bodies.
            pub(crate) fn id(&self) -> KernelId {
                match self {
                    $( Kernel::$fixed => KernelId::$fixed, )*
                    $( Kernel::$sized(_) => KernelId::$sized, )*
                }
            }
        }
    };
}

rgemm_kernels::for_each_kernel!(kernel_enum);

/// The launches of one product (a second for stream-K and split-K), and its workspace.
#[derive(Clone, Copy, Debug)]
pub struct Launches {
    /// The kernel's own launch.
    pub main: LaunchConfig,
    /// A second launch that finishes the product (`stream_k`'s fix-up), where the shape
    /// needs one.
    pub fixup: Option<LaunchConfig>,
    /// A launch before the main one that packs A and B into the workspace
    /// ([`TensorMaps::pack`]): the main launch then reads them there, with
    /// [`Packing::problem`] as its problem block.
    pub pack: Option<PackLaunch>,
    /// Accumulators of scratch memory the launches use (0: none): `stream_k`'s and
    /// `decode`'s partial sums, or the two tensor maps (256 bytes) of a TMA kernel.
    pub workspace: usize,
    /// Accumulators of the workspace that must be zero at launch, from
    /// [`Launches::zeroed_from`] (the counters of a split-K in one launch; the kernel
    /// leaves them zero).
    pub zeroed: usize,
    /// Where the zeroed accumulators start: 0, or after the tensor maps (`decode_tma`).
    pub zeroed_from: usize,
    /// The problem block both launches take.
    pub problem: Problem,
}

/// A pack launch ([`Launches::pack`]): its configuration, and where it puts the packed
/// operands: [`Packing`]'s offsets from byte `at` of the workspace, which the pack launch
/// takes as its own workspace's start. `at` is 0, or where the main launch's own workspace
/// ends (a split's counters and planes after the tensor maps).
#[derive(Clone, Copy, Debug)]
pub struct PackLaunch {
    pub config: LaunchConfig,
    pub packing: Packing,
    pub at: usize,
}

impl Kernel {
    /// The entry point's name for element type `T` (C in `T`'s accumulator type), e.g.
    /// `tiled16_f32`.
    pub fn entry_name<T: Element>(&self) -> String {
        self.entry_for::<T, T::Out>()
    }

    /// The entry point's name for inputs of type `T` and C of type `O`, e.g. `tiled16_bf16`
    /// (C in f32) or `tiled16_bf16_bf16`.
    pub fn entry_for<T: Element, O: Output<T>>(&self) -> String {
        format!("{}_{}", self.spec().name, O::SUFFIX)
    }

    /// The second launch's entry point for `T` (`stream_k_fixup_f32` / `_f64`: by the
    /// accumulator type), if the kernel has one.
    pub fn fixup_entry<T: Element>(&self) -> Option<String> {
        self.fixup_entry_for::<T, T::Out>()
    }

    /// The second launch's entry point for inputs `T` and C of type `O`: a pack's by the
    /// main entry's suffix (`pack_16_bf16`); a fix-up's by the accumulator type, or
    /// `<fixup>_bf16_bf16` for a 16-bit C.
    pub fn fixup_entry_for<T: Element, O: Output<T>>(&self) -> Option<String> {
        let spec = self.spec();
        let second = spec.second_launch()?;
        Some(match O::NARROW || spec.packs() {
            true => format!("{second}_{}", O::SUFFIX),
            false => format!("{second}_{}", T::ELEM.acc().suffix()),
        })
    }

    /// Launch rule: the block shape `(x, y)`; for 2D blocks x runs along N (columns of C)
    /// and y along M.
    pub fn block(&self) -> (u32, u32) {
        match self.spec().threads {
            Threads::Fixed(x, y) => (x, y),
            Threads::Square => {
                let w = self.width().unwrap_or(0);
                (w, w)
            }
        }
    }

    /// Threads per block, without overflow.
    pub fn threads(&self) -> u64 {
        let (x, y) = self.block();
        x as u64 * y as u64
    }

    /// Launch rule: the block tile, the `rows x cols` of C one block computes, for an `m x n`
    /// C (only `thin`'s depends on the shape: 32 elements of one row when `m <= n`, else 32
    /// whole rows).
    pub fn block_tile_for(&self, m: usize, n: usize) -> (u32, u32) {
        match self.spec().tile {
            Tile::Fixed { rows, cols } => (rows, cols),
            Tile::Square => {
                let w = self.width().unwrap_or(0);
                (w, w)
            }
            Tile::Thin if m <= n => (1, 32),
            Tile::Thin => (32, n.clamp(1, u32::MAX as usize) as u32),
        }
    }

    /// Launch rule: dynamic shared bytes per block for element type `T` (tiles hold the
    /// accumulator type); 64-bit, so no width overflows it.
    pub fn shared_bytes<T: Element>(&self) -> u64 {
        let spec = self.spec();
        let elements = match spec.shared {
            Shared::None => 0,
            Shared::InputElements(e) => return e as u64 * T::ELEM.bytes() as u64,
            Shared::Stages { stages, bk, a_pad } => {
                let (rows, cols) = (spec.rows() as u64, spec.cols() as u64);
                stages as u64 * bk as u64 * (rows + a_pad as u64 + cols)
            }
            Shared::Squares { tiles } => {
                let w = self.width().unwrap_or(0) as u64;
                tiles as u64 * w * w
            }
            Shared::Elements(e) => e as u64,
        };
        elements * T::ELEM.acc_bytes() as u64
    }

    /// Whether the kernel has entry points for element type `T`.
    pub fn supports<T: Element>(&self) -> bool {
        self.spec().elements.contains(&T::ELEM)
    }

    /// Whether `matmul`'s automatic choice considers this kernel for an `m x n` C.
    pub fn is_candidate(&self, m: usize, n: usize) -> bool {
        match self.spec().candidate {
            Candidate::Never => false,
            Candidate::Always => true,
            Candidate::WhenSideAtMost(side) => m.min(n) <= side as usize,
            Candidate::WhenColumnsAtMost(cols) => n <= cols as usize,
            Candidate::WhenRowsAtMost(rows) => m <= rows as usize,
            _ => false,
        }
    }

    /// Blocks of this kernel resident per SM, as its launch bounds ask (1 without bounds):
    /// `stream_k` sizes its sharing wave with it.
    pub fn blocks_per_sm<T: Element>(&self) -> u32 {
        self.spec().min_blocks_per_sm.of(T::ELEM).unwrap_or(1)
    }

    /// Checks that `props`' device can run this kernel's block at all (for element `T`):
    /// its module, its threads, its shared memory.
    pub fn check_device<T: Element>(&self, props: &DeviceProps) -> Result<()> {
        let unsupported = |reason: String| match self.width() {
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
        let spec = self.spec();
        if self.width() == Some(0) {
            return Err(unsupported("a tile must be at least 1 wide".into()));
        }
        if !self.supports::<T>() {
            return Err(unsupported(format!("it has no {} entry point", T::NAME)));
        }
        let module = spec.arch.module();
        if !module.runs_on.admits(props.compute_capability) {
            return Err(unsupported(format!(
                "it is built for {} ({:?}); the device has compute capability {}.{}",
                module.target_cpu,
                module.runs_on,
                props.compute_capability.0,
                props.compute_capability.1
            )));
        }
        let (bx, by) = self.block();
        let threads = self.threads();
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
        if shared > props.shared_bytes_per_block_optin as u64 {
            return Err(unsupported(format!(
                "needs {shared} shared bytes per block; the device gives at most {}",
                props.shared_bytes_per_block_optin
            )));
        }
        Ok(())
    }

    /// The launch configuration for an `m x n` output (see [`Kernel::launches`]).
    pub fn launch_config<T: Element>(
        &self,
        props: &DeviceProps,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<LaunchConfig> {
        Ok(self.launches::<T>(props, (m, n, k))?.main)
    }

    /// Everything a product of this shape launches: grid `ceil(n / block tile cols) x
    /// ceil(m / block tile rows)` (stream-K: its whole tiles and one sharing wave, 1D), the
    /// second launch and workspace where the kernel has them, and the problem block. Pure
    /// arithmetic on the spec and `props`; errors before any work.
    pub fn launches<T: Element>(
        &self,
        props: &DeviceProps,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Launches> {
        let too_large = |reason: String| Error::ShapeTooLarge { m, n, k, reason };
        if m > MAX_DIM || n > MAX_DIM || k > MAX_DIM {
            self.check_device::<T>(props)?;
            return Err(too_large(format!(
                "each dimension must be at most {MAX_DIM}"
            )));
        }
        self.launches_for::<T>(props, Problem::row_major(m as u32, n as u32, k as u32))
    }

    /// The kernel that computes `problem` for this one, its A and B at addresses `(a, b)`
    /// (elements of `elem_bytes`): this one, or where TMA cannot read them the one its maps
    /// name ([`TensorMaps::otherwise`]).
    pub fn runs_as(
        &self,
        problem: &Problem,
        (a, b): (u64, u64),
        elem_bytes: usize,
    ) -> Result<Kernel> {
        match self.spec().tma.and_then(|maps| maps.otherwise) {
            Some(other)
                if !rgemm_kernels::device::tma::reads(problem, (a, b), elem_bytes as u64) =>
            {
                other.parse()
            }
            _ => Ok(*self),
        }
    }

    /// [`Kernel::runs_as`] for `problem`, and that kernel's launches
    /// ([`Kernel::launches_for`]). The device must run this kernel itself
    /// ([`Kernel::check_device`]): asking for a Hopper kernel elsewhere is an error whatever
    /// the operands' alignment.
    pub fn running<T: Element>(
        &self,
        props: &DeviceProps,
        problem: Problem,
        operands: (u64, u64),
    ) -> Result<(Kernel, Launches)> {
        self.check_device::<T>(props)?;
        let kernel = self.runs_as(&problem, operands, std::mem::size_of::<T>())?;
        Ok((kernel, kernel.launches_for::<T>(props, problem)?))
    }

    /// Whether this kernel computes `problem` as it is laid out: every kernel computes
    /// row-major, dense `C = A B`; the [`KernelSpec::strided`] ones leading dimensions,
    /// transposes and alpha/beta as well; the [`KernelSpec::b_transposed`] ones the dense
    /// product with B transposed; the [`KernelSpec::batched`] ones batches.
    /// [`Error::UnsupportedForm`] says why not.
    pub fn check_form(&self, problem: &Problem) -> Result<()> {
        let p = *problem;
        let spec = self.spec();
        let b_transposed = spec.b_transposed && p.is_dense_unscaled_b_transposed();
        let reason = if !p.is_dense_unscaled() && !spec.strided && !b_transposed {
            match spec.b_transposed {
                true => {
                    "it reads only dense operands, row-major or B transposed, and computes C = A B (no leading dimensions, other transposes, alpha or beta)"
                }
                false => {
                    "it reads only row-major, dense operands and computes C = A B (no leading dimensions, transposes, alpha or beta)"
                }
            }
        } else if p.batch > 1 && !spec.batched() {
            "it cannot run a batch in one launch (its grid is not one block per tile)"
        } else {
            return Ok(());
        };
        Err(Error::UnsupportedForm {
            kernel: self.to_string(),
            reason: reason.into(),
        })
    }

    /// [`Kernel::launches`] for a whole problem block: its shape, strides, layout, scale
    /// and batch (the grid is `batch` deep). Checks [`Kernel::check_form`] too.
    pub fn launches_for<T: Element>(
        &self,
        props: &DeviceProps,
        problem: Problem,
    ) -> Result<Launches> {
        self.check_device::<T>(props)?;
        self.check_form(&problem)?;
        let (m, n, k) = (problem.m as usize, problem.n as usize, problem.k as usize);
        let too_large = |reason: String| Error::ShapeTooLarge { m, n, k, reason };
        let batch = problem.batch.max(1);
        if batch > props.max_grid_dim.2 {
            return Err(too_large(format!(
                "a batch of {batch} needs a grid {batch} deep; the device allows {}",
                props.max_grid_dim.2
            )));
        }
        let mut problem = problem;
        problem.tile = self.width().unwrap_or(0);
        let (rows, cols) = self.block_tile_for(m, n);
        let (bx, by) = self.block();
        let spec = self.spec();
        // The tensor maps of A and B, where the kernel reads through TMA.
        let maps = match spec.tma {
            Some(_) => TensorMaps::BYTES / std::mem::size_of::<T::Out>(),
            None => 0,
        };
        let input = PlanInput {
            mnk: (m, n, k),
            batch,
            tile: (rows, cols),
            elem_bytes: std::mem::size_of::<T>(),
            sms: props.multiprocessors,
            per_sm: self.blocks_per_sm::<T>(),
            maps,
        };
        let plan = spec
            .grid
            .plan(&input)
            .map_err(|reason| too_large(format!("{self} {reason}")))?;
        let Plan {
            grid,
            ctas,
            fixup,
            mut workspace,
            zeroed: (zeroed_from, zeroed),
        } = plan;
        if let Some(ctas) = ctas {
            problem.ctas = ctas;
        }
        let fixup = fixup.map(|FixupLaunch { blocks, threads }| LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        });
        let pack = match spec.tma {
            Some(TensorMaps {
                pack: Some(how), ..
            }) => {
                // The packed operands after what the main launch keeps past its maps (a
                // split's counters and planes), on 256-byte lines; at the start otherwise.
                let unit = std::mem::size_of::<T::Out>();
                let at = match workspace > maps {
                    true => (workspace * unit).next_multiple_of(256),
                    false => 0,
                };
                let pack = self.pack_launch(props, &problem, how, at)?;
                workspace = (at + pack.packing.bytes).div_ceil(unit);
                Some(pack)
            }
            _ => None,
        };
        if grid.0 > props.max_grid_dim.0 as usize || grid.1 > props.max_grid_dim.1 as usize {
            return Err(too_large(format!(
                "needs a {}x{} grid of {rows}x{cols} block tiles; the device allows {}x{}",
                grid.0, grid.1, props.max_grid_dim.0, props.max_grid_dim.1
            )));
        }
        let main = LaunchConfig {
            grid_dim: (grid.0 as u32, grid.1 as u32, grid.2),
            block_dim: (bx, by, 1),
            shared_mem_bytes: self.shared_bytes::<T>() as u32, // checked by check_device
        };
        Ok(Launches {
            main,
            fixup,
            pack,
            workspace,
            zeroed,
            zeroed_from,
            problem,
        })
    }

    /// The pre-launch step of a kernel that packs its operands ([`TensorMaps::pack`]): the
    /// pack launch for `problem`, on its largest grid (A packed too), its packed operands
    /// from byte `at` of the workspace ([`PackLaunch::at`]).
    fn pack_launch(
        &self,
        props: &DeviceProps,
        problem: &Problem,
        how: Pack,
        at: usize,
    ) -> Result<PackLaunch> {
        let packing = Packing::of(problem, how.parts, how.width);
        let (x, y, z) = packing.grid(problem, false);
        if x > props.max_grid_dim.0 || y > props.max_grid_dim.1 {
            let (m, n, k) = (problem.m as usize, problem.n as usize, problem.k as usize);
            return Err(Error::ShapeTooLarge {
                m,
                n,
                k,
                reason: format!(
                    "{self} packs its operands on a {x}x{y} grid; the device allows {}x{}",
                    props.max_grid_dim.0, props.max_grid_dim.1
                ),
            });
        }
        let config = LaunchConfig {
            grid_dim: (x, y, z),
            block_dim: (PACK_BLOCK.0, PACK_BLOCK.1, 1),
            shared_mem_bytes: PACK_SHARED * how.parts,
        };
        Ok(PackLaunch {
            config,
            packing,
            at,
        })
    }
}

impl Launches {
    /// Where the pack launch's workspace starts in the product's (bytes): 0 without one.
    pub(crate) fn pack_at(&self) -> usize {
        self.pack.map_or(0, |pack| pack.at)
    }

    /// The main launch's A, B and problem block, given the caller's A and B (`pa`, `pb`) and
    /// the workspace's address: the packed operands and [`Packing::problem`] where a pack
    /// launch runs first (the caller's A where it is read in place,
    /// [`Packing::a_in_place`]), else the caller's and [`Launches::problem`].
    pub(crate) fn main_operands(
        &self,
        (pa, pb): (u64, u64),
        workspace: u64,
    ) -> ((u64, u64), Problem) {
        match self.pack {
            Some(PackLaunch { packing, at, .. }) => {
                let at = |offset: usize| workspace + (at + offset) as u64;
                let in_place = packing.a_in_place(&self.problem, pa);
                let a = if in_place { pa } else { at(packing.a_at) };
                (
                    (a, at(packing.b_at)),
                    packing.problem(&self.problem, in_place),
                )
            }
            None => ((pa, pb), self.problem),
        }
    }

    /// The pack launch's configuration for the caller's A at `pa`, where there is one: its
    /// grid leaves A's blocks out where the main launch reads A in place.
    pub(crate) fn pack_config(&self, pa: u64) -> Option<LaunchConfig> {
        let PackLaunch {
            config, packing, ..
        } = self.pack?;
        let in_place = packing.a_in_place(&self.problem, pa);
        let grid_dim = packing.grid(&self.problem, in_place);
        // (No B^T rows and A in place: nothing to pack.)
        (grid_dim.1 > 0).then_some(LaunchConfig { grid_dim, ..config })
    }
}

/// A kernel by the name [`Kernel`]'s `Display` gives it: `paired_lanes`, `tiled_dyn(12)`.
impl std::str::FromStr for Kernel {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        let width = name
            .strip_prefix("tiled_dyn(")
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|w| w.parse().ok());
        if let Some(w) = width {
            return Ok(Kernel::TiledDynamic(w));
        }
        Kernel::FIXED
            .into_iter()
            .find(|k| k.spec().name == name)
            .ok_or_else(|| Error::UnsupportedKernel {
                kernel: name.into(),
                device: "any".into(),
                reason: "no kernel has this name".into(),
            })
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.width() {
            Some(w) => write!(f, "{}({w})", self.spec().name),
            None => f.write_str(self.spec().name),
        }
    }
}

/// A kernel parameter as PTX declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxParam {
    /// `.param .u64 .ptr`: a device pointer.
    Ptr,
    /// `.param .align A .b8 name[BYTES]`: a by-value struct.
    Block { align: u32, bytes: u32 },
}

/// The parameters of every entry point: `(a, b, c, workspace, problem)`.
pub const ENTRY_PARAMS: [PtxParam; 5] = [
    PtxParam::Ptr,
    PtxParam::Ptr,
    PtxParam::Ptr,
    PtxParam::Ptr,
    PtxParam::Block {
        align: std::mem::align_of::<Problem>() as u32,
        bytes: std::mem::size_of::<Problem>() as u32,
    },
];
