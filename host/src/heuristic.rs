//! The kernel a product runs when nobody times anything: an order of preference from the
//! element type, the precision, the device and the shape, filtered by what each kernel can
//! compute (forms, shape, device). Pure arithmetic on the catalogue, no launch: the first
//! product of a new shape costs no more host time than the next.
//!
//! The order is data: [`RULE`], an ordered table of rows, each a predicate on the product
//! ([`Product`]) and the kernels it puts next (or a table of its own), with the record in
//! `docs/bench/` (or the worklog page) its measurements come from. A product's order is
//! every kernel of every row that holds, in the table's order, each kernel once. The Hopper
//! kernels lead on compute capability 9.0, the `mma.sync` ones on 8.x, and the SIMT
//! ladder's best rungs follow in the order they were measured, down to the textbook
//! kernels, which take any form on any device.
use crate::element::Element;
use crate::kernels::{Elem, Kernel, Precision};
use crate::props::DeviceProps;
use rgemm_kernels::problem::Problem;

/// What the rule knows of a product: its element type and precision, the device, the shape
/// and its form.
#[derive(Clone, Copy, Debug)]
pub struct Product {
    pub elem: Elem,
    /// Bytes of an input element.
    pub elem_bytes: u64,
    pub precision: Precision,
    /// Compute capability 9.0: `wgmma`, TMA and DMMA.
    pub hopper: bool,
    /// The device's multiprocessors.
    pub sms: u64,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub batch: u64,
    /// Dense row-major operands, one product.
    pub plain: bool,
    /// One dense product `C = A B` with B stored `n x k` (a layer's weights as stored): the
    /// form the [`KernelSpec::b_transposed`](crate::KernelSpec::b_transposed) kernels read.
    pub b_transposed: bool,
    /// C in the 16-bit input type.
    pub narrow_c: bool,
    /// Every leading dimension a whole number of 16-byte groups of 16-bit elements: what
    /// TMA reads.
    pub tma_rows: bool,
    /// Some leading dimension not a multiple of 4 elements: no vector path.
    pub unaligned: bool,
    /// A's and B's rows whole 32-byte sectors apart: TMA's 128-byte box rows start on a
    /// sector, so a box row reads no sector it does not use.
    pub sector_rows: bool,
    /// TMA reads A and B as their leading dimensions and batch strides lay them out
    /// (`tma::reads`, where their bases are aligned too).
    pub tma_operands: bool,
}

impl Product {
    pub fn new<T: Element>(
        props: &DeviceProps,
        problem: &Problem,
        precision: Precision,
        narrow_c: bool,
    ) -> Self {
        let lds = problem.lda | problem.ldb | problem.ldc;
        Self {
            elem: T::ELEM,
            elem_bytes: std::mem::size_of::<T>() as u64,
            precision,
            hopper: props.compute_capability == (9, 0),
            sms: props.multiprocessors as u64,
            m: problem.m as u64,
            n: problem.n as u64,
            k: problem.k as u64,
            batch: problem.batch as u64,
            plain: problem.layout == 0 && problem.batch == 1,
            b_transposed: problem.is_dense_unscaled_b_transposed() && problem.batch == 1,
            narrow_c,
            tma_rows: lds.is_multiple_of(8),
            unaligned: !lds.is_multiple_of(4),
            sector_rows: ((problem.lda | problem.ldb) as usize * std::mem::size_of::<T>())
                .is_multiple_of(32),
            // (Bases aside: device buffers start aligned, offsets are the launch check's.)
            tma_operands: rgemm_kernels::device::tma::reads(
                problem,
                (0, 0),
                std::mem::size_of::<T>() as u64,
            ),
        }
    }

    fn sixteen_bit(&self) -> bool {
        matches!(self.elem, Elem::F16 | Elem::Bf16)
    }

    /// Rows TMA reads but not whole 32-byte sectors apart, more 128 x 256 tiles than SMs:
    /// where the packed copy's aligned rows win over the TMA kernels.
    fn packs_off_sectors(&self) -> bool {
        !self.sector_rows && self.tiles(Kernel::WgmmaPersistent) > self.sms
    }

    /// Block tiles of `kernel` over the whole batch.
    fn tiles(&self, kernel: Kernel) -> u64 {
        let spec = kernel.spec();
        self.m.div_ceil(spec.rows() as u64)
            * self.n.div_ceil(spec.cols() as u64)
            * self.batch.max(1)
    }

    /// Stream-K's 128 x 128 tiles, two blocks per SM: less than half a wave of them (fewer
    /// tiles than SMs), and a long K.
    fn few_tiles(&self) -> bool {
        self.tiles(Kernel::StreamK) < self.sms && self.k >= 512
    }

    /// Waves of stream-K's tiles at two blocks per SM.
    fn waves(&self) -> f64 {
        self.tiles(Kernel::StreamK) as f64 / (2 * self.sms) as f64
    }

    /// Slices of K of the last wave of `kernel`'s 16-bit tiles where its grid splits them
    /// (`Grid::PersistentSplit`, as its plan counts them); 1 for every other grid.
    fn splits(&self, kernel: Kernel) -> u64 {
        use rgemm_kernels::parts::schedule::split_tail;
        let spec = kernel.spec();
        if spec.grid != rgemm_kernels::catalogue::Grid::PersistentSplit {
            return 1;
        }
        let count = |x: u64| x.min(u32::MAX as u64) as u32;
        let per_sm = spec.min_blocks_per_sm.f32.unwrap_or(1) as u64;
        let phases = split_tail::phases(self.k as usize, self.elem_bytes as usize);
        split_tail::splits(count(self.tiles(kernel)), count(self.sms * per_sm), phases) as u64
    }

    /// Whether a split-K strip kernel's strips times its slices of K
    /// ([`split_k_strips::splits`](rgemm_kernels::parts::schedule::split_k_strips::splits))
    /// fill nine tenths of the blocks resident at once.
    fn strips_fill(&self, kernel: Kernel) -> bool {
        use rgemm_kernels::parts::schedule::split_k_strips;
        let spec = kernel.spec();
        let resident = self.sms * spec.min_blocks_per_sm.f32.unwrap_or(1) as u64;
        let tile = (spec.rows(), spec.cols());
        let strips = self.m.div_ceil(tile.0 as u64) * self.n.div_ceil(tile.1 as u64);
        let mnk = (self.m as usize, self.n as usize, self.k as usize);
        let splits = split_k_strips::splits(mnk, tile, resident as usize) as u64;
        10 * strips * splits >= 9 * resident
    }

    /// The decode kernel fed by TMA can read the operands.
    fn tma_decode(&self) -> bool {
        self.sixteen_bit() && self.hopper && self.tma_rows
    }

