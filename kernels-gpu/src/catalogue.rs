//! The kernel catalogue: one [`KernelSpec`] per kernel, declared next to its code, and one
//! list, [`for_each_kernel!`](crate::for_each_kernel!), that everything else reads: the host's launch rules and its
//! public `Kernel` enum, the CPU executor's dispatch, the build script (which module holds
//! which entry points, launch bounds), the tests, the benchmark and the README's table.
//!
//! Adding a kernel: write its file under `kernels/<family>/` (spec, body composed of
//! [`parts`](crate::parts), entry points), add it to its family's `mod.rs`, and add one line
//! to [`for_each_kernel!`](crate::for_each_kernel!). Every field of a spec is required (there is no
//! `Default`), so a kernel missing a fact does not compile.

/// The PTX module families, lowest first. A kernel lives in exactly the module of its
/// [`KernelSpec::arch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Arch {
    /// Plain SIMT code: PTX for sm_70, which the driver compiles for any newer GPU.
    Sm70,
    /// `cp.async` (and later `mma.sync`, `ldmatrix`): compute capability 8.0 and newer.
    Sm80,
    /// Hopper's arch-specific instructions (`wgmma`, `setmaxnreg`): runs on exactly 9.0.
    Sm90a,
}

/// Which devices can load a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunsOn {
    AtLeast(u32, u32),
    /// Arch-specific PTX (`sm_90a`) runs on this compute capability only.
    Exactly(u32, u32),
}

impl RunsOn {
    pub const fn admits(self, cc: (u32, u32)) -> bool {
        match self {
            RunsOn::AtLeast(major, minor) => cc.0 > major || (cc.0 == major && cc.1 >= minor),
            RunsOn::Exactly(major, minor) => cc.0 == major && cc.1 == minor,
        }
    }
}

/// One PTX module: how the build script makes it and which devices load it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Module {
    pub arch: Arch,
    /// `-C target-cpu` of the kernel build (and `llc -mcpu`).
    pub target_cpu: &'static str,
    /// PTX ISA version the module needs beyond the target's default (`llc -mattr=+ptxNN`).
    pub ptx_isa: Option<&'static str>,
    pub runs_on: RunsOn,
}

/// Every module, one per [`Arch`], in the order of [`Arch`].
pub const MODULES: [Module; 3] = [
    Module {
        arch: Arch::Sm70,
        target_cpu: "sm_70",
        ptx_isa: None,
        runs_on: RunsOn::AtLeast(7, 0),
    },
    Module {
        arch: Arch::Sm80,
        target_cpu: "sm_80",
        ptx_isa: None,
        runs_on: RunsOn::AtLeast(8, 0),
    },
    Module {
        arch: Arch::Sm90a,
        target_cpu: "sm_90a",
        ptx_isa: Some("ptx80"),
        runs_on: RunsOn::Exactly(9, 0),
    },
];

impl Arch {
    pub const fn module(self) -> &'static Module {
        &MODULES[self as usize]
    }
}

/// The element types of A and B, by the suffix of their entry points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Elem {
    F32,
    F64,
    F16,
    Bf16,
}

impl Elem {
    pub const ALL: [Elem; 4] = [Elem::F32, Elem::F64, Elem::F16, Elem::Bf16];

    /// The entry-point suffix: `f32`, `f64`, `f16`, `bf16`.
    pub const fn suffix(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
        }
    }

    /// The suffix of the entry points that write C in this (16-bit) type: `f16_f16`,
    /// `bf16_bf16`; `None` for f32 and f64, whose C is their accumulator.
    pub const fn narrow_suffix(self) -> Option<&'static str> {
        match self {
            Elem::F16 => Some("f16_f16"),
            Elem::Bf16 => Some("bf16_bf16"),
            Elem::F32 | Elem::F64 => None,
        }
    }

    /// The accumulator (and default output) type: f64 for f64, f32 for the others.
    pub const fn acc(self) -> Elem {
        match self {
            Elem::F64 => Elem::F64,
            Elem::F32 | Elem::F16 | Elem::Bf16 => Elem::F32,
        }
    }

    /// Bytes of the element type.
    pub const fn bytes(self) -> u32 {
        match self {
            Elem::F64 => 8,
            Elem::F32 => 4,
            Elem::F16 | Elem::Bf16 => 2,
        }
    }

    /// Bytes of the accumulator type.
    pub const fn acc_bytes(self) -> u32 {
        match self.acc() {
            Elem::F64 => 8,
            _ => 4,
        }
    }
}

/// The block's threads, `(x, y)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    Fixed(u32, u32),
    /// `tile x tile`, the tile width given at launch (`Problem::tile`).
    Square,
}

/// The block tile: the `rows x cols` of C one block computes. The grid is `ceil(n / cols)
/// x ceil(m / rows)` blocks unless [`Grid`] says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tile {
    Fixed {
        rows: u32,
        cols: u32,
    },
    /// `tile x tile`, the width given at launch.
    Square,
    /// `thin`: 32 elements of one row when C has no more rows than columns (`m <= n`), else
    /// 32 whole rows.
    Thin,
}