    /// `few_columns`' shapes: whole rows of C per thread.
    fn few_columns(&self) -> bool {
        let (m, n) = (self.m, self.n);
        self.plain
            && match self.elem {
                Elem::F32 => {
                    (m >= 1024 && (3..=32).contains(&n)) || (m >= 4096 && (33..=64).contains(&n))
                }
                Elem::F64 => m >= 2048 && (3..=16).contains(&n),
                _ => false,
            }
    }

    /// Stream-K on tiles as short as C: 7-127 rows of f32, one product of any form; 3-48
    /// rows of f64, dense row-major operands only. Elsewhere the DMMA kernels ran ahead
    /// (H100: 64 x 8192 x 8192 `dmma_small_buffered` 0.251 ms against `stream_k_64`'s
    /// 0.432, bench/2026-11-26-h100-f64-few-rows.md; B transposed, 64 x 8192 x 4096 0.138
    /// against 0.306), and f32 in other forms gained (0.237 ms against `stream_k`'s 0.367).
    fn few_rows(&self) -> bool {
        let (rows, form) = match self.elem {
            Elem::F32 => (7..=127, self.plain || self.batch == 1),
            Elem::F64 => (3..=48, self.plain),
            _ => return false,
        };
        rows.contains(&self.m) && form
    }

    /// `dmma_few_rows`' shapes: f64 on Hopper, one dense product with B as stored or stored
    /// `n x k`, wide and deep enough to split (at least 1024 columns, 256 K steps); 3-48
    /// rows (1-2 against B stored `n x k`), 49-64 where `dmma_small_buffered`'s 64 x 64 tiles
    /// would leave half the SMs idle (its rows read B once where this kernel's two strips
    /// read it twice: 64 x 8192 x 4096 with B stored `n x k`, 79.0% of cuBLAS against
    /// 80.5%).
    fn dmma_few_rows(&self) -> bool {
        let rows = match self.m {
            1..=2 => self.b_transposed,
            3..=48 => true,
            49..=64 => 2 * self.n.div_ceil(64) <= self.sms,
            _ => false,
        };
        self.elem == Elem::F64
            && self.hopper
            && (self.plain || self.b_transposed)
            && rows
            && self.n >= 1024
            && self.k >= 256
    }

    /// `dmma_few_columns`' shapes: f64 on Hopper, one dense product with B as stored or
    /// stored `n x k`, 9-64 columns (`few_columns` keeps 3-8: 4096 x 8 x 4096 level), tall
    /// and deep enough to split (at least 1024 rows and K steps); 49-64 columns only on few
    /// row strips, where a thread's 64 accumulators fit eight warps at one block per SM
    /// (8192 x 64 x 8192: 0.241-0.253 ms on four warps, 0.242 on eight, against
    /// `dmma_small_buffered`'s 0.241).
    fn dmma_few_columns(&self) -> bool {
        self.elem == Elem::F64
            && self.hopper
            && (self.plain || self.b_transposed)
            && (9..=64).contains(&self.n)
            && (self.n <= 48 || self.few_column_strips())
            && self.m >= 1024
            && self.k >= 1024
    }

    /// `dmma_small_split`'s shapes: f64 on Hopper, one dense product with B as stored or
    /// stored `n x k`, both sides past 48 (the narrow strips keep 1-48), whose 64 x 64 tiles
    /// are too few for three blocks per SM, so that its plan cuts K into two or more slices.
    fn dmma_small_split(&self) -> bool {
        use rgemm_kernels::parts::schedule::split_k_strips::splits;
        let spec = Kernel::DmmaSmallSplit.spec();
        let resident = self.sms * spec.min_blocks_per_sm.f64.unwrap_or(1) as u64;
        let mnk = (self.m as usize, self.n as usize, self.k as usize);
        self.elem == Elem::F64
            && self.hopper
            && (self.plain || self.b_transposed)
            && self.m.min(self.n) > 48
            && splits(mnk, (spec.rows(), spec.cols()), resident as usize) >= 2
    }

    /// Few row strips of `dmma_few_columns`' 128 x 64: at most a quarter of the SMs, where
    /// eight warps a block, one block per SM, run ahead.
    fn few_column_strips(&self) -> bool {
        4 * self.tiles(Kernel::DmmaFewColumns8Warps) <= self.sms
    }

    /// `few_rows`' shapes: up to 256 rows of f32, or 16 of f64, against B stored `n x k`,
    /// wide and deep enough to fill the GPU with strips; f64 with 17-32 rows too where
    /// `dmma_small_buffered`'s 64 x 64 tiles would be fewer than the SMs.
    fn few_rows_b_transposed(&self) -> bool {
        let rows = match self.elem {
            Elem::F32 => self.m <= 256,
            Elem::F64 => self.m <= 16 || (self.m <= 32 && self.n.div_ceil(64) <= self.sms),
            _ => false,
        };
        self.b_transposed && rows && self.n >= 1024 && self.k >= 256
    }

    /// `thin`'s shapes: up to 16 rows (8 outside 16-bit), or one or two columns.
    fn thin(&self) -> bool {
        let side = self.m.min(self.n);
        self.batch == 1
            && match self.m <= self.n {
                true => side <= 16 && (self.sixteen_bit() || side <= 8),
                false => self.n <= 2,
            }
    }
}

/// What a row puts next in the order.
#[derive(Clone, Copy, Debug)]
pub enum Then {
    Kernels(&'static [Kernel]),
    /// Every row of another table that holds.
    Table(&'static [Row]),
}

/// One row of the rule.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// Where it applies, in words.
    pub when: &'static str,
    pub holds: fn(&Product) -> bool,
    pub then: Then,
    /// The record (under `docs/`) whose measurements put it here.
    pub record: &'static str,
}

const fn row(
    when: &'static str,
    holds: fn(&Product) -> bool,
    kernels: &'static [Kernel],
    record: &'static str,
) -> Row {
    Row {
        when,
        holds,
        then: Then::Kernels(kernels),
        record,
    }
}

use Kernel::*;

/// The 16-bit `wgmma` kernels (Hopper), best first for the shape: block tiles of 128 x 256,
/// 128 x 192, 128 x 128 or 128 x 64, as the product's tiles fill the SMs. Every form the TMA kernels
/// read (leading dimensions, transposes, alpha/beta, batches).
pub const WGMMA: &[Row] = &[
    // One row of 128 x 64 tiles that fill at most half the SMs, K long enough for slices:
    // the split kernel, B (read by every tile) then streamed by every SM (H200, 128 x 4096
    // x 8192 B^T, 64 tiles in 2 slices: 33.3-35.3 us against `wgmma_128x64`'s 42.0-43.0,
    // 100.3-103.9% of cuBLAS against 85.5-90.2%). Not for many rows of few columns, whose
    // tiles each stream their own rows of A: 8192 x 16 x 8192 52.6 us against 49.0.
    row(
        "one row of 128 x 64 tiles, at most half a wave, K in slices over the rest",
        |p| p.m <= 128 && wgmma_narrowest(p) && p.splits(WgmmaSplit128x64) > 1,
        &[WgmmaSplit128x64],
        "bench/2026-11-28-h200-split-tail.md",
    ),
    // 128 x 64 tiles where they fit one wave and either C has a whole row of tiles, or few
    // columns, or the tiles fill more than half the SMs (bf16, H100, % of cuBLAS against
    // `wgmma_128x128`'s: 1024^3 146% against 129%; 128 x 4096 x 4096 97% against 86%; 256 x
    // 4096 x 4096 119% against 101%; 4096 x 16 x 4096 82% against 68%; 16 x 8192 x 8192 87%
    // against 78%; with fewer rows and tiles it lost: 16 and 32 x 4096 x 4096). So do batches
    // of one-tile products (512 x 128^3: 27.5 us a call against `wgmma_persistent`'s 30.0).
    row(
        "128 x 64 tiles fit one wave and fill it, or one-tile products in a batch",
        wgmma_narrowest,
        &[Wgmma128x64],
        "bench/2026-11-25-h100-bf16-f16-wgmma-tiles.md",
    ),
    // 128 x 128 tiles where they take fewer waves' time than both wider tiles: a wave of
    // them is half a wide wave's work, at 1.12-1.16 times its time per FLOP (bf16, H100:
    // 1024 x 4096 x 4096 630 against 562 TFLOP/s; 1536 x 4096 x 4096 546 against 628). Where
    // 128 x 192 tiles take less (next row), they won (H200, bf16, K 4096: 3072 x 3072 129.3
    // against 114.6 us, 2048 x 4608 132.6 against 117.2, 1536 x 4096 82.3 against 78.9).
    row(
        "128 x 128 tiles take fewer waves' time than 128 x 256 and 128 x 192 ones",
        |p| {
            let time_128x128 = 23 * waves_of(p, Wgmma128x128);
            wgmma_narrowest(p)
                || (time_128x128 < 40 * waves_of(p, WgmmaPersistent)
                    && time_128x128 <= 33 * waves_of(p, Wgmma128x192))
        },
        &[Wgmma128x128],
        "bench/2026-11-28-h200-tiles-by-waves.md",
    ),
    // 128 x 192 tiles where they take fewer waves' time than 128 x 256 ones, at three
    // quarters of the work a tile and 1.1 times its time per FLOP: 512 x 6144 x 4096 B^T is
    // one wave either way, 128 tiles of 128 x 192 against 96 of 128 x 256 (H200, 98.6-104.9%
    // of cuBLAS against `wgmma_tma`'s 84.9-87.6%). Where the waves differ less it lost or
    // tied: 8192^3 (21 waves against 16) 99.5% against 100.2%, 4096^3 85% against 99%.
    row(
        "128 x 192 tiles take fewer waves' time than 128 x 256 ones",
        |p| 33 * waves_of(p, Wgmma128x192) < 40 * waves_of(p, WgmmaPersistent),
        &[Wgmma128x192],
        "bench/2026-11-28-h200-tiles-128x192.md",
    ),
    // The persistent grid leads, batches of one-tile products included (bf16, 512 x 128^3,
    // H200: 70.6 against `wgmma_tma`'s 65-66 TFLOP/s); at most one tile per SM it has nothing
    // to overlap, and lost (bf16 1024^3, 32 tiles: 92.9 against 110.4 TFLOP/s).
    row(
        "more 128 x 256 tiles than SMs: the persistent grid",
        |p| p.tiles(WgmmaPersistent) > p.sms,
        &[WgmmaPersistent, WgmmaTma, WgmmaAsync],
        "bench/2026-11-23-h200-bf16-f16-wgmma-one-wave.md",
    ),
    row(
        "at most one 128 x 256 tile per SM: a grid of tiles",
        |p| p.tiles(WgmmaPersistent) <= p.sms,
        &[WgmmaTma, WgmmaPersistent, WgmmaAsync],
        "bench/2026-11-23-h200-bf16-f16-wgmma-one-wave.md",
    ),
];

fn wgmma_narrowest(p: &Product) -> bool {
    let quarter = p.tiles(Wgmma128x64);
    let one_tile_products = p.batch > 1 && p.m <= 128 && p.n <= 128;
    one_tile_products || (quarter <= p.sms && (p.m >= 128 || p.n <= 64 || 2 * quarter > p.sms))
}

fn waves_of(p: &Product, kernel: Kernel) -> u64 {
    p.tiles(kernel).div_ceil(p.sms)
}

/// The shapes of the pair kernels' rows: 16-bit on Hopper with an f32 C, operands TMA reads
/// whose rows lie off the 32-byte sectors, more 128 x 256 tiles than SMs.
fn pairs_off_sectors(p: &Product) -> bool {
    p.sixteen_bit() && p.hopper && !p.narrow_c && p.tma_operands && p.packs_off_sectors()
}

/// Rounds of a cluster kernel's persistent grid: its squares of tiles (two for a pair, four
/// for a square) over the clusters resident at once. Clusters of two fill the 132 SMs of an
/// H100 or H200; of four the driver places 30 (120 SMs: `cuOccupancyMaxActiveClusters`, H200),
/// taken here in that proportion of the SMs.
fn cluster_rounds(p: &Product, kernel: Kernel) -> u64 {
    let spec = kernel.spec();
    let blocks = spec.cluster() as u64;
    let (down, across, resident) = match blocks {
        4 => (2, 2, p.sms * 30 / 132),
        _ => (blocks, 1, p.sms / blocks),
    };
    let squares = p.m.div_ceil(down * spec.rows() as u64)
        * p.n.div_ceil(across * spec.cols() as u64)
        * p.batch.max(1);
    squares.div_ceil(resident.max(1))
}

/// Whether the last wave of `kernel`'s tiles holds more than a quarter of the SMs' (a full
/// one does).
fn last_wave_over_a_quarter(p: &Product, kernel: Kernel) -> bool {
    let last = p.tiles(kernel) % p.sms;
    last == 0 || 4 * last > p.sms
}

/// Decode shapes (up to 16 rows of C, one product): the kernels that read B once at full
/// bandwidth; which one leads depends on the rows.
pub const DECODE: &[Row] = &[
    // On Hopper, where TMA reads A and B, `decode_tma` leads, B row-major or transposed
    // (the only decode kernel that reads B transposed; the `wgmma` kernels ran those at
    // 51-92% of cuBLAS). H100, two warps per panel: Llama-3-8B layers with B transposed at
    // 1-16 rows, geometric mean 97.6-100.5% of cuBLAS per type and run against one warp
    // per panel's 86.3-90.7%; 1-2 rows with an f32 C, 102-128% against `decode_async`'s 87-116%
    // (bench/2026-11-26-h100-decode-tma-warps.md).
    row(
        "16-bit on Hopper, TMA reads the operands",
        |p| p.tma_decode(),
        &[DecodeTma],
        "bench/2026-11-26-h100-decode-tma-warps.md",
    ),
    // From 9 rows the `wgmma` kernels, where TMA reads the operands (H100, bf16: 16 x 8192 x
    // 8192 `wgmma_128x64` 87% of cuBLAS against `decode_mma`'s 72%).
    Row {
        when: "16-bit on Hopper, 9-16 rows, TMA reads the operands: the wgmma kernels",
        holds: |p| p.m > 8 && p.tma_rows && p.sixteen_bit() && p.hopper,
        then: Then::Table(WGMMA),
        record: "bench/2026-11-25-h100-bf16-f16-wgmma-tiles-decode.md",
    },
    // bf16 on an H200: `decode_async` for 1-2 rows, `decode_mma` for 3-8 (x 8192 x 8192 at
    // 76-88% of cuBLAS against `decode`'s 31-64%).
    row(
        "1-2 rows",
        |p| p.m <= 2,
        &[DecodeAsync, Decode, DecodeMma],
        "bench/2026-11-22-h200-bf16-f16-decode.md",
    ),
    row(
        "3-8 rows of 16-bit",
        |p| (3..=8).contains(&p.m) && p.sixteen_bit(),
        &[DecodeMma, Decode, DecodeAsync],
        "bench/2026-11-22-h200-bf16-f16-decode.md",
    ),
    row(
        "3-8 rows of f32 or f64",
        |p| (3..=8).contains(&p.m) && !p.sixteen_bit(),
        &[Decode, DecodeAsync, DecodeMma],
        "bench/2026-11-23-h200-f32-f64-few-rows.md",
    ),
    row(
        "9-16 rows",
        |p| (9..=16).contains(&p.m),
        &[DecodeMma, DecodeAsync, Decode],
        "bench/2026-11-22-h200-bf16-f16-decode.md",
    ),
];

/// f64 on the FP64 tensor cores (Hopper).
///
/// Since edge blocks load the whole tile that ends at C's edge (`wide_tile`'s `inside`),
/// a side that no tile divides costs no more than a whole one where C has a tile's rows and
/// columns, and the choice between 128 x 64 tiles (`dmma_k4`, two blocks per SM) and 64 x 64
/// ones (`dmma_small_buffered`, three) follows how full their waves are (H200, % of cuBLAS,
/// `dmma_k4` against `dmma_small_buffered`: 2000^3 93.3 / 89.8 with `dmma_k4`'s waves 97%
/// full, 3000^3 93.6 / 90.6 at 85%; 2500^3 91.8 / 95.2 at 76%, 1200^3 75.7 / 94.0 at 72%,
/// 1500^3 84.0 / 94.1 at 55%; docs/bench/2026-11-28-h200-f64-moved-edges.md).
pub const DMMA: &[Row] = &[
    // K of at most 512 steps (32 phases of 16): 64 x 64 tiles, three blocks per SM, however
    // many tiles; `dmma_k4`'s K steps of 4 in a function of their own pay off over a long K
    // only (H200, ms, against `dmma_k4`: 128 x 256^3 0.106 against 0.115-0.116, 256 x 128^3
    // 0.043 against 0.048-0.050, 4096 x 4096 x 128 0.110 against 0.140, 2048 x 2048 x 512
    // 0.097 against 0.103, 128 x 256 x 256 x 512 0.191 against 0.190; 2048^3 0.340 against
    // 0.326-0.328).
    row(
        "K of at most 512",
        |p| p.k <= 512,
        &[DmmaSmallBuffered, DmmaBuffered, DmmaK4, DmmaWarps],
        "bench/2026-11-29-h200-f64-short-k-probe.txt",
    ),
    // 64 x 64 tiles where 128 x 64 ones would be fewer than the SMs, or where C has fewer than
    // a 128 x 64 tile's rows or columns (those edge blocks cannot move inside): the buffered
    // mainloop (H100, % of cuBLAS: 512^3 96.2% against `dmma_small`'s 76.8%; H200, 1000^3
    // 103.1% against `dmma_k4`'s 96.3%).
    row(
        "128 x 64 tiles fewer than the SMs, or C under a 128 x 64 tile",
        |p| dmma_wide_tiles(p) < p.sms || p.m < 128 || p.n < 64,
        &[DmmaSmallBuffered, DmmaSmall, DmmaK4, DmmaWarps],
        "bench/2026-11-28-h200-f64-moved-edges.md",
    ),
    // `dmma_k4` where its waves of two blocks per SM are at least 80% full: H200, 4096^3
    // 93.1%, 2048^3 93.0%, 2000^3 93.3%, 3000^3 93.6% of cuBLAS against
    // `dmma_small_buffered`'s 89.5-90.6%. From one tile per SM: H100, 8192 x 256 x 8192
    // (256 tiles) 98.5-98.8% against 89.3-89.5% (bench/2026-11-26-h100-slow-rows-forced.md).
    row(
        "128 x 64 tiles from one per SM, in waves at least 80% full",
        |p| dmma_wide_tiles(p) >= p.sms && dmma_waves_full(p),
        &[DmmaK4, DmmaSmallBuffered, DmmaWarps],
        "bench/2026-11-28-h200-f64-moved-edges.md",
    ),
    // Emptier waves of 128 x 64 tiles: 64 x 64 ones, three blocks per SM.
    row(
        "128 x 64 tiles in emptier waves",
        |p| dmma_wide_tiles(p) >= p.sms,
        &[DmmaSmallBuffered, DmmaK4, DmmaWarps, DmmaSmall],
        "bench/2026-11-28-h200-f64-moved-edges.md",
    ),
    row(
        "then the buffered and first DMMA kernels",
        |_| true,
        &[DmmaBuffered, Dmma],
        "bench/2026-11-24-h200-f64-dmma-buffered.md",
    ),
];

fn dmma_wide_tiles(p: &Product) -> u64 {
    p.m.div_ceil(128) * p.n.div_ceil(64) * p.batch.max(1)
}

/// Whether `dmma_k4`'s 128 x 64 tiles fill its waves (two blocks per SM) at least 80%: the
/// tiles over the blocks of every wave the grid takes.
fn dmma_waves_full(p: &Product) -> bool {
    let (tiles, wave) = (dmma_wide_tiles(p), 2 * p.sms.max(1));
    5 * tiles >= 4 * tiles.div_ceil(wave) * wave
}

/// The rule: every row that holds, in order.
pub const RULE: &[Row] = &[
    // Hopper's `wgmma` on packed operands (A in place where TMA reads it), every form (H200:
    // 94% of cuBLAS at 4096^3 against `mma_tf32`'s 27%); `mma.sync` elsewhere.
    // A batch of products of 65-128 columns and more than 64 rows: `mma_tf32`'s 128 x 128
    // tiles, where `wgmma_tf32`'s 128 x 256 ones leave half their columns empty (H100,
    // 256 x 128^3: 94.1-98.9% of cuBLAS against 71.1-80.9%, three runs; 512 x 64^3 and
    // 128 x 256^3 stay on `wgmma_tf32`; bench/2026-11-26-h100-slow-rows-forced.md).
    row(
        "TF32 asked for, on Hopper, a batch of products of 65-128 columns",
        |p| {
            p.precision == Precision::Tf32
                && p.hopper
                && p.batch > 1
                && p.m > 64
                && (65..=128).contains(&p.n)
        },
        &[MmaTf32],
        "bench/2026-11-26-h100-slow-rows-forced.md",
    ),
    // One TF32 product whose last wave of 128 x 256 tiles is at most half full: that wave
    // split over K (H200, against `wgmma_tf32`: 4096 x 256 x 16384 0.319-0.326 -> 0.125-0.126
    // ms, 46-50% -> 115-117% of cuBLAS; 8192 x 128 x 8192 0.174-0.192 -> 0.142-0.143).
    row(
        "TF32 asked for, on Hopper, one product, the last wave split over K",
        |p| {
            p.precision == Precision::Tf32
                && p.hopper
                && p.batch == 1
                && p.splits(WgmmaTf32Split) > 1
        },
        &[WgmmaTf32Split, WgmmaTf32],
        "bench/2026-11-28-h200-tf32-split.md",
    ),
    row(
        "TF32 asked for, on Hopper",
        |p| p.precision == Precision::Tf32 && p.hopper,
        &[WgmmaTf32, MmaTf32],
        "bench/2026-11-24-h200-tf32-wgmma-rs.md",
    ),
    row(
        "TF32 asked for, before Hopper",
        |p| p.precision == Precision::Tf32 && !p.hopper,
        &[MmaTf32],
        "bench/2026-11-22-h200-f32-tf32-3xtf32.md",
    ),
    row(
        "3xTF32 asked for, on Hopper",
        |p| p.precision == Precision::Tf32x3 && p.hopper,
        &[Wgmma3xTf32, Mma3xTf32],
        "bench/2026-11-23-h200-3xtf32-wgmma.md",
    ),
    row(
        "3xTF32 asked for, before Hopper",
        |p| p.precision == Precision::Tf32x3 && !p.hopper,
        &[Mma3xTf32],
        "bench/2026-11-22-h200-f32-tf32-3xtf32.md",
    ),
    // f64 whose 64 x 64 tiles are too few to give three blocks per SM (H200, time against the
    // kernel before: 8192 x 64 x 8192 0.209 ms against `dmma_small_buffered`'s 0.244, 64 x
    // 8192 x 4096 with B stored `n x k` 0.115 against 0.128-0.130, 4096 x 64 x 4096 0.062
    // against `dmma_few_columns_8_warps`' 0.074, 64 x 4096 x 4096 0.062-0.064 against
    // `dmma_few_rows`' 0.071-0.073, 512 x 512 x 16384 0.192 against 0.461, 256 x 256 x 65536
    // 0.216 against 1.799): each tile's blocks take slices of K. Not at 1-48 rows or columns
    // (8192 x 48 x 8192 0.229 against `dmma_few_columns`' 0.211; 48 x 8192 x 4096, B `n x k`,
    // 0.130 against `dmma_few_rows_64`'s 0.110).
    row(
        "f64 on Hopper, one dense product, 64 x 64 tiles too few for three blocks per SM",
        |p| p.dmma_small_split(),
        &[DmmaSmallSplit, DmmaSmallBuffered],
        "bench/2026-11-29-h200-f64-split-tiles.md",
    ),
    // f64 with few rows on the FP64 tensor cores, turned over (`C^T = B^T A^T`, C's rows in
    // tiles of 8), in strips of 32 rows split over K (H200, % of cuBLAS against the kernel
    // before: 17 x 8192 x 4096 with B stored `n x k` 96.7 against `few_rows`' 50.5, 32 x 4096
    // x 4096 98.6 against `stream_k_32`'s 58.0, 64 x 4096 x 4096 85.6 against
    // `dmma_small_buffered`'s 49.1); 33-48 rows in one strip of 64, which reads B once
    // (40 x 8192 x 4096, B stored `n x k`: 0.108 ms against 0.135 in strips of 32; 48 x 4096
    // x 4096 0.067 against 0.071).
    row(
        "33-48 rows of f64 on Hopper, one dense product, B as stored or n x k",
        |p| p.dmma_few_rows() && (33..=48).contains(&p.m),
        &[DmmaFewRows64, DmmaFewRows],
        "bench/2026-11-28-h200-f64-dmma-few-rows.md",
    ),
    row(
        "1-64 rows of f64 on Hopper, one dense product, B as stored (3-64 rows) or n x k",
        |p| p.dmma_few_rows(),
        &[DmmaFewRows],
        "bench/2026-11-28-h200-f64-dmma-few-rows.md",
    ),
    // f64 with few columns on the FP64 tensor cores (C's columns in tiles of 8), in strips
    // of 128 x 64 split over K (H200, time against the kernel before: 8192 x 24 x 8192 0.168
    // ms against `stream_k_narrow_32`'s 0.299, 8192 x 48 x 8192 0.211 against
    // `dmma_small_buffered`'s 0.354, 8192 x 16 x 8192 0.165 against `few_columns`' 0.177);
    // eight warps a block, one block per SM, where the strips are few (4096 x 64 x 4096 0.076
    // against four warps' 0.088 and `stream_k_narrow`'s 0.133); 49-64 columns only there.
    row(
        "9-64 columns of f64 on Hopper, one dense product, few row strips",
        |p| p.dmma_few_columns() && p.few_column_strips(),
        &[DmmaFewColumns8Warps, DmmaFewColumns],
        "bench/2026-11-28-h200-f64-dmma-few-columns.md",
    ),
    row(
        "9-48 columns of f64 on Hopper, one dense product, B as stored or n x k",
        |p| p.dmma_few_columns(),
        &[DmmaFewColumns, DmmaFewColumns8Warps],
        "bench/2026-11-28-h200-f64-dmma-few-columns.md",
    ),
    // Up to 127 rows of f32 or f64: stream-K on tiles as short as C (H200, f32 x 4096 x
    // 4096, % of cuBLAS: 16 rows 171% with `stream_k_32` against `decode`'s 94%, 32 rows
    // 103%, 48 rows 94% with `stream_k_64`, 96 rows 102% against `stream_k`'s 87%). A C
    // whose last tile is partial runs one tile height: mixing whole and edge tiles cost 65%
    // more time. Fewer rows still: f32 from 7 rows, f64 from 3 (x 4096 x 4096, 4 to 8 rows:
    // 65-72% of cuBLAS against `thin`'s 23-43%). f32 in any form (H100, B transposed, 17 and
    // 64 x 8192 x 4096: 0.184 and 0.237 ms against `stream_k`'s 0.364 and 0.367,
    // bench/2026-11-26-h100-few-rows-forms.md).
    // `few_rows` (whole columns of C per thread, B's rows read once through shared memory)
    // for few rows against B stored `n x k` (H200, x 8192 x 4096, time against the kernel
    // before: f32 1-4 rows 0.13-0.21 of `stream_k`'s, 8-32 rows 0.27-0.58 of `stream_k_32`'s,
    // 48-64 0.48-0.63 of `stream_k_64`'s, 96 0.54-0.59, 128-256 0.52-0.99 of `stream_k`'s or
    // `paired_lanes`'; f64 1-16 rows 0.24-0.86 of `dmma_small_buffered`'s; 17-32 rows 0.44-0.90
    // where its tiles are fewer than the SMs, 1.38-1.40 at 14336 columns, where they are not).
    // 33-64 rows of f32 against B stored `n x k` on `few_rows_64` (B read once for the
    // whole strip, 8 x 8 thread tiles) where its strips are at least three quarters of the
    // SMs (H200, against `few_rows`: 64 x 14336 x 4096 0.244 ms against 0.255-0.256); with
    // fewer it tied or lost (64 x 8192 x 4096, 64 strips: 0.137-0.141 against 0.134-0.137;
    // 64 x 4096 x 4096 0.081-0.083 against 0.074).
    row(
        "33-64 rows of f32 against B stored n x k, its 64-row strips for most SMs",
        |p| {
            p.few_rows_b_transposed()
                && p.elem == Elem::F32
                && (33..=64).contains(&p.m)
                && 4 * p.tiles(FewRows64) >= 3 * p.sms
        },
        &[FewRows64],
        "bench/2026-11-29-h200-f32-few-rows-64.md",
    ),
    row(
        "1-256 rows of f32 (1-16 of f64, 17-32 on few tiles) against B stored n x k",
        |p| p.few_rows_b_transposed(),
        &[FewRows],
        "bench/2026-11-28-h200-few-rows-b-transposed.md",
    ),
    row(
        "7-32 rows of f32 (3-32 of f64)",
        |p| p.few_rows() && p.m <= 32,
        &[StreamK32],
        "bench/2026-11-23-h200-f32-f64-few-rows.md",
    ),
    row(
        "33-64 rows of f32 (33-48 of f64)",
        |p| p.few_rows() && (33..=64).contains(&p.m),
        &[StreamK64],
        "bench/2026-11-23-h200-f32-f64-few-rows.md",
    ),
    row(
        "65-127 rows of f32, a multiple of 32",
        |p| p.few_rows() && p.m > 64 && p.m.is_multiple_of(32),
        &[StreamK32],
        "bench/2026-11-23-h200-f32-f64-few-rows.md",
    ),
    // 33-64 columns of f32 on `few_columns_64` (A read once for the whole strip, 8 x 8
    // thread tiles) where its strips and slices of K fill the SMs (H200, against
    // `few_columns`: 8192 x 64 x 8192 0.248-0.249 ms against 0.262-0.266, 16384 x 64 x 4096
    // 0.242-0.246 against 0.264-0.265, 8192 x 40 x 8192 0.248-0.250 against 0.270-0.272);
    // with fewer it lost (4096 x 64 x 4096, 256 blocks of 396: 0.086-0.088 against 0.081-0.082).
    row(
        "33-64 columns of f32 whose 64-column strips and slices of K fill the SMs",
        |p| p.few_columns() && p.elem == Elem::F32 && p.n > 32 && p.strips_fill(FewColumns64),
        &[FewColumns64],
        "bench/2026-11-29-h200-f32-few-columns-64.md",
    ),
    // `few_columns` (whole rows of C per thread, A read once through shared memory) leads
    // for 3 to 32 columns of f32 from 1024 rows (H200, 4096 x N x 4096: N = 8 129% of
    // cuBLAS, 16 124%, 32 94% against `stream_k_narrow_32`'s 71-73%), for up to 64 columns
    // from 4096 rows (4096 x 63 x 4096: 87.5% against 50.8%), and for 3 to 16 columns of f64
    // from 2048 rows (4096 x 8 x 4096 100% against 60%).
    row(
        "3-32 columns of f32 from 1024 rows (33-64 from 4096), 3-16 of f64 from 2048",
        |p| p.few_columns(),
        &[FewColumns],
        "bench/2026-11-23-h200-f32-f64-few-columns.md",
    ),
    // Few columns under many rows: stream-K on 128 x 32 tiles (3 to 32 columns, f32 from
    // 4096 rows, and f64 below 16384 rows, where `dmma_small`'s tiles fill the GPU: 16384 x
    // 32 x 4096 62% against 46%).
    row(
        "3-32 columns under many rows",
        |p| {
            p.m > 64
                && p.plain
                && (3..=32).contains(&p.n)
                && ((p.elem == Elem::F64 && p.m < 16384) || (p.elem == Elem::F32 && p.m >= 4096))
        },
        &[StreamKNarrow32],
        "bench/2026-11-23-h200-f32-f64-stream-k-narrow.md",
    ),
    // 128 x 64 tiles for 3 to 64 columns (f32 x 4096 x N x 4096: `stream_k` 47-61% of
    // cuBLAS for N = 8 to 64, `stream_k_narrow` 67-85%); f64 keeps the DMMA kernels from
    // 8192 rows (8192 x 64 x 8192: `dmma_small` 58%, `stream_k_narrow` 43%).
    row(
        "3-64 columns under many rows",
        |p| {
            p.m > 64
                && p.plain
                && (3..=64).contains(&p.n)
                && (p.elem == Elem::F32 || (p.elem == Elem::F64 && p.m < 8192))
        },
        &[StreamKNarrow],
        "bench/2026-11-23-h200-f32-f64-stream-k-narrow.md",
    ),
    Row {
        when: "up to 16 rows, one product: the decode kernels",
        holds: |p| p.m <= 16 && p.batch == 1,
        then: Then::Table(DECODE),
        record: "bench/2026-11-22-h200-bf16-f16-decode.md",
    },
    // 17-32 rows of 16-bit on Hopper: `decode_tma` in sweeps of two boxes of A a stage, B
    // read once, ahead of the `wgmma` kernels' 128-row tiles (H100, % of cuBLAS: 32 x 4096 x
    // 4096 bf16 89.4% against 72.3%, bf16 C 75.4% against 58.9%; the suite's 17 x 8192 x 4096
    // with B transposed 89.3-95.2% against 86.5-90.5%), which follow it.
    // Where 128 x 128 tiles fill at most half the SMs (up to 8448 columns) with K in
    // slices over the rest, the split `wgmma` kernel leads them (H200, 17 x 8192 x 4096 B^T:
    // 32.2-33.0 us against `decode_tma`'s 34.1-36.7, 91.8-97.4% of cuBLAS against 81.9-88.4%).
    // So it does where they fill one wave or less with K from 2048 (H200, B^T, K = 4096,
    // back to back: 17-32 x 10240 28.2-31.2 us against 32.1-33.0, x 14336 35.1-38.4 against
    // 40.1-41.4; at x 28672, two waves of tiles, `decode_tma` ties or leads: 65.1-65.5
    // against 65.1-70.8; bench/2026-11-29-h200-rows-17-32-probe.txt).
    row(
        "17-32 rows of 16-bit on Hopper, one product, 128 x 128 tiles at most half a wave (K in slices) or one wave (K from 2048)",
        |p| {
            (17..=32).contains(&p.m)
                && p.batch == 1
                && p.sixteen_bit()
                && p.hopper
                && p.tma_operands
                && (p.splits(WgmmaSplit128x128) > 1
                    || (p.k >= 2048 && p.tiles(WgmmaSplit128x128) <= p.sms))
        },
        &[WgmmaSplit128x128],
        "bench/2026-11-29-h200-rows-17-32-probe.txt",
    ),
    row(
        "17-32 rows of 16-bit on Hopper, one product, TMA reads the operands",
        |p| (17..=32).contains(&p.m) && p.batch == 1 && p.tma_decode(),
        &[DecodeTma],
        "bench/2026-11-26-h100-decode-tma-sweeps.md",
    ),
    // `thin` after the decode kernels for few rows; for few columns only for one or two
    // (H200, 4096 x 1 x 4096: 122% of cuBLAS in f32, 159% in bf16; at 8 columns 30% and 19%).
    row(
        "matrix-vector and near it",
        |p| p.thin(),
        &[Thin],
        "bench/2026-11-23-h200-f32-bf16-columns.md",
    ),
    // Rows TMA reads off the 32-byte sectors (the next rows but one), f32 C: clusters of two
    // blocks on tiles one above the other, each copying half of B into both by TMA
    // multicast, so each SM's TMA issues half B's rows, without a pack (H200, bf16, against
    // the packed kernels, alternately twice: 3000^3 on 128 x 192 pairs 0.108 against
    // `wgmma_packed_split`'s 0.118 ms, 2504^3 0.072 against `wgmma_packed`'s 0.080, 3000 x
    // 6000 x 3000 0.198 against 0.212). A wave of 128 x 192 pairs took 0.9 times a wave of
    // 128 x 256 ones (36 against 40); where the last wave of 128 x 256 tiles holds at most a
    // quarter of the SMs' tiles the packed split led (5000^3 0.431 against 0.457-0.464,
    // 4104^3 0.266-0.271 against 0.287-0.290).
    row(
        "16-bit on Hopper, f32 C, rows off the 32-byte sectors TMA reads, 128 x 192 pairs take fewer waves' time and fill over a quarter of their last",
        |p| {
            pairs_off_sectors(p)
                && 36 * waves_of(p, WgmmaPairs128x192) < 40 * waves_of(p, WgmmaPairs)
                && last_wave_over_a_quarter(p, WgmmaPairs128x192)
        },
        &[WgmmaPairs128x192],
        "bench/2026-11-29-h200-pairs.md",
    ),
    // Where clusters of four take no more rounds than clusters of two, squares of tiles that
    // share both operands' copies lead, though 30 clusters of four hold 120 of the 132 SMs
    // (H200, bf16, against the kernel the rule took before, one call: 5000^3 0.408 ms
    // against `wgmma_packed_split`'s 0.438 and `wgmma_pairs`' 0.457, 2504^3 0.070 against
    // 0.072-0.074, 3000 x 6000 x 3000 0.193 against 0.200-0.201; 3000^3, three rounds either
    // way, 0.116 against 128 x 192 pairs' 0.107, and 128 x 192 squares lost everywhere).
    row(
        "16-bit on Hopper, f32 C, rows off the 32-byte sectors TMA reads, squares of tiles in no more rounds than pairs: clusters of four",
        |p| pairs_off_sectors(p) && cluster_rounds(p, WgmmaQuads) <= cluster_rounds(p, WgmmaPairs),
        &[WgmmaQuads],
        "bench/2026-11-29-h200-quads.md",
    ),
    row(
        "16-bit on Hopper, f32 C, rows off the 32-byte sectors TMA reads, the last wave of 128 x 256 tiles over a quarter full: clusters of two",
        |p| pairs_off_sectors(p) && last_wave_over_a_quarter(p, WgmmaPairs),
        &[WgmmaPairs],
        "bench/2026-11-29-h200-pairs.md",
    ),
    // The packed kernels' shapes (the next two rows) whose last wave of 128 x 256 tiles is
    // at most half full: that wave split over K (H200, bf16, f32 C, against `wgmma_packed`
    // alternately: 3000^3, the last 24 of 288 tiles in 5 slices, 127.1-127.3 -> 117.0-117.9
    // us; 64 x 4100 x 4096 73.9-74.8 -> 54.2-54.6; 5000^3 440.1-440.4 -> 428.7-430.7). Not
    // with a 16-bit C, whose entries spill at ptxas's 168 registers (100-156 bytes).
    row(
        "16-bit on Hopper, f32 C, packed (the next two rows), the last wave split over K",
        |p| {
            let packs = !p.tma_operands || p.packs_off_sectors();
            let split = p.splits(WgmmaPackedSplit) > 1;
            p.sixteen_bit() && p.hopper && !p.narrow_c && packs && split
        },
        &[WgmmaPackedSplit, WgmmaPacked],
        "bench/2026-11-28-h200-packed-split.md",
    ),
    // 16-bit operands TMA cannot read (a leading dimension or batch stride off 16 bytes):
    // packed first, then the persistent `wgmma` kernel (H100, % of cuBLAS: 4096 x 4096 x 4099
    // bf16 400% against `fragment_buffered`'s 15%, 4096 x 1001 x 4096 314% against
    // `wgmma_tma`'s fallback at 33%, 1500^3 163% against 26%).
    row(
        "16-bit on Hopper, A or B not in rows TMA reads: packed first",
        |p| p.sixteen_bit() && p.hopper && !p.tma_operands,
        &[WgmmaPacked],
        "bench/2026-11-26-h100-suite.md",
    ),
    // Rows TMA reads but not whole 32-byte sectors apart, more than a wave of tiles: each
    // box row touches a sector more than it reads, and the packed copy's aligned rows win
    // (bf16, H100, % of cuBLAS against the best TMA kernel's: 3000^3 66.2% against 60.7%,
    // 5000^3 82.9% against 59.1%, 3000 x 6000 x 3000 84.2% against 80.6%; rows whole
    // sectors apart it lost, 4000^3 87.9% against 95.9%).
    row(
        "16-bit on Hopper, rows of A or B not whole 32-byte sectors, more 128 x 256 tiles than SMs: packed first",
        |p| p.sixteen_bit() && p.hopper && p.packs_off_sectors(),
        &[WgmmaPacked],
        "bench/2026-11-26-h100-rule-rows.md",
    ),
    Row {
        when: "16-bit on Hopper: the wgmma kernels",
        holds: |p| p.sixteen_bit() && p.hopper,
        then: Then::Table(WGMMA),
        record: "bench/2026-11-23-h200-bf16-f16-wgmma.md",
    },
    // Behind them, for operands whose bases TMA cannot read (a view at an odd offset; the
    // rule sees no addresses, the launch check does).
    row(
        "16-bit on Hopper, after the TMA kernels: packed first",
        |p| p.sixteen_bit() && p.hopper,
        &[WgmmaPacked],
        "bench/2026-11-26-h100-suite.md",
    ),
    // Without `wgmma`, or where no `wgmma` kernel takes the launch: the swizzled `mma.sync`
    // rung leads (H200, bf16 4096^3: 378 TFLOP/s against `mma_deep`'s 272), but under half a
    // wave of its tiles two blocks per SM of 128 x 128 do better (1024^3: `mma_deep128` 75.7
    // against 62.6).
    row(
        "16-bit, more than half a wave of 128 x 256 tiles",
        |p| p.sixteen_bit() && 2 * p.tiles(MmaSwizzled) > p.sms,
        &[MmaSwizzled, MmaDeep128],
        "bench/2026-11-24-h200-bf16-f16-mma-swizzled.md",
    ),
    row(
        "16-bit, at most half a wave of 128 x 256 tiles",
        |p| p.sixteen_bit() && 2 * p.tiles(MmaSwizzled) <= p.sms,
        &[MmaDeep128, MmaSwizzled],
        "bench/2026-11-24-h200-bf16-f16-mma-swizzled.md",
    ),
    row(
        "16-bit: the earlier mma.sync rungs",
        |p| p.sixteen_bit(),
        &[MmaDeep, MmaAsync, MmaWide],
        "bench/2026-11-22-h200-bf16-f16.md",
    ),
    Row {
        when: "f64 on Hopper: the DMMA kernels",
        holds: |p| p.elem == Elem::F64 && p.hopper,
        then: Then::Table(DMMA),
        record: "bench/2026-11-22-h200-f64-dmma.md",
    },
    // Stream-K: under half a wave of 128 x 128 tiles with a long K (f32 1000^3, H200: 57%
    // of cuBLAS against `paired_lanes`' 32%); many waves of tiles of operands as stored
    // (8192^3: 49.2 against 47.3 TFLOP/s); a last wave that leaves more than a tenth of the
    // grid's time idle (3000^3, 2.2 waves: 101% of cuBLAS against 89%); 9-16 rows or columns
    // outside 16-bit.
    row(
        "few tiles, many waves, an idle last wave, or a side of 9-16 (not 16-bit)",
        |p| {
            let waves = p.waves();
            let many_waves = p.tiles(StreamK) >= 4 * 2 * p.sms && p.plain;
            let idle_tail =
                waves.ceil() - waves > 0.1 * waves.ceil() && p.k >= 512 && !p.unaligned && p.plain;
            let side = p.m.min(p.n);
            p.few_tiles()
                || many_waves
                || idle_tail
                || ((9..=16).contains(&side) && !p.sixteen_bit())
        },
        &[StreamK],
        "bench/2026-11-23-h200-f32-stream-k-shapes.md",
    ),
    // Rows of A, B or C not in 16-byte groups: no block takes the vector path, and the BK = 8
    // kernel's checked loop is the faster one (H200: 25.6 against 21.3 TFLOP/s).
    row(
        "a leading dimension not a multiple of 4",
        |p| p.unaligned,
        &[FragmentBuffered],
        "bench/2026-11-22-h200-forms.md",
    ),
    // f32 batches of products of at most 64 x 64: `warp_tiled_64`'s tile is the product
    // (H100, 512 x 64^3: 124.6% of cuBLAS against `warp_tiled_k16`'s 40.2%; 256 x 128^3 it
    // lost, 92.6% against 111.9%, bench/2026-11-26-h100-rule-rows.md).
    row(
        "f32 batches of products of at most 64 x 64",
        |p| p.elem == Elem::F32 && p.batch > 1 && p.m <= 64 && p.n <= 64,
        &[WarpTiled64],
        "bench/2026-11-26-h100-rule-rows.md",
    ),
    // f32 batches of one-tile products: BK = 16 and no `cp.async` stages to fill (512 x
    // 128^3, the tuner's choice in three runs, H200 and H100: 35.1 / 33.9 / 35.3 against
    // `paired_lanes`' 32.9 / 33.7 / 31.2 TFLOP/s).
    row(
        "f32 batches of one-tile products",
        |p| p.elem == Elem::F32 && p.batch > 1 && p.m <= 128 && p.n <= 128,
        &[WarpTiledK16],
        "bench/2026-11-24-h200-small-batches.txt",
    ),
    // The SIMT kernels that read every form, best first (the ladder of the SIMT worklog).
    row(
        "always: the SIMT ladder",
        |_| true,
        &[
            PairedLanes,
            AsyncCopy,
            FragmentBufferedK16,
            WarpTiledK16,
            FragmentBuffered,
            WarpTiled,
            DoubleBuffered,
            Vectorized,
            Tiled16,
            Tiled32,
            Tiled8,
            Naive,
        ],
        "bench/2026-11-21-h200-f32-f64.md",
    ),
];

/// The kernels of every row of `rows` that holds for `product`, in order, each once.
pub fn order_of(rows: &[Row], product: &Product, order: &mut Vec<Kernel>) {
    for row in rows {
        if !(row.holds)(product) {
            continue;
        }
        match row.then {
            Then::Kernels(kernels) => {
                for &kernel in kernels {
                    if !order.contains(&kernel) {
                        order.push(kernel);
                    }
                }
            }
            Then::Table(table) => order_of(table, product, order),
        }
    }
}

/// The kernels to try, best first, for a product of `T` in `precision` laid out as
/// `problem` on `props`'s device, C in the accumulator's type (f32 for 16-bit inputs).
/// Callers keep the first that can launch it.
pub fn preference<T: Element>(
    props: &DeviceProps,
    problem: &Problem,
    precision: Precision,
) -> Vec<Kernel> {
    preference_for::<T>(props, problem, precision, false)
}

/// [`preference`] for C in the 16-bit input type where `narrow_c`.
pub fn preference_for<T: Element>(
    props: &DeviceProps,
    problem: &Problem,
    precision: Precision,
    narrow_c: bool,
) -> Vec<Kernel> {
    let product = Product::new::<T>(props, problem, precision, narrow_c);
    let mut order = Vec::new();
    order_of(RULE, &product, &mut order);
    order
}