/// How the grid follows from the shape: the kernel's schedule, which plans the launch
/// (`Grid::plan`, in `parts/schedule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grid {
    /// One block per block tile, 2D.
    Tiles,
    /// Stream-K: one block per tile of the whole waves, then one wave of blocks sharing the
    /// phases of the tiles left over (1D), whose parts the `fixup` entry points
    /// (`<fixup>_<accumulator>`) add; a workspace of partial sums.
    StreamK { fixup: &'static str },
    /// Split-K: `ceil(n / cols)` column strips by `splits` slices of K (`Problem::ctas`,
    /// from the shape and the SM count, [`crate::parts::schedule::split_k_fixup::splits`]),
    /// 2D; with more than one slice a workspace of `splits` planes of C and a second launch
    /// (`<fixup>_<accumulator>`, `ceil(m n / 256)` blocks of 256 threads) that adds them.
    SplitK { fixup: &'static str },
    /// Split-K in one launch: the grid of [`Grid::SplitK`] (its slices planned for `per_sm`
    /// blocks resident per SM, [`crate::parts::schedule::decode_split::splits`]), and a workspace of counters
    /// (one per strip and pass, zero at launch and left zero) then `splits` planes of C,
    /// after the tensor maps where the kernel has them; the last block of each strip to
    /// finish adds the planes in K order.
    SplitKLastBlock { per_sm: u32 },
    /// Split-K over strips of whole block tiles, in one launch: `ceil(m / rows) ceil(n /
    /// cols)` strips (x, row strips first) by `splits` slices of K (y, `Problem::ctas`, from
    /// [`crate::parts::schedule::split_k_strips::splits`]), and the workspace of
    /// [`Grid::SplitKLastBlock`] with one counter per strip.
    SplitKStrips,
    /// Persistent: one block per SM (as many as fit, at most one per tile), 1D, each block
    /// looping over the tiles `blockIdx.x, + gridDim.x, ...` in the kernel's own order.
    Persistent,
    /// [`Grid::Persistent`] with the tiles of its last, partial wave (all of them where they
    /// fill less than one) cut into slices of K (`Problem::ctas`, from
    /// [`crate::parts::schedule::split_tail::splits`]), as many blocks as take one each; a
    /// workspace of counters (one per split tile and consumer warp, zero at launch and left
    /// zero) and the slices' planes after the tensor maps; the last warp of each tile's slices
    /// to finish adds them in K order.
    PersistentSplit,
    /// [`Grid::Persistent`] in clusters of two blocks (2 x 1 x 1), each cluster looping over
    /// pairs of tiles one above the other, rank `r` computing the tile `r` rows of tiles
    /// down: as many clusters as are resident at once, at most one per pair.
    PersistentPairs,
    /// [`Grid::Persistent`] in clusters of four blocks (4 x 1 x 1), each cluster looping over
    /// squares of 2 x 2 tiles, rank `r` computing the tile `r % 2` rows and `r / 2` columns
    /// of tiles in: as many clusters as are resident at once, at most one per square.
    PersistentQuads,
}

/// Dynamic shared memory per block, in elements of the accumulator type unless said otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    None,
    /// Elements of the input type (tiles kept as they are loaded, for the tensor cores).
    InputElements(u32),
    /// `stages` stages of A^T (`bk x (rows + a_pad)`) and B (`bk x cols`) for the block tile.
    Stages {
        stages: u32,
        bk: u32,
        a_pad: u32,
    },
    /// `tiles` square tiles of the launch's tile width.
    Squares {
        tiles: u32,
    },
    Elements(u32),
}

impl Shared {
    /// `stages` unpadded stages of `bk` K steps.
    pub const fn stages(stages: u32, bk: u32) -> Shared {
        Shared::Stages {
            stages,
            bk,
            a_pad: 0,
        }
    }
}

/// Whether `matmul`'s automatic choice considers the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Candidate {
    Never,
    Always,
    /// Only where C has at most this many rows or columns.
    WhenSideAtMost(u32),
    /// Only where C has at most this many columns.
    WhenColumnsAtMost(u32),
    /// Only where C has at most this many rows.
    WhenRowsAtMost(u32),
}

/// A value per accumulator type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerAcc<T> {
    pub f32: T,
    pub f64: T,
}

impl PerAcc<Option<u32>> {
    /// No launch bounds.
    pub const NONE: Self = PerAcc {
        f32: None,
        f64: None,
    };
}

impl<T: Copy> PerAcc<T> {
    pub const fn of(&self, elem: Elem) -> T {
        match elem.acc() {
            Elem::F64 => self.f64,
            _ => self.f32,
        }
    }
}

/// Everything rgemm knows about a kernel, in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    /// The entry points' family name: entry `<name>_<element>`, e.g. `tiled16_f32`.
    pub name: &'static str,
    /// The kernel's source file.
    pub file: &'static str,
    /// One line: the idea this kernel adds (the README's table).
    pub idea: &'static str,
    /// The module it is built into, which decides the devices that can run it.
    pub arch: Arch,
    pub threads: Threads,
    pub tile: Tile,
    pub grid: Grid,
    pub shared: Shared,
    /// Launch bounds (CUDA's `__launch_bounds__(threads, min blocks)`), per accumulator type:
    /// `Some(min blocks per SM)` writes `.maxntid` and `.minnctapersm` into the PTX.
    pub min_blocks_per_sm: PerAcc<Option<u32>>,
    /// The element types it has entry points for.
    pub elements: &'static [Elem],
    pub candidate: Candidate,
    /// Whether the CPU executor runs it.
    pub cpu: bool,
    /// Whether it multiplies on the tensor cores, whose additions are not IEEE's
    /// round-to-nearest in a documented order: its results agree with the CPU executor's
    /// within tolerance, not bit for bit.
    pub tensor_cores: bool,
    /// Inputs read through TMA tensor maps (see [`TensorMaps`]).
    pub tma: Option<TensorMaps>,
    /// The arithmetic its f32 entries multiply in: FP32 ([`Precision::Exact`]) for every
    /// kernel `matmul` chooses by itself; TF32 only where the caller asks for it.
    pub precision: Precision,
    /// Whether it reads the general product of [`Problem`](crate::problem::Problem):
    /// leading dimensions, transposed A or B, `alpha` and `beta` ([`Strides`],
    /// [`Scale`]); the others compute row-major, dense `C = A B` only.
    ///
    /// [`Strides`]: crate::problem::Strides
    /// [`Scale`]: crate::problem::Scale
    pub strided: bool,
    /// Whether, besides the plain product, it reads the dense product with B transposed
    /// ([`Problem::is_dense_unscaled_b_transposed`]: B stored `n x k`, as PyTorch stores a
    /// layer's weight). A [`KernelSpec::strided`] kernel reads it anyway.
    ///
    /// [`Problem::is_dense_unscaled_b_transposed`]: crate::problem::Problem::is_dense_unscaled_b_transposed
    pub b_transposed: bool,
    /// What its PTX must show ([`PtxFacts`]), checked against the built modules by one test
    /// that walks the catalogue.
    pub ptx: &'static [PtxFacts],
}

/// One thing a kernel's PTX must show, in each entry point it is declared for. `{t}` in a
/// text stands for the entry's input element (`f32`, `f64`, `f16`, `bf16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PtxFact {
    /// Exactly this many block barriers (`bar.sync`).
    Barriers(u32),
    /// The text appears.
    Has(&'static str),
    /// The text appears exactly this many times.
    Count(&'static str, u32),
    /// The text appears at least this many times.
    AtLeast(&'static str, u32),
    /// The text does not appear.
    Lacks(&'static str),
    /// Some line holds every one of these texts.
    Line(&'static [&'static str]),
    /// Exactly this many lines hold every one of these texts.
    Lines(&'static [&'static str], u32),
    /// Exactly this many calls to functions of its own, whose arguments may pass through
    /// local memory. Without it an entry makes no call and has no local memory: everything
    /// is inlined and nothing spills.
    Calls(u32),
}

/// The entry points a [`PtxFacts`] speaks of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entries {
    /// Every entry point of the kernel's main launch.
    All,
    /// The main launch's entry points with these suffixes (`f32`, `f16_f16`, ...).
    Only(&'static [&'static str]),
    /// The second launch's entry points (a fix-up or a pack).
    Second,
}

/// Facts about some of a kernel's entry points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtxFacts {
    pub entries: Entries,
    pub facts: &'static [PtxFact],
}

impl PtxFacts {
    /// Facts of every main entry point.
    pub const fn all(facts: &'static [PtxFact]) -> Self {
        Self {
            entries: Entries::All,
            facts,
        }
    }

    /// Facts of the entry points with these suffixes.
    pub const fn only(suffixes: &'static [&'static str], facts: &'static [PtxFact]) -> Self {
        Self {
            entries: Entries::Only(suffixes),
            facts,
        }
    }

    /// Facts of the second launch's entry points.
    pub const fn second(facts: &'static [PtxFact]) -> Self {
        Self {
            entries: Entries::Second,
            facts,
        }
    }

    /// Whether they speak of the entry with `suffix` (of the second launch where `second`).
    pub fn holds_for(&self, suffix: &str, second: bool) -> bool {
        match self.entries {
            Entries::All => !second,
            Entries::Only(suffixes) => !second && suffixes.contains(&suffix),
            Entries::Second => second,
        }
    }
}

/// The entry suffixes of f32 and f64 (SIMT kernels' 16-byte paths, `cp.async` of B).
pub const WIDE: &[&str] = &["f32", "f64"];
/// The 16-bit inputs' entries with an f32 C.
pub const SIXTEEN_BIT: &[&str] = &["f16", "bf16"];
/// The 16-bit inputs' entries with C in their own type.
pub const NARROW_C: &[&str] = &["f16_f16", "bf16_bf16"];

/// How an f32 product is multiplied. f32 means FP32 unless the caller asks otherwise:
/// `matmul` never chooses a TF32 kernel by itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Precision {
    /// FP32 multiply-adds (f64 in FP64), rounded as IEEE says: the default.
    #[default]
    Exact,
    /// Inputs rounded to TF32 (10 mantissa bits, `cvt.rna`), products on the tensor
    /// cores, accumulated in f32: about 2^-11 relative error per product, several times
    /// the speed of FP32.
    Tf32,
    /// Each input split into a TF32 part and a TF32 remainder, three tensor-core products
    /// (big x big, big x small, small x big) summed in f32: FP32-class accuracy at
    /// tensor-core speed.
    Tf32x3,
}

impl Precision {
    pub const ALL: [Precision; 3] = [Precision::Exact, Precision::Tf32, Precision::Tf32x3];

    /// A bound on the relative error the input rounding adds to each product `a b`, beyond
    /// the accumulation's (as a multiple of `|a| |b|`): 0 for FP32; 2^-10 (+ 2^-22) for
    /// TF32, whose rounding of each input is within 2^-11; about 3 x 2^-22 for 3xTF32 (the
    /// remainders' own rounding and the dropped small x small), bounded by 2^-20.
    pub const fn product_error(self) -> f64 {
        match self {
            Precision::Exact => 0.0,
            Precision::Tf32 => 1.0 / 1024.0 + 1.0 / 4_194_304.0,
            Precision::Tf32x3 => 1.0 / 1_048_576.0,
        }
    }

    /// Additions into the accumulator per term of K: 3 for 3xTF32's three products.
    pub const fn additions(self) -> u32 {
        match self {
            Precision::Tf32x3 => 3,
            Precision::Exact | Precision::Tf32 => 1,
        }
    }

    /// `exact`, `tf32`, `3xtf32`.
    pub const fn name(self) -> &'static str {
        match self {
            Precision::Exact => "exact",
            Precision::Tf32 => "tf32",
            Precision::Tf32x3 => "3xtf32",
        }
    }
}

/// A kernel that reads A and B through TMA: the host writes a tensor map of A, then one of
/// B, into the launch's workspace (128 bytes each, 64-byte aligned), both with the 128-byte
/// swizzle and zero fill outside the matrix, 3D (the batch's products are planes, one plane
/// for a shared operand), boxes of `(rows, cols)` elements of the operand as stored:
/// `a_box` / `b_box` for row-major A and B, `a_t_box` / `b_t_box` for transposed ones. TMA
/// needs row and batch strides of whole 16-byte units and 16-byte aligned bases
/// ([`crate::device::tma::reads`]); for the dense row-major product the kernel takes another
/// path where they are not, or the host runs the kernel [`TensorMaps::otherwise`] names, and
/// the host does not choose it for the other forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMaps {
    pub a_box: (u32, u32),
    pub b_box: (u32, u32),
    pub a_t_box: (u32, u32),
    pub b_t_box: (u32, u32),
    /// A first launch (`<pack>_<element>`, the kernel's second body) that copies A and B
    /// into the workspace in the layout the maps read (K-major; `wgmma_tf32`: rounded to
    /// TF32, `wgmma_packed`: as stored); the main launch then takes the packed operands and their problem block.
    pub pack: Option<Pack>,
    /// The kernel (by name) the host runs instead where TMA cannot read the dense row-major
    /// product, for a kernel with no other path of its own; `None`: the kernel takes its own.
    pub otherwise: Option<&'static str>,
}

/// [`TensorMaps::a_box_rows`] of a box of `rows` rows, for kernel code that knows its box.
pub const fn box_rows(rows: u32, m: u32) -> u32 {
    if rows > 64 && m <= 64 { 64 } else { rows }
}

/// A pack launch ([`TensorMaps::pack`]): its entry family, the parts it splits each
/// element into (1: TF32 or as stored; 2: 3xTF32's big and small), each part a plane of its
/// own after the operand's others, which the maps read as more of the batch's planes, and
/// the bytes of a packed element (4: TF32 words; 2: 16-bit elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pack {
    pub name: &'static str,
    pub parts: u32,
    pub width: u32,
}

impl TensorMaps {
    /// Workspace bytes of the two maps.
    pub const BYTES: usize = 256;

    /// Rows of the box of A as stored (row-major: `a_box`) for C of `m` rows: a box of more
    /// than 64 rows is cut to 64 where C has at most 64, since TMA takes time for a box's
    /// rows past the matrix even where it only fills them with zeros (bf16 x 8192 x 4096 on
    /// 128 x 64 tiles, H200: 29.0 us at 128 rows, 37.7 at 64, 39.6 at 32). The kernels that
    /// read such a box ([`box_rows`]) expect its bytes from it.
    pub const fn a_box_rows(&self, m: u32) -> u32 {
        box_rows(self.a_box.0, m)
    }

    /// The maps of operands `pack` wrote: A and B^T, K-major both whatever the caller's
    /// layout, in boxes of `rows x bk` and `cols x bk` for a `rows x cols` block tile.
    pub const fn packed((rows, cols, bk): (u32, u32, u32), pack: Pack) -> Self {
        Self {
            a_box: (rows, bk),
            b_box: (cols, bk),
            a_t_box: (rows, bk),
            b_t_box: (cols, bk),
            pack: Some(pack),
            otherwise: None,
        }
    }
}

impl KernelSpec {
    /// A kernel of `threads` on block tiles `tile`, a grid of tiles, with the plain defaults
    /// that the `with_*` methods change: no shared memory, no launch bounds, every element
    /// type, the CUDA cores, IEEE arithmetic, dense row-major operands only, always a
    /// candidate, run by the CPU executor, no PTX facts.
    pub const fn new(
        (name, file): (&'static str, &'static str),
        idea: &'static str,
        arch: Arch,
        threads: Threads,
        tile: Tile,
    ) -> KernelSpec {
        KernelSpec {
            name,
            file,
            idea,
            arch,
            threads,
            tile,
            grid: Grid::Tiles,
            shared: Shared::None,
            min_blocks_per_sm: PerAcc::NONE,
            elements: ALL_ELEMENTS,
            candidate: Candidate::Always,
            cpu: true,
            tensor_cores: false,
            tma: None,
            precision: Precision::Exact,
            strided: false,
            b_transposed: false,
            ptx: &[],
        }
    }

    /// This spec for a kernel that reads the general product ([`KernelSpec::strided`]).
    pub const fn general(self) -> KernelSpec {
        KernelSpec {
            strided: true,
            ..self
        }
    }

    /// This spec for a kernel that also reads B transposed ([`KernelSpec::b_transposed`]).
    pub const fn with_b_transposed(self) -> KernelSpec {
        KernelSpec {
            b_transposed: true,
            ..self
        }
    }

    /// This spec for a kernel that multiplies on the tensor cores.
    pub const fn on_tensor_cores(self) -> KernelSpec {
        KernelSpec {
            tensor_cores: true,
            ..self
        }
    }

    /// This spec with its dynamic shared memory.
    pub const fn with_shared(self, shared: Shared) -> KernelSpec {
        KernelSpec { shared, ..self }
    }

    /// This spec for these element types only.
    pub const fn with_elements(self, elements: &'static [Elem]) -> KernelSpec {
        KernelSpec { elements, ..self }
    }

    /// This spec with its launch bounds.
    pub const fn with_blocks_per_sm(self, min_blocks_per_sm: PerAcc<Option<u32>>) -> KernelSpec {
        KernelSpec {
            min_blocks_per_sm,
            ..self
        }
    }

    /// This spec, considered by `matmul`'s automatic choice as `candidate` says.
    pub const fn with_candidate(self, candidate: Candidate) -> KernelSpec {
        KernelSpec { candidate, ..self }
    }

    /// This spec with inputs read through tensor maps.
    pub const fn with_tma(self, tma: TensorMaps) -> KernelSpec {
        KernelSpec {
            tma: Some(tma),
            ..self
        }
    }

    /// This spec for a kernel that multiplies f32 in `precision` (only where asked).
    pub const fn with_precision(self, precision: Precision) -> KernelSpec {
        KernelSpec { precision, ..self }
    }

    /// This spec with the PTX facts its kernel declares.
    pub const fn with_ptx(self, ptx: &'static [PtxFacts]) -> KernelSpec {
        KernelSpec { ptx, ..self }
    }

    /// This spec on another grid (a part's tile on a stream-K or split-K schedule).
    pub const fn with_grid(self, grid: Grid) -> KernelSpec {
        KernelSpec { grid, ..self }
    }

    /// Whether it computes a strided batch in one launch: kernels with a grid of block tiles
    /// (grid `z` = the batch; the entry points move A, B and C to their product, and tensor
    /// maps have the batch as their third dimension), and persistent ones, whose blocks walk
    /// the tiles of every product.
    pub const fn batched(&self) -> bool {
        matches!(
            self.grid,
            Grid::Tiles
                | Grid::Persistent
                | Grid::PersistentSplit
                | Grid::PersistentPairs
                | Grid::PersistentQuads
        )
    }

    /// Blocks of a cluster: 2 on [`Grid::PersistentPairs`], 4 on [`Grid::PersistentQuads`],
    /// 1 (no cluster) otherwise.
    pub const fn cluster(&self) -> u32 {
        match self.grid {
            Grid::PersistentPairs => 2,
            Grid::PersistentQuads => 4,
            _ => 1,
        }
    }

    /// The family name of the second launch's entry points, if the kernel has one.
    pub const fn second_launch(&self) -> Option<&'static str> {
        match (self.grid, self.tma) {
            (Grid::StreamK { fixup } | Grid::SplitK { fixup }, _) => Some(fixup),
            (
                _,
                Some(TensorMaps {
                    pack: Some(pack), ..
                }),
            ) => Some(pack.name),
            _ => None,
        }
    }

    /// Block tile rows and columns of a fixed tile (0 for the others): for kernel code that
    /// takes them as const parameters.
    pub const fn rows(&self) -> u32 {
        match self.tile {
            Tile::Fixed { rows, .. } => rows,
            Tile::Square | Tile::Thin => 0,
        }
    }

    pub const fn cols(&self) -> u32 {
        match self.tile {
            Tile::Fixed { cols, .. } => cols,
            Tile::Square | Tile::Thin => 0,
        }
    }

    /// The K step of a staged kernel (0 for the others).
    pub const fn bk(&self) -> u32 {
        match self.shared {
            Shared::Stages { bk, .. } => bk,
            Shared::None
            | Shared::InputElements(_)
            | Shared::Squares { .. }
            | Shared::Elements(_) => 0,
        }
    }

    /// Threads per block of a fixed block shape (0 for `Threads::Square`).
    pub const fn fixed_threads(&self) -> u32 {
        match self.threads {
            Threads::Fixed(x, y) => x * y,
            Threads::Square => 0,
        }
    }

    /// The entry points of this kernel: `(element, <name>_<element>)` writing C in the
    /// accumulator type, and for each 16-bit element `(element, <name>_<element>_<element>)`
    /// writing C in the element's own type.
    pub fn entries(&self) -> impl Iterator<Item = (Elem, EntryName)> + '_ {
        let own = self
            .elements
            .iter()
            .filter_map(|&e| e.narrow_suffix().map(|s| (e, EntryName::new(self.name, s))));
        self.elements
            .iter()
            .map(|&e| (e, EntryName::new(self.name, e.suffix())))
            .chain(own)
    }

    /// The second launch's entry points: for `stream_k`'s fix-up after the main launch, one
    /// per accumulator type of its elements (it adds partial sums of that type), and one per
    /// 16-bit element for C in that type; for a pack before it ([`TensorMaps::pack`]), one
    /// per main entry point, of the same suffix (it reads the operands as the main launch
    /// does).
    pub fn fixup_entries(&self) -> impl Iterator<Item = EntryName> + '_ {
        let fixup = self.second_launch();
        let packs = self.packs();
        let by_acc = [Elem::F32, Elem::F64]
            .into_iter()
            .filter(move |acc| !packs && self.elements.iter().any(|e| e.acc() == *acc))
            .map(Elem::suffix);
        let by_input = self
            .elements
            .iter()
            .filter(move |_| packs)
            .map(|e| e.suffix());
        let own = self.elements.iter().filter_map(|e| e.narrow_suffix());
        by_acc
            .chain(by_input)
            .chain(own)
            .filter_map(move |suffix| fixup.map(|f| EntryName::new(f, suffix)))
    }

    /// Whether the second launch is a pack before the main one ([`TensorMaps::pack`]).
    pub const fn packs(&self) -> bool {
        matches!(self.tma, Some(TensorMaps { pack: Some(_), .. }))
    }
}

/// An entry point's name, `<family>_<suffix>`, without allocating (no_std).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EntryName {
    bytes: [u8; 64],
    len: usize,
}

impl EntryName {
    pub const fn new(family: &str, suffix: &str) -> Self {
        let (f, s) = (family.as_bytes(), suffix.as_bytes());
        assert!(f.len() + 1 + s.len() <= 64, "entry name too long");
        let mut bytes = [0u8; 64];
        let mut i = 0;
        while i < f.len() {
            bytes[i] = f[i];
            i += 1;
        }
        bytes[i] = b'_';
        let mut j = 0;
        while j < s.len() {
            bytes[i + 1 + j] = s[j];
            j += 1;
        }
        Self {
            bytes,
            len: f.len() + 1 + s.len(),
        }
    }

    pub fn as_str(&self) -> &str {
        // Made of two `&str`s and an ASCII byte.
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl core::fmt::Display for EntryName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every element type: what most kernels have entry points for.
pub const ALL_ELEMENTS: &[Elem] = &Elem::ALL;

/// The list of kernels, in the order of the progression: calls `$then!` with one line per
/// kernel, `Variant => spec, body;` (`spec, body, fixup_body;` for a second launch), in two
/// groups: `fixed`, whose launch needs nothing but the shape, and `sized`, whose variant
/// carries the tile width. The host crate turns it into its public `Kernel` enum and the
/// CPU executor's dispatch; the build script and the tests read [`CATALOGUE`].
///
/// The doc comment on each line is the variant's documentation.
#[macro_export]
macro_rules! for_each_kernel {
    ($then:ident) => {
        $then! {
            fixed {
                /// One thread per element of C (`naive.rs`).
                Naive => $crate::kernels::simt::naive::SPEC, $crate::kernels::simt::naive::naive;
                /// Shared-memory tiling, 8 x 8 tiles (`tiled.rs`).
                Tiled8 => $crate::kernels::simt::tiled::TILED8, $crate::kernels::simt::tiled::tiled8;
                /// Shared-memory tiling, 16 x 16 tiles (`tiled.rs`).
                Tiled16 => $crate::kernels::simt::tiled::TILED16, $crate::kernels::simt::tiled::tiled16;
                /// Shared-memory tiling, 32 x 32 tiles (`tiled.rs`).
                Tiled32 => $crate::kernels::simt::tiled::TILED32, $crate::kernels::simt::tiled::tiled32;
                /// Thread coarsening: 8 elements of a column of C per thread (`coarse.rs`).
                Coarse => $crate::kernels::simt::coarse::SPEC, $crate::kernels::simt::coarse::coarse;
                /// 2D register tiling: an 8 x 8 thread tile (`register_tiled.rs`).
                RegisterTiled => $crate::kernels::simt::register_tiled::SPEC, $crate::kernels::simt::register_tiled::register_tiled;
                /// 16-byte accesses, A transposed in shared memory (`vectorized.rs`).
                Vectorized => $crate::kernels::simt::vectorized::SPEC, $crate::kernels::simt::vectorized::vectorized;
                /// Two shared stages, the next phase's loads in flight (`double_buffered.rs`).
                DoubleBuffered => $crate::kernels::simt::double_buffered::SPEC, $crate::kernels::simt::double_buffered::double_buffered;
                /// Each warp owns a compact patch of thread tiles (`warp_tiled.rs`).
                WarpTiled => $crate::kernels::simt::warp_tiled::WARP_TILED, $crate::kernels::simt::warp_tiled::warp_tiled;
                /// Warp tiling with BK = 16 and an unchecked interior mainloop (`warp_tiled.rs`).
                WarpTiledK16 => $crate::kernels::simt::warp_tiled::WARP_TILED_K16, $crate::kernels::simt::warp_tiled::warp_tiled_k16;
                /// Warp tiling with 64 x 64 block tiles for small products (`warp_tiled.rs`).
                WarpTiled64 => $crate::kernels::simt::warp_tiled::WARP_TILED_64, $crate::kernels::simt::warp_tiled::warp_tiled_64;
                /// Fragment double buffering: shared reads one K step ahead (`fragment_buffered.rs`).
                FragmentBuffered => $crate::kernels::simt::fragment_buffered::FRAGMENT_BUFFERED, $crate::kernels::simt::fragment_buffered::fragment_buffered;
                /// Fragment double buffering with BK = 16, loads in two parts (`fragment_buffered.rs`).
                FragmentBufferedK16 => $crate::kernels::simt::fragment_buffered::FRAGMENT_BUFFERED_K16, $crate::kernels::simt::fragment_buffered::fragment_buffered_k16;
                /// B copied by `cp.async` (`async_copy.rs`; compute capability 8.0+).
                AsyncCopy => $crate::kernels::simt::async_copy::SPEC, $crate::kernels::simt::async_copy::async_copy;
                /// Lanes paired for 2-wavefront fragment reads (`paired_lanes.rs`; 8.0+).
                PairedLanes => $crate::kernels::simt::paired_lanes::SPEC, $crate::kernels::simt::paired_lanes::paired_lanes;
                /// The last partial wave shared out by K phases (`stream_k.rs`; 8.0+).
                StreamK => $crate::kernels::simt::stream_k::SPEC, $crate::kernels::simt::stream_k::stream_k,
                    $crate::kernels::simt::stream_k::stream_k_fixup;
                /// `stream_k` on 64 x 128 tiles, for C with few rows (`stream_k_short.rs`;
                /// 8.0+).
                StreamK64 => $crate::kernels::simt::stream_k_short::SPEC_64, $crate::kernels::simt::stream_k_short::stream_k_64,
                    $crate::kernels::simt::stream_k_short::stream_k_64_fixup;
                /// `stream_k` on 32 x 128 tiles (`stream_k_short.rs`; 8.0+).
                StreamK32 => $crate::kernels::simt::stream_k_short::SPEC_32, $crate::kernels::simt::stream_k_short::stream_k_32,
                    $crate::kernels::simt::stream_k_short::stream_k_32_fixup;
                /// `stream_k` on 128 x 64 tiles, for C with few columns
                /// (`stream_k_short.rs`; 8.0+).
                StreamKNarrow => $crate::kernels::simt::stream_k_short::SPEC_NARROW,
                    $crate::kernels::simt::stream_k_short::stream_k_narrow,
                    $crate::kernels::simt::stream_k_short::stream_k_narrow_fixup;
                /// `stream_k` on 128 x 32 tiles, for C with fewer columns
                /// (`stream_k_short.rs`; 8.0+).
                StreamKNarrow32 => $crate::kernels::simt::stream_k_short::SPEC_NARROW_32,
                    $crate::kernels::simt::stream_k_short::stream_k_narrow_32,
                    $crate::kernels::simt::stream_k_short::stream_k_narrow_32_fixup;
                /// Few columns: whole rows of C per thread, K split over blocks, one launch
                /// (`few_columns.rs`; f32/f64, 8.0+).
                FewColumns => $crate::kernels::simt::few_columns::SPEC, $crate::kernels::simt::few_columns::few_columns;
                /// `few_columns` on strips of 64 columns, 8 x 8 thread tiles, three blocks per SM
                /// (`few_columns_64.rs`; f32, 8.0+).
                FewColumns64 => $crate::kernels::simt::few_columns_64::SPEC, $crate::kernels::simt::few_columns_64::few_columns_64;
                /// Few rows with B stored `n x k`: whole columns of C per thread, K split over
                /// blocks, one launch (`few_rows.rs`; f32/f64, 8.0+).
                FewRows => $crate::kernels::simt::few_rows::SPEC, $crate::kernels::simt::few_rows::few_rows;
                /// `few_rows` on strips of 64 rows, 8 x 8 thread tiles, three blocks per SM
                /// (`few_rows_64.rs`; f32, 8.0+).
                FewRows64 => $crate::kernels::simt::few_rows_64::SPEC, $crate::kernels::simt::few_rows_64::few_rows_64;
                /// Thin products: the K loop split among 1024 threads (`thin.rs`).
                Thin => $crate::kernels::simt::thin::SPEC, $crate::kernels::simt::thin::thin;
                /// Decode products (M <= 16): B read once, K split over blocks (`decode.rs`;
                /// f16/bf16).
                Decode => $crate::kernels::decode::decode::SPEC, $crate::kernels::decode::decode::decode,
                    $crate::kernels::decode::decode::decode_fixup;
                /// `decode` with B streamed through shared memory by `cp.async`, in one
                /// launch (`decode_async.rs`; f16/bf16, 8.0+).
                DecodeAsync => $crate::kernels::decode::decode_async::SPEC, $crate::kernels::decode::decode_async::decode_async;
                /// `decode_async` on the tensor cores, up to 16 rows of C per pass
                /// (`decode_mma.rs`; f16/bf16, 8.0+).
                DecodeMma => $crate::kernels::decode::decode_mma::SPEC, $crate::kernels::decode::decode_mma::decode_mma;
                /// `decode_mma` fed by TMA, one block per SM (`decode_tma.rs`; f16/bf16, 9.0
                /// only).
                DecodeTma => $crate::kernels::decode::decode_tma::SPEC, $crate::kernels::decode::decode_tma::decode_tma;
                /// `decode_tma` on `wgmma`, the operands turned over (`decode_wgmma.rs`;
                /// f16/bf16, 9.0 only).
                DecodeWgmma => $crate::kernels::decode::decode_wgmma::SPEC, $crate::kernels::decode::decode_wgmma::decode_wgmma;
                /// Tensor cores: `mma.sync` m16n8k16, fragments from shared memory
                /// (`mma_sync.rs`; f16/bf16, 8.0+).
                MmaSync => $crate::kernels::mma::mma_sync::SPEC, $crate::kernels::mma::mma_sync::mma_sync;
                /// `mma_sync` with fragments loaded by `ldmatrix` (`mma_ldmatrix.rs`).
                MmaLdmatrix => $crate::kernels::mma::mma_ldmatrix::SPEC, $crate::kernels::mma::mma_ldmatrix::mma_ldmatrix;
                /// `mma_ldmatrix` fed by a 4-stage `cp.async` pipeline (`mma_async.rs`).
                MmaAsync => $crate::kernels::mma::mma_async::SPEC, $crate::kernels::mma::mma_async::mma_async;
                /// `mma_async` on 128 x 256 block tiles, 64 x 64 warp tiles (`mma_wide.rs`).
                MmaWide => $crate::kernels::mma::mma_wide::SPEC, $crate::kernels::mma::mma_wide::mma_wide;
                /// `mma_wide` with 64 K steps per phase and fragments a step ahead (`mma_deep.rs`).
                MmaDeep => $crate::kernels::mma::mma_deep::SPEC, $crate::kernels::mma::mma_deep::mma_deep;
                /// `mma_deep`'s pipeline on 128 x 128 tiles, two blocks per SM (`mma_deep128.rs`).
                MmaDeep128 => $crate::kernels::mma::mma_deep128::SPEC, $crate::kernels::mma::mma_deep128::mma_deep128;
                /// `mma_deep` with swizzled, unpadded tiles and shared addresses worked out
                /// once (`mma_swizzled.rs`).
                MmaSwizzled => $crate::kernels::mma::mma_swizzled::SPEC, $crate::kernels::mma::mma_swizzled::mma_swizzled;
                /// Hopper `wgmma` from swizzled shared tiles, `cp.async`-fed
                /// (`wgmma_async.rs`; f16/bf16, 9.0 only).
                WgmmaAsync => $crate::kernels::wgmma::wgmma_async::SPEC, $crate::kernels::wgmma::wgmma_async::wgmma_async;
                /// `wgmma_async`'s tiles by TMA on mbarriers, warp-specialised
                /// (`wgmma_tma.rs`; f16/bf16, 9.0 only).
                WgmmaTma => $crate::kernels::wgmma::wgmma_tma::SPEC, $crate::kernels::wgmma::wgmma_tma::wgmma_tma;
                /// `wgmma_tma` on a persistent grid, tiles grouped for L2
                /// (`wgmma_persistent.rs`; f16/bf16, 9.0 only).
                WgmmaPersistent => $crate::kernels::wgmma::wgmma_persistent::SPEC, $crate::kernels::wgmma::wgmma_persistent::wgmma_persistent;
                /// `wgmma_persistent` on 128 x 128 tiles, `wgmma` m64n128k16
                /// (`wgmma_128x128.rs`; f16/bf16, 9.0 only).
                Wgmma128x128 => $crate::kernels::wgmma::wgmma_128x128::SPEC, $crate::kernels::wgmma::wgmma_128x128::wgmma_128x128;
                /// `wgmma_persistent` on 128 x 192 tiles, `wgmma` m64n192k16
                /// (`wgmma_128x192.rs`; f16/bf16, 9.0 only).
                Wgmma128x192 => $crate::kernels::wgmma::wgmma_128x192::SPEC, $crate::kernels::wgmma::wgmma_128x192::wgmma_128x192;
                /// `wgmma_persistent` in clusters of two blocks sharing B by TMA multicast
                /// (`wgmma_pairs.rs`; f16/bf16, 9.0 only).
                WgmmaPairs => $crate::kernels::wgmma::wgmma_pairs::SPEC, $crate::kernels::wgmma::wgmma_pairs::wgmma_pairs;
                /// `wgmma_pairs` on 128 x 192 tiles
                /// (`wgmma_pairs_128x192.rs`; f16/bf16, 9.0 only).
                WgmmaPairs128x192 => $crate::kernels::wgmma::wgmma_pairs_128x192::SPEC, $crate::kernels::wgmma::wgmma_pairs_128x192::wgmma_pairs_128x192;
                /// `wgmma_persistent` in clusters of four blocks on squares of tiles, sharing A
                /// and B by TMA multicast (`wgmma_quads.rs`; f16/bf16, 9.0 only).
                WgmmaQuads => $crate::kernels::wgmma::wgmma_quads::SPEC, $crate::kernels::wgmma::wgmma_quads::wgmma_quads;
                /// `wgmma_quads` on 128 x 192 tiles
                /// (`wgmma_quads_128x192.rs`; f16/bf16, 9.0 only).
                WgmmaQuads128x192 => $crate::kernels::wgmma::wgmma_quads_128x192::SPEC, $crate::kernels::wgmma::wgmma_quads_128x192::wgmma_quads_128x192;
                /// `wgmma_persistent` on 128 x 64 tiles, `wgmma` m64n64k16
                /// (`wgmma_128x64.rs`; f16/bf16, 9.0 only).
                Wgmma128x64 => $crate::kernels::wgmma::wgmma_128x64::SPEC, $crate::kernels::wgmma::wgmma_128x64::wgmma_128x64;
                /// `wgmma_128x64` with its last wave's tiles split over K
                /// (`wgmma_split_128x64.rs`; f16/bf16, 9.0 only).
                WgmmaSplit128x64 => $crate::kernels::wgmma::wgmma_split_128x64::SPEC, $crate::kernels::wgmma::wgmma_split_128x64::wgmma_split_128x64;
                /// `wgmma_128x128` with its last wave's tiles split over K
                /// (`wgmma_split_128x128.rs`; f16/bf16, 9.0 only).
                WgmmaSplit128x128 => $crate::kernels::wgmma::wgmma_split_128x128::SPEC, $crate::kernels::wgmma::wgmma_split_128x128::wgmma_split_128x128;
                /// `wgmma_persistent` on operands a first launch packed K-major, for 16-bit
                /// operands TMA cannot read as they lie (`wgmma_packed.rs`; f16/bf16, 9.0 only).
                WgmmaPacked => $crate::kernels::wgmma::wgmma_packed::SPEC, $crate::kernels::wgmma::wgmma_packed::wgmma_packed,
                    $crate::kernels::wgmma::wgmma_packed::pack_16;
                /// `wgmma_packed` with its last wave's tiles split over K
                /// (`wgmma_packed_split.rs`; f16/bf16, 9.0 only).
                WgmmaPackedSplit => $crate::kernels::wgmma::wgmma_packed_split::SPEC, $crate::kernels::wgmma::wgmma_packed_split::wgmma_packed_split,
                    $crate::kernels::wgmma::wgmma_packed_split::pack_16_split;
                /// f64 on the FP64 tensor cores: `mma.sync` m16n8k8 f64, `cp.async`-fed
                /// (`dmma.rs`; f64, 9.0 only).
                Dmma => $crate::kernels::dmma::dmma::SPEC, $crate::kernels::dmma::dmma::dmma;
                /// `dmma` with 32 x 32 warp tiles, 8 warps, m16n8k16 (`dmma_warps.rs`; f64,
                /// 9.0 only).
                DmmaWarps => $crate::kernels::dmma::dmma_warps::SPEC, $crate::kernels::dmma::dmma_warps::dmma_warps;
                /// `dmma_warps` on 64 x 64 block tiles, 3 blocks per SM (`dmma_small.rs`;
                /// f64, 9.0 only).
                DmmaSmall => $crate::kernels::dmma::dmma_small::SPEC, $crate::kernels::dmma::dmma_small::dmma_small;
                /// `dmma` with fragments double-buffered in registers across stages
                /// (`dmma_buffered.rs`; f64, 9.0 only).
                DmmaBuffered => $crate::kernels::dmma::dmma_buffered::SPEC, $crate::kernels::dmma::dmma_buffered::dmma_buffered;
                /// `dmma_buffered` in K steps of 4, `mma.sync` m16n8k4 (`dmma_k4.rs`; f64, 9.0
                /// only).
                DmmaK4 => $crate::kernels::dmma::dmma_k4::SPEC, $crate::kernels::dmma::dmma_k4::dmma_k4;
                /// `dmma_buffered`'s mainloop on 64 x 64 tiles (`dmma_small_buffered.rs`; f64, 9.0 only).
                DmmaSmallBuffered => $crate::kernels::dmma::dmma_small_buffered::SPEC, $crate::kernels::dmma::dmma_small_buffered::dmma_small_buffered;
                /// `dmma_small_buffered` with K split over each tile's blocks
                /// (`dmma_small_split.rs`; f64, 9.0 only).
                DmmaSmallSplit => $crate::kernels::dmma::dmma_small_split::SPEC, $crate::kernels::dmma::dmma_small_split::dmma_small_split;
                /// Few rows on the FP64 tensor cores, turned over: `few_rows`' strips and split of K
                /// (`dmma_few_rows.rs`; f64, 9.0 only).
                DmmaFewRows => $crate::kernels::dmma::dmma_few_rows::SPEC, $crate::kernels::dmma::dmma_few_rows::dmma_few_rows;
                /// `dmma_few_rows` on strips of 64 rows (`dmma_few_rows_64.rs`; f64, 9.0 only).
                DmmaFewRows64 => $crate::kernels::dmma::dmma_few_rows_64::SPEC, $crate::kernels::dmma::dmma_few_rows_64::dmma_few_rows_64;
                /// Few columns on the FP64 tensor cores: strips of 128 x 64 and split of K
                /// (`dmma_few_columns.rs`; f64, 9.0 only).
                DmmaFewColumns => $crate::kernels::dmma::dmma_few_columns::SPEC, $crate::kernels::dmma::dmma_few_columns::dmma_few_columns;
                /// `dmma_few_columns` on eight warps, one block per SM
                /// (`dmma_few_columns_8_warps.rs`; f64, 9.0 only).
                DmmaFewColumns8Warps => $crate::kernels::dmma::dmma_few_columns_8_warps::SPEC, $crate::kernels::dmma::dmma_few_columns_8_warps::dmma_few_columns_8_warps;
                /// f32 in TF32 on Hopper's `wgmma`, only when asked: operands packed by a
                /// first launch (`wgmma_tf32.rs`; `Precision::Tf32`, 9.0 only).
                WgmmaTf32 => $crate::kernels::tf32::wgmma_tf32::SPEC, $crate::kernels::tf32::wgmma_tf32::wgmma_tf32,
                    $crate::kernels::tf32::wgmma_tf32::pack_tf32;
                /// `wgmma_tf32` with its last wave's tiles split over K
                /// (`wgmma_tf32_split.rs`; f32 in TF32, 9.0 only).
                WgmmaTf32Split => $crate::kernels::tf32::wgmma_tf32_split::SPEC, $crate::kernels::tf32::wgmma_tf32_split::wgmma_tf32_split,
                    $crate::kernels::tf32::wgmma_tf32_split::pack_tf32_split;
                /// f32 as three TF32 products on Hopper's `wgmma`, only when asked: operands
                /// packed as big and small parts by a first launch (`wgmma_3xtf32.rs`;
                /// `Precision::Tf32x3`, 9.0 only).
                Wgmma3xTf32 => $crate::kernels::tf32::wgmma_3xtf32::SPEC, $crate::kernels::tf32::wgmma_3xtf32::wgmma_3xtf32,
                    $crate::kernels::tf32::wgmma_3xtf32::pack_3xtf32;
                /// f32 in TF32, only when asked (`mma_tf32.rs`; `Precision::Tf32`, 8.0+).
                MmaTf32 => $crate::kernels::tf32::mma_tf32::SPEC, $crate::kernels::tf32::mma_tf32::mma_tf32;
                /// f32 as three TF32 products, only when asked (`mma_3xtf32.rs`;
                /// `Precision::Tf32x3`, 8.0+).
                Mma3xTf32 => $crate::kernels::tf32::mma_3xtf32::SPEC, $crate::kernels::tf32::mma_3xtf32::mma_3xtf32;
            }
            sized {
                /// Shared-memory tiling with the tile width chosen at launch (`tiled.rs`).
                TiledDynamic => $crate::kernels::simt::tiled::TILED_DYN, $crate::kernels::simt::tiled::tiled_dyn;
            }
        }
    };
}

macro_rules! spec_list {
    (
        fixed { $( $(#[$fdoc:meta])* $fixed:ident => $fspec:path, $fbody:expr $(, $ffix:expr)? ; )* }
        sized { $( $(#[$sdoc:meta])* $sized:ident => $sspec:path, $sbody:expr ; )* }
    ) => {
        /// Every kernel's spec, in the order of [`for_each_kernel!`](crate::for_each_kernel!).
        pub const CATALOGUE: &[KernelSpec] = &[$($fspec,)* $($sspec,)*];
    };
}
#[cfg(not(target_arch = "nvptx64"))]
for_each_kernel!(spec_list);
