//! The library on shapes from practice, each row against cuBLAS in the same run: square
//! products, a Llama-3-8B layer's projections at 512 tokens and at decode (1 to 16
//! tokens), language-model heads with an odd vocabulary, odd leading dimensions and
//! offsets, transposes, few rows, few columns, batches, and sides that are no multiple of
//! a tile. Ours is the rule's choice through `Context::gemm`, called as a user calls it;
//! cuBLAS is `cublasGemmStridedBatchedEx` on the same views. Per row: % of cuBLAS and the
//! largest difference from cuBLAS; per type and per group and type: the geometric mean and
//! the minimum of the speed ratio, the figures of merit.
//!
//! `rgemm-suite [--types bf16,f32] [--groups decode,edge] [--reps N] [--rounds N] [--csv PATH]
//! [--list]`
//!
//! `--list` prints the rows (and checks the table: views inside their buffers, under
//! 8 GiB of device memory a row) without a GPU.
// The suite opens its GPU and CSV file itself (a failed row is reported, not fatal), so
// `common::measure` and `common::cublas_into` go unused here.
#[allow(dead_code)]
mod common;

use clap::{Parser, ValueEnum};
use rgemm::{
    Batch, Context, Cublas, DeviceMatrix, DeviceView, DeviceViewMut, Element, Kernel, Matrix,
    MatrixLayout, Output, Precision, Scalar, bf16, f16,
};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

const NAME: &str = "rgemm-suite";

#[derive(Parser, Debug)]
#[command(
    version,
    about = "The library on shapes from practice, each row against cuBLAS in the same run",
    long_about = "The library on shapes from practice (square products, LLM layers at 512 \
        tokens and at decode, language-model heads, odd leading dimensions and offsets, \
        transposes, few rows or columns, batches, sides no multiple of a tile), each row \
        against cublasGemmStridedBatchedEx on the same views in the same run (medians over \
        rounds of timed calls after 3 warm-ups, ours and cuBLAS's alternating, CUDA events). \
        Prints a markdown table, then per type and per group and type the geometric mean \
        and the minimum of the speed against cuBLAS; --csv also writes the rows as CSV; \
        --list prints the rows without measuring (no GPU needed).\n\n\
        Exit status: 0 done, 1 a row failed (the others still ran), 2 usage error or no GPU.",
    after_help = "Example: rgemm-suite --types bf16,f32 --groups decode,edge --csv suite.csv"
)]
struct Args {
    #[command(flatten)]
    target: common::Target,
    /// Only these types (comma-separated; all if absent).
    #[arg(long, value_delimiter = ',', value_enum)]
    types: Vec<Ty>,
    /// Only these groups (comma-separated; all if absent).
    #[arg(long, value_delimiter = ',', value_enum)]
    groups: Vec<Group>,
    /// Timed calls per round.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    reps: u32,
    /// Rounds of timed calls per row, ours and cuBLAS's alternating (1: all of ours, then
    /// all of cuBLAS's).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    /// Print the rows that would run, check the table, and exit (no GPU needed).
    #[arg(long)]
    list: bool,
    /// Run every row on this kernel instead of the rule's choice (a row whose form or
    /// device it does not take is reported as that row's error): how the rule's rows are
    /// measured.
    #[arg(long)]
    kernel: Option<Kernel>,
}

/// A row's element types: inputs, C, and the arithmetic (ours and cuBLAS's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
enum Ty {
    /// f32 in and out, FP32 arithmetic (cuBLAS SGEMM).
    #[value(name = "f32")]
    F32,
    /// f32 in and out with `Precision::Tf32` (cuBLAS `CUBLAS_COMPUTE_32F_FAST_TF32`).
    #[value(name = "tf32")]
    Tf32,
    /// f64 in and out.
    #[value(name = "f64")]
    F64,
    /// bf16 in, f32 C.
    #[value(name = "bf16")]
    Bf16,
    /// f16 in, f32 C.
    #[value(name = "f16")]
    F16,
    /// bf16 in, bf16 C.
    #[value(name = "bf16c")]
    Bf16c,
    /// f16 in, f16 C.
    #[value(name = "f16c")]
    F16c,
}

impl Ty {
    const ALL: [Ty; 7] = [
        Ty::F32,
        Ty::Tf32,
        Ty::F64,
        Ty::Bf16,
        Ty::F16,
        Ty::Bf16c,
        Ty::F16c,
    ];

    fn label(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::Tf32 => "tf32",
            Ty::F64 => "f64",
            Ty::Bf16 => "bf16",
            Ty::F16 => "f16",
            Ty::Bf16c => "bf16c",
            Ty::F16c => "f16c",
        }
    }

    /// Bytes of an input element and of an element of C: the device memory a row needs.
    fn bytes(self) -> (usize, usize) {
        match self {
            Ty::F32 | Ty::Tf32 => (4, 4),
            Ty::F64 => (8, 8),
            Ty::Bf16 | Ty::F16 => (2, 4),
            Ty::Bf16c | Ty::F16c => (2, 2),
        }
    }

    /// The largest `max |ours - cuBLAS| / max |cuBLAS|` taken for agreement: a few units
    /// of the arithmetic's rounding at these depths (TF32 rounds its inputs to 10 bits; a
    /// 16-bit C is rounded once more, each side perhaps the other way).
    fn tolerance(self) -> f64 {
        match self {
            Ty::F64 => 1e-12,
            Ty::F32 => 1e-4,
            Ty::Tf32 | Ty::Bf16 | Ty::F16 => 1e-2,
            Ty::Bf16c | Ty::F16c => 2e-2,
        }
    }
}

/// Where a shape comes from; the second summary is per group and type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
enum Group {
    /// Square products, the headline sizes.
    #[value(name = "square")]
    Square,
    /// A Llama-3-8B layer's projections at 512 tokens, weights stored N x K (B^T).
    #[value(name = "llm")]
    Llm,
    /// Language-model heads: C's leading dimension is the odd vocabulary.
    #[value(name = "lm-head")]
    LmHead,
    /// Odd leading dimensions and offsets.
    #[value(name = "odd-ld")]
    OddLd,
    /// Transposed operands and a column-major C.
    #[value(name = "forms")]
    Forms,
    /// Few rows of C (small M), B^T.
    #[value(name = "few-rows")]
    FewRows,
    /// Decode: 1 to 16 tokens through a Llama-3-8B layer's projections.
    #[value(name = "decode")]
    Decode,
    /// Few columns of C (small N).
    #[value(name = "few-cols")]
    FewCols,
    /// Strided batches of small products.
    #[value(name = "batch-small")]
    BatchSmall,
    /// Strided batches of large products.
    #[value(name = "batch-large")]
    BatchLarge,
    /// Sides that are no multiple of the tiles.
    #[value(name = "edge")]
    Edge,
}

impl Group {
    fn label(self) -> &'static str {
        match self {
            Group::Square => "square",
            Group::Llm => "llm",
            Group::LmHead => "lm-head",
            Group::OddLd => "odd-ld",
            Group::Forms => "forms",
            Group::FewRows => "few-rows",
            Group::Decode => "decode",
            Group::FewCols => "few-cols",
            Group::BatchSmall => "batch-small",
            Group::BatchLarge => "batch-large",
            Group::Edge => "edge",
        }
    }
}

/// One shape of the suite and the types it runs for. Operands are row-major unless
/// transposed: `op(A) = A^T` is stored as a row-major K x M matrix (`ta`), `op(B) = B^T`
/// as a row-major N x K (`tb`, as PyTorch stores weights).
#[derive(Clone, Copy, Debug)]
struct Row {
    group: Group,
    name: &'static str,
    /// M, N, K of one product.
    mnk: (usize, usize, usize),
    /// Products in the strided batch.
    batch: usize,
    ta: bool,
    tb: bool,
    c_col: bool,
    /// Elements added to each operand's least leading dimension (A, B, C).
    pad: (usize, usize, usize),
    /// The element of each operand's buffer where its (first) matrix starts (A, B, C).
    off: (usize, usize, usize),
    types: &'static [Ty],
}

/// A row-major product `C = A B`, dense, one of a batch of one.
const fn row(
    group: Group,
    name: &'static str,
    mnk: (usize, usize, usize),
    types: &'static [Ty],
) -> Row {
    Row {
        group,
        name,
        mnk,
        batch: 1,
        ta: false,
        tb: false,
        c_col: false,
        pad: (0, 0, 0),
        off: (0, 0, 0),
        types,
    }
}

impl Row {
    const fn ta(self) -> Row {
        Row { ta: true, ..self }
    }
    const fn tb(self) -> Row {
        Row { tb: true, ..self }
    }
    /// Both operands transposed (`TT`).
    const fn tt(self) -> Row {
        self.ta().tb()
    }
    const fn c_col(self) -> Row {
        Row {
            c_col: true,
            ..self
        }
    }
    const fn batch(self, batch: usize) -> Row {
        Row { batch, ..self }
    }
    const fn pad(self, pad: (usize, usize, usize)) -> Row {
        Row { pad, ..self }
    }
    const fn off(self, off: (usize, usize, usize)) -> Row {
        Row { off, ..self }
    }
}

use Group::{
    BatchLarge, BatchSmall, Decode, Edge, FewCols, FewRows, Forms, Llm, LmHead, OddLd, Square,
};
use Ty::{Bf16, Bf16c, F16, F16c, F32, F64, Tf32};

/// The square product of the headline (4096^3) in every type.
const EVERY_TYPE: &[Ty] = &[Bf16, F16, Bf16c, F16c, F32, Tf32, F64];
/// The four 16-bit types: inputs bf16 or f16, C in f32 or in the input type.
const B16: &[Ty] = &[Bf16, F16, Bf16c, F16c];
/// The 16-bit types at decode and few rows.
const B16_DECODE: &[Ty] = &[Bf16, F16, Bf16c];
/// M = 64 rows: the decode types, and f32 and f64.
const FEW_ROWS: &[Ty] = &[Bf16, F16, Bf16c, F32, F64];
const ODD_LD: &[Ty] = &[Bf16, F16, Bf16c, F16c, Tf32];
const LM_HEAD: &[Ty] = &[Bf16, Bf16c];
const BF16_F32: &[Ty] = &[Bf16, F32];
const F32_F64_BF16: &[Ty] = &[F32, F64, Bf16];
const F32_TF32: &[Ty] = &[F32, Tf32];
const F32_F64: &[Ty] = &[F32, F64];
const BATCH_SMALL: &[Ty] = &[F32, Tf32, F64, Bf16];
const F64_ONLY: &[Ty] = &[F64];
/// 3072^3: three waves of 128 x 256 tiles on 132 SMs, the last a fifth full.
const F64_B16: &[Ty] = &[F64, Bf16, F16];
const BF16_ONLY: &[Ty] = &[Bf16];
const F32_ONLY: &[Ty] = &[F32];

/// Llama-3-8B's projections (N, K) as the layer multiplies tokens by them.
const QKV: (usize, usize) = (6144, 4096);
const OUT: (usize, usize) = (4096, 4096);
const GATE_UP: (usize, usize) = (14336, 4096);
const DOWN: (usize, usize) = (4096, 14336);

/// A decode row: `m` tokens through a projection, weights stored N x K.
const fn decode(name: &'static str, m: usize, (n, k): (usize, usize)) -> Row {
    row(Decode, name, (m, n, k), B16_DECODE).tb()
}

/// The suite.
const ROWS: &[Row] = &[
    row(Square, "4096^3", (4096, 4096, 4096), EVERY_TYPE),
    row(Square, "8192^3", (8192, 8192, 8192), B16),
    row(Square, "4096^2 x 14336", (4096, 4096, 14336), B16),
    row(Llm, "qkv", (512, QKV.0, QKV.1), B16).tb(),
    row(Llm, "out", (512, OUT.0, OUT.1), B16).tb(),
    row(Llm, "gate/up", (512, GATE_UP.0, GATE_UP.1), B16).tb(),
    row(Llm, "down", (512, DOWN.0, DOWN.1), B16).tb(),
    row(LmHead, "128 x 32001", (128, 32001, 4096), LM_HEAD).tb(),
    row(LmHead, "512 x 50257", (512, 50257, 4096), LM_HEAD).tb(),
    row(LmHead, "1 x 32001", (1, 32001, 4096), LM_HEAD).tb(),
    row(OddLd, "K 4099", (4096, 4096, 4099), ODD_LD).tb(),
    row(OddLd, "N 1001", (4096, 1001, 4096), ODD_LD),
    row(OddLd, "lda 4097", (4096, 4096, 4096), ODD_LD).pad((1, 0, 0)),
    row(OddLd, "ldb 4097", (4096, 4096, 4096), ODD_LD).pad((0, 1, 0)),
    row(OddLd, "A at 1", (4096, 4096, 4096), ODD_LD).off((1, 0, 0)),
    row(OddLd, "C at 3", (4096, 4096, 4096), ODD_LD).off((0, 0, 3)),
    row(Forms, "4096 A^T", (4096, 4096, 4096), BF16_F32).ta(),
    row(Forms, "4096 B^T", (4096, 4096, 4096), BF16_F32).tb(),
    row(Forms, "4096 A^T B^T", (4096, 4096, 4096), BF16_F32).tt(),
    row(Forms, "4096 C col", (4096, 4096, 4096), BF16_F32).c_col(),
    row(Forms, "2048 A^T", (2048, 2048, 2048), F64_ONLY).ta(),
    row(Forms, "2048 B^T", (2048, 2048, 2048), F64_ONLY).tb(),
    row(Forms, "2048 A^T B^T", (2048, 2048, 2048), F64_ONLY).tt(),
    row(Forms, "2048 C col", (2048, 2048, 2048), F64_ONLY).c_col(),
    row(FewRows, "M 17", (17, 8192, 4096), FEW_ROWS).tb(),
    row(FewRows, "M 32 B as stored", (32, 4096, 4096), F32_F64),
    row(FewRows, "M 64", (64, 8192, 4096), FEW_ROWS).tb(),
    row(FewRows, "M 128", (128, 8192, 4096), B16_DECODE).tb(),
    row(FewRows, "M 256", (256, 8192, 4096), B16_DECODE).tb(),
    row(FewRows, "M 128 K 8192", (128, 4096, 8192), B16_DECODE).tb(),
    decode("1 qkv", 1, QKV),
    decode("1 out", 1, OUT),
    decode("1 gate/up", 1, GATE_UP),
    decode("1 down", 1, DOWN),
    decode("4 qkv", 4, QKV),
    decode("4 out", 4, OUT),
    decode("4 gate/up", 4, GATE_UP),
    decode("4 down", 4, DOWN),
    decode("8 qkv", 8, QKV),
    decode("8 out", 8, OUT),
    decode("8 gate/up", 8, GATE_UP),
    decode("8 down", 8, DOWN),
    decode("16 qkv", 16, QKV),
    decode("16 out", 16, OUT),
    decode("16 gate/up", 16, GATE_UP),
    decode("16 down", 16, DOWN),
    row(FewCols, "N 16", (8192, 16, 8192), F32_F64_BF16),
    row(FewCols, "N 64", (8192, 64, 8192), F32_F64_BF16),
    row(FewCols, "N 256", (8192, 256, 8192), F32_F64_BF16),
    row(FewCols, "N 256 K 16384", (4096, 256, 16384), F32_TF32),
    row(FewCols, "N 128 K 8192", (8192, 128, 8192), F32_TF32),
    row(BatchSmall, "256 x 128^3", (128, 128, 128), BATCH_SMALL).batch(256),
    row(BatchSmall, "128 x 256^3", (256, 256, 256), BATCH_SMALL).batch(128),
    row(BatchSmall, "512 x 64^3", (64, 64, 64), BATCH_SMALL).batch(512),
    row(BatchLarge, "16 x 2048^3", (2048, 2048, 2048), BF16_ONLY).batch(16),
    row(BatchLarge, "8 x 2048^3", (2048, 2048, 2048), F32_ONLY).batch(8),
    row(Edge, "1000^3", (1000, 1000, 1000), F32_F64_BF16),
    row(Edge, "1500^3", (1500, 1500, 1500), F32_F64_BF16),
    row(Edge, "2000^3", (2000, 2000, 2000), F32_F64_BF16),
    row(Edge, "2500^3", (2500, 2500, 2500), F32_F64_BF16),
    row(Edge, "3000^3", (3000, 3000, 3000), F32_F64_BF16),
    row(Edge, "1024^3", (1024, 1024, 1024), F64_ONLY),
    row(Edge, "3072^3", (3072, 3072, 3072), F64_B16),
];

/// The device memory one row may take (A, B and two Cs), well inside any GPU it is run on.
const MEMORY_LIMIT: usize = 8 << 30;

/// A row's views and the buffers under them.
struct Geometry {
    a: MatrixLayout,
    b: MatrixLayout,
    c: MatrixLayout,
    batch: Batch,
    /// Elements of A's, B's and C's buffers: each operand's offset, then its batch.
    lens: (usize, usize, usize),
}

impl Row {
    /// The views of `op(A)`, `op(B)` and C, the batch, and the buffers' lengths.
    fn geometry(&self) -> rgemm::Result<Geometry> {
        let (m, n, k) = self.mnk;
        let (pa, pb, pc) = self.pad;
        // `op(X)` of `rows x cols`: row-major, or the transpose of a row-major cols x rows.
        let operand = |(rows, cols): (usize, usize), t: bool, pad: usize| match t {
            false => MatrixLayout::row_major(rows, cols).with_ld(cols + pad),
            true => MatrixLayout::row_major(cols, rows).with_ld(rows + pad).t(),
        };
        let a = operand((m, k), self.ta, pa);
        let b = operand((k, n), self.tb, pb);
        let c = match self.c_col {
            false => MatrixLayout::row_major(m, n).with_ld(n + pc),
            true => MatrixLayout::col_major(m, n).with_ld(m + pc),
        };
        let (sa, sb, sc) = (a.extent()?, b.extent()?, c.extent()?);
        let len = |offset: usize, stride: usize| {
            (stride.checked_mul(self.batch))
                .and_then(|x| x.checked_add(offset))
                .ok_or(rgemm::Error::ElementCountOverflow { rows: m, cols: n })
        };
        let (oa, ob, oc) = self.off;
        let batch = match self.batch {
            1 => Batch::ONE,
            count => Batch::strided(count, (sa, sb, sc)),
        };
        Ok(Geometry {
            a: a.at(oa),
            b: b.at(ob),
            c: c.at(oc),
            batch,
            lens: (len(oa, sa)?, len(ob, sb)?, len(oc, sc)?),
        })
    }

    /// `NN`, `TN`, ... (op(A), op(B)), then what else is not dense row-major:
    /// `C col`, `ld a+1`, `off c=3`.
    fn form(&self) -> String {
        let op = |t: bool| if t { 'T' } else { 'N' };
        let mut form = format!("{}{}", op(self.ta), op(self.tb));
        if self.c_col {
            form.push_str(" C col");
        }
        let (pa, pb, pc) = self.pad;
        for (name, pad) in [("a", pa), ("b", pb), ("c", pc)] {
            if pad > 0 {
                let _ = write!(form, " ld {name}+{pad}");
            }
        }
        let (oa, ob, oc) = self.off;
        for (name, off) in [("a", oa), ("b", ob), ("c", oc)] {
            if off > 0 {
                let _ = write!(form, " off {name}={off}");
            }
        }
        form
    }

    /// Floating-point operations of the whole batch.
    fn flops(&self) -> f64 {
        let (m, n, k) = self.mnk;
        2.0 * m as f64 * n as f64 * k as f64 * self.batch as f64
    }

    /// The device memory of the row in type `ty` (A, B, our C and cuBLAS's), or why the row
    /// is malformed: a view outside its buffer, shapes that do not multiply, an empty
    /// product, or more than [`MEMORY_LIMIT`].
    fn check(&self, ty: Ty) -> Result<usize, String> {
        let (m, n, k) = self.mnk;
        if m == 0 || n == 0 || k == 0 || self.batch == 0 {
            return Err("an empty product".into());
        }
        let g = self.geometry().map_err(|e| e.to_string())?;
        rgemm::internals::Normalized::new((g.a, g.b, g.c), g.lens, g.batch, (1.0, 0.0))
            .map_err(|e| e.to_string())?;
        let (input, output) = ty.bytes();
        let bytes = (g.lens.0 + g.lens.1) * input + 2 * g.lens.2 * output;
        if bytes > MEMORY_LIMIT {
            return Err(format!(
                "{} MiB of device memory, over the {} MiB a row may take",
                bytes >> 20,
                MEMORY_LIMIT >> 20
            ));
        }
        Ok(bytes)
    }
}

/// The rows (row, type) that `args` selects, in the table's order.
fn selected(args: &Args) -> Vec<(&'static Row, Ty)> {
    let wanted = |ty: &Ty| args.types.is_empty() || args.types.contains(ty);
    (ROWS.iter())
        .filter(|row| args.groups.is_empty() || args.groups.contains(&row.group))
        .flat_map(|row| {
            (row.types.iter())
                .filter(|ty| wanted(ty))
                .map(move |&ty| (row, ty))
        })
        .collect()
}

/// `188 rows: f32 21, tf32 11, ...`
fn counts(jobs: &[(&Row, Ty)]) -> String {
    let mut text = format!("{} rows:", jobs.len());
    for ty in Ty::ALL {
        let count = jobs.iter().filter(|(_, t)| *t == ty).count();
        if count > 0 {
            let _ = write!(text, " {} {count},", ty.label());
        }
    }
    text.pop();
    text
}

/// What the table must be whatever is selected: each (group, name) once, each type once a
/// row, every row able to run.
fn check_table() -> Vec<String> {
    let mut problems = Vec::new();
    let mut names = BTreeSet::new();
    for row in ROWS {
        let at = format!("{} / {}", row.group.label(), row.name);
        if !names.insert((row.group, row.name)) {
            problems.push(format!("{at}: the row's name is used twice in its group"));
        }
        if row.types.is_empty() {
            problems.push(format!("{at}: no types"));
        }
        let distinct: BTreeSet<_> = row.types.iter().collect();
        if distinct.len() != row.types.len() {
            problems.push(format!("{at}: a type listed twice"));
        }
        for &ty in row.types {
            if let Err(e) = row.check(ty) {
                problems.push(format!("{at} ({}): {e}", ty.label()));
            }
        }
    }
    problems
}

/// `--list`: the selected rows as a markdown table, and the check of the whole table
/// (exit status 1 if it fails).
fn list(jobs: &[(&Row, Ty)]) -> ExitCode {
    let mut text = format!("{}\n\n", counts(jobs));
    text.push_str("| group | row | type | M | N | K | batch | form | device MiB |\n");
    text.push_str("|---|---|---|---:|---:|---:|---:|---|---:|\n");
    for &(row, ty) in jobs {
        let (m, n, k) = row.mnk;
        let mib = match row.check(ty) {
            Ok(bytes) => format!("{:.0}", bytes as f64 / (1u64 << 20) as f64),
            Err(_) => "-".into(),
        };
        let _ = writeln!(
            text,
            "| {} | {} | {} | {m} | {n} | {k} | {} | {} | {mib} |",
            row.group.label(),
            row.name,
            ty.label(),
            row.batch,
            row.form()
        );
    }
    say(&text);
    let problems = check_table();
    for problem in &problems {
        eprintln!("{NAME}: {problem}");
    }
    match problems.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    }
}

/// Writes `text` to stdout. A reader that stops early (`--list | head`) is no failure:
/// what it no longer reads is dropped.
fn say(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Operands up to this many elements come from `Matrix::random`; larger ones from a hash
/// of the index, several times faster to make on the host.
const RANDOM_UP_TO: usize = 50_000_000;

/// `len` values in [-1, 1) from `seed`, as one row-major row (products of K such values
/// stay far inside f16's range up to K = 16384).
fn operand<T: Scalar>(len: usize, seed: u64) -> rgemm::Result<Matrix<T>> {
    if len <= RANDOM_UP_TO {
        return Matrix::random(1, len, seed);
    }
    Matrix::from_fn(1, len, |_, i| T::from_f64(hashed_unit(seed, i as u64)))
}

/// A value in [-1, 1) that looks random in `i`: SplitMix64's output mix of the `i`-th
/// step from `seed`, its top 53 bits scaled.
fn hashed_unit(seed: u64, i: u64) -> f64 {
    const STEP: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut x = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(STEP));
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
}

/// `max |x - y| / max |y|` over C's buffers (padding and all: both start equal); a NaN or
/// an infinity on one side only gives infinity.
fn max_rel_diff<O: Scalar>(ours: &Matrix<O>, cublas: &Matrix<O>) -> f64 {
    let (x, y) = (ours.as_slice(), cublas.as_slice());
    let scale = y.iter().map(|v| v.to_f64().abs()).fold(0.0, f64::max);
    let diff = x.iter().zip(y).fold(0.0, |most: f64, (a, b)| {
        let (a, b) = (a.to_f64(), b.to_f64());
        let d = if a == b { 0.0 } else { (a - b).abs() };
        if d.is_nan() {
            f64::INFINITY
        } else {
            most.max(d)
        }
    });
    diff / scale.max(f64::MIN_POSITIVE)
}

/// What one row measured.
struct Measured {
    kernel: String,
    ms: f64,
    cublas_ms: f64,
    diff: f64,
    /// Host microseconds of one call, ours and cuBLAS's ([`median_host_us`]).
    host_us: (f64, f64),
}

/// Calls per host-time median.
const HOST_CALLS: usize = 21;
/// Timed calls per row: `reps` a round, in `rounds` rounds, ours and cuBLAS's alternating; a
/// row's time is the median of all its rounds' calls.
#[derive(Clone, Copy)]
struct Timing {
    reps: usize,
    rounds: usize,
}

/// Runs `row` in `T` and `O` at `precision`: one product each (ours, then cuBLAS's
/// `yardstick`) from the same C for the comparison, then the medians of the [`Timing`]'s
/// rounds of timed calls, ours and cuBLAS's alternating.
fn measure_row<T: Element, O: Output<T>>(
    (ctx, blas, forced): (&Context, &Cublas, Option<Kernel>),
    row: &Row,
    (precision, timing): (Precision, Timing),
    yardstick: impl Fn(
        &Cublas<'_>,
        (T::Out, T::Out),
        (&DeviceView<'_, T>, &DeviceView<'_, T>),
        &mut DeviceViewMut<'_, O>,
        Batch,
    ) -> rgemm::Result<()>,
) -> rgemm::Result<Measured> {
    let g = row.geometry()?;
    let a = ctx.upload(&operand::<T>(g.lens.0, 1)?)?;
    let b = ctx.upload(&operand::<T>(g.lens.1, 2)?)?;
    // Nonzero everywhere, so a product that skips part of C shows.
    let c0 = Matrix::<O>::from_fn(1, g.lens.2, |_, j| O::from_f64((j % 7 + 1) as f64 / 8.0))?;
    let (mut ours, mut theirs) = (ctx.upload(&c0)?, ctx.upload(&c0)?);
    drop(c0);
    let scalars = common::scalars::<T>((1.0, 0.0));
    let mut kernel = String::new();
    let mut call = |c: &mut DeviceMatrix<O>| -> rgemm::Result<()> {
        let mut call = ctx
            .gemm(a.view_as(g.a)?, b.view_as(g.b)?, c.view_mut_as(g.c)?)
            .batch(g.batch)
            .precision(precision);
        if let Some(forced) = forced {
            call = call.kernel(forced);
        }
        let plan = call.run()?;
        common::note_kernel(plan, &mut kernel);
        Ok(())
    };
    let cublas = |c: &mut DeviceMatrix<O>| -> rgemm::Result<()> {
        let (va, vb) = (a.view_as(g.a)?, b.view_as(g.b)?);
        yardstick(blas, scalars, (&va, &vb), &mut c.view_mut_as(g.c)?, g.batch)
    };
    call(&mut ours)?;
    cublas(&mut theirs)?;
    let diff = max_rel_diff(&ctx.download(&ours)?, &ctx.download(&theirs)?);
    // Rounds alternate ours and cuBLAS's, so a drift of the clocks over the row (a short
    // row's calls take tens of microseconds) falls on both alike.
    let (mut ours_times, mut theirs_times) = (Vec::new(), Vec::new());
    let reps = timing.reps;
    for _ in 0..timing.rounds {
        ours_times.extend(rgemm::internals::time_ms(ctx.stream(), 3, reps, || {
            call(&mut ours)
        })?);
        theirs_times.extend(rgemm::internals::time_ms(ctx.stream(), 3, reps, || {
            cublas(&mut theirs)
        })?);
    }
    let ms = rgemm::internals::median(&ours_times);
    let cublas_ms = rgemm::internals::median(&theirs_times);
    let host_us = (
        median_host_us(ctx, HOST_CALLS, || call(&mut ours))?,
        median_host_us(ctx, HOST_CALLS, || cublas(&mut theirs))?,
    );
    Ok(Measured {
        kernel,
        ms,
        cublas_ms,
        diff,
        host_us,
    })
}

/// The median host time of one call of `work`, in microseconds, over `calls` calls made
/// back to back from an idle stream (no wait between them, so the GPU's work does not
/// count while the queue has room): what a call costs the host, which a timed call also
/// pays where the GPU waits for it.
fn median_host_us(
    ctx: &Context,
    calls: usize,
    mut work: impl FnMut() -> rgemm::Result<()>,
) -> rgemm::Result<f64> {
    ctx.synchronize()?;
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = std::time::Instant::now();
        work()?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    ctx.synchronize()?;
    Ok(rgemm::internals::median(&times))
}

/// cuBLAS's product over views in its default arithmetic for the types.
fn plain<T: Element, O: Output<T>>(
    blas: &Cublas<'_>,
    scalars: (T::Out, T::Out),
    operands: (&DeviceView<'_, T>, &DeviceView<'_, T>),
    c: &mut DeviceViewMut<'_, O>,
    batch: Batch,
) -> rgemm::Result<()> {
    blas.gemm_views(scalars, operands, c, batch)
}

/// Runs `row` in type `ty`.
fn measure(
    ty: Ty,
    on: (&Context, &Cublas, Option<Kernel>),
    row: &Row,
    timing: Timing,
) -> rgemm::Result<Measured> {
    let exact = (Precision::Exact, timing);
    match ty {
        Ty::F32 => measure_row::<f32, f32>(on, row, exact, plain),
        Ty::Tf32 => measure_row::<f32, f32>(
            on,
            row,
            (Precision::Tf32, timing),
            |blas, s, ab, c, batch| blas.gemm_views_in(s, ab, c, batch, Precision::Tf32),
        ),
        Ty::F64 => measure_row::<f64, f64>(on, row, exact, plain),
        Ty::Bf16 => measure_row::<bf16, f32>(on, row, exact, plain),
        Ty::F16 => measure_row::<f16, f32>(on, row, exact, plain),
        Ty::Bf16c => measure_row::<bf16, bf16>(on, row, exact, plain),
        Ty::F16c => measure_row::<f16, f16>(on, row, exact, plain),
    }
}

/// The table's header and columns.
const SUITE: common::Table = common::Table {
    setup: "each row's time is the median over all its rounds' calls (the rounds above the \
        GPU's name); ours: the rule's choice through Context::gemm, each timed call a full run(); \
        cuBLAS: cublasGemmStridedBatchedEx on the same views (tf32: \
        CUBLAS_COMPUTE_32F_FAST_TF32); alpha 1, beta 0; % of cuBLAS = cuBLAS ms / ours ms; \
        `!`: max rel. diff over the type's tolerance (in the summary per type); host us: \
        the median host time of a call, 21 calls back to back",
    titles: "| group | row | type | M | N | K | batch | form | kernel | ours ms | cuBLAS ms | TFLOP/s | % of cuBLAS | max rel. diff | host us: ours / cuBLAS |",
    alignment: "|---|---|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|",
    columns: "group,row,type,m,n,k,batch,form,kernel,ms,cublas_ms,tflops,pct_cublas,max_rel_diff,over_tolerance,error,host_us,cublas_host_us",
};

/// One row's result: its speed against cuBLAS (`cuBLAS ms / ours ms`), or its error.
struct Outcome {
    row: &'static Row,
    ty: Ty,
    result: Result<Measured, String>,
}

impl Outcome {
    fn ratio(&self) -> Option<f64> {
        self.result.as_ref().ok().map(|r| r.cublas_ms / r.ms)
    }

    fn over_tolerance(&self) -> bool {
        (self.result.as_ref()).is_ok_and(|r| r.diff.is_nan() || r.diff > self.ty.tolerance())
    }
}

/// A field of the CSV, quoted if it needs to be.
fn csv_field(text: &str) -> String {
    match text.contains([',', '"', '\n']) {
        true => format!("\"{}\"", text.replace('"', "\"\"")),
        false => text.into(),
    }
}

/// The row's line in the markdown table and in the CSV.
fn lines(outcome: &Outcome) -> (String, String) {
    let (row, ty) = (outcome.row, outcome.ty);
    let (m, n, k) = row.mnk;
    let start = format!(
        "{} | {} | {} | {m} | {n} | {k} | {} | {}",
        row.group.label(),
        row.name,
        ty.label(),
        row.batch,
        row.form()
    );
    let csv_start = [
        row.group.label().into(),
        csv_field(row.name),
        ty.label().into(),
        m.to_string(),
        n.to_string(),
        k.to_string(),
        row.batch.to_string(),
        row.form(),
    ]
    .join(",");
    match &outcome.result {
        Ok(r) => {
            let tflops = row.flops() / r.ms / 1e9;
            let pct = 100.0 * r.cublas_ms / r.ms;
            let flag = if outcome.over_tolerance() { " !" } else { "" };
            let (host, cublas_host) = r.host_us;
            let md = format!(
                "| {start} | {} | {:.4} | {:.4} | {tflops:.1} | {pct:.1}% | {:.1e}{flag} | {host:.1} / {cublas_host:.1} |",
                r.kernel, r.ms, r.cublas_ms, r.diff
            );
            let csv = format!(
                "{csv_start},{},{:.5},{:.5},{tflops:.2},{pct:.2},{:.3e},{},,{host:.2},{cublas_host:.2}",
                r.kernel,
                r.ms,
                r.cublas_ms,
                r.diff,
                outcome.over_tolerance()
            );
            (md, csv)
        }
        Err(e) => {
            let one_line = e.replace(['\n', '|'], " ");
            let md = format!("| {start} | error: {one_line} | | | | | | |");
            (md, format!("{csv_start},,,,,,,,{},,", csv_field(e)))
        }
    }
}

/// Geometric mean, minimum and the minimum's row of the ratios of the outcomes that ran,
/// with their count: the figures of merit of a type, or of a group in a type.
struct Merit {
    rows: usize,
    geomean: f64,
    min: f64,
    /// `group: row` of the minimum.
    at: String,
}

fn merit<'a>(outcomes: impl Iterator<Item = &'a Outcome>) -> Option<Merit> {
    let (mut rows, mut logs, mut min, mut at) = (0, 0.0, f64::INFINITY, None);
    for outcome in outcomes {
        if let Some(ratio) = outcome.ratio() {
            rows += 1;
            logs += ratio.ln();
            if ratio < min {
                (min, at) = (ratio, Some(outcome.row));
            }
        }
    }
    let at = at?;
    Some(Merit {
        rows,
        geomean: (logs / rows as f64).exp(),
        min,
        at: format!("{}: {}", at.group.label(), at.name),
    })
}

/// The summaries: per type, and per group and type.
fn summary(outcomes: &[Outcome]) -> String {
    let mut md = String::from(
        "\nPer type (ratio = cuBLAS ms / ours ms over the rows that ran):\n\n\
         | type | rows | geomean % of cuBLAS | min % of cuBLAS | min at | tolerance | over tolerance | errors |\n\
         |---|---:|---:|---:|---|---:|---:|---:|\n",
    );
    for ty in Ty::ALL {
        let of_ty = || outcomes.iter().filter(move |o| o.ty == ty);
        if of_ty().next().is_none() {
            continue;
        }
        let over = of_ty().filter(|o| o.over_tolerance()).count();
        let errors = of_ty().filter(|o| o.result.is_err()).count();
        let (rows, geomean, min, at) = match merit(of_ty()) {
            Some(m) => (
                m.rows,
                format!("{:.1}%", 100.0 * m.geomean),
                format!("{:.1}%", 100.0 * m.min),
                m.at,
            ),
            None => (0, "-".into(), "-".into(), String::new()),
        };
        let _ = writeln!(
            md,
            "| {} | {rows} | {geomean} | {min} | {at} | {:.0e} | {over} | {errors} |",
            ty.label(),
            ty.tolerance()
        );
    }
    md.push_str(
        "\nPer group and type:\n\n\
         | group | type | rows | geomean % of cuBLAS | min % of cuBLAS | min at |\n\
         |---|---|---:|---:|---:|---|\n",
    );
    let mut cells: BTreeMap<(Group, Ty), Vec<&Outcome>> = BTreeMap::new();
    for outcome in outcomes {
        let key = (outcome.row.group, outcome.ty);
        cells.entry(key).or_default().push(outcome);
    }
    for ((group, ty), of) in cells {
        if let Some(m) = merit(of.into_iter()) {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.1}% | {:.1}% | {} |",
                group.label(),
                ty.label(),
                m.rows,
                100.0 * m.geomean,
                100.0 * m.min,
                m.at
            );
        }
    }
    md
}

/// Measures every selected row, printing each as it is done, then the summaries; returns
/// the CSV and the number of rows that failed.
fn run_all(
    (ctx, forced): (&Context, Option<Kernel>),
    jobs: &[(&'static Row, Ty)],
    timing: Timing,
) -> rgemm::Result<(String, usize)> {
    let blas = Cublas::new(ctx)?;
    let (md, mut csv) = SUITE.start_timed(ctx, timing.reps);
    let md = format!(
        "Timed calls per row: {} rounds of {}, ours and cuBLAS's alternating.\n\n{md}",
        timing.rounds, timing.reps
    );
    let note = match forced {
        Some(kernel) => {
            format!("\n\nours: every row on `{kernel}` (--kernel), not the rule's choice")
        }
        None => String::new(),
    };
    say(&format!("{}{note}\n\n{md}", counts(jobs)));
    let mut outcomes = Vec::with_capacity(jobs.len());
    for &(row, ty) in jobs {
        let result = measure(ty, (ctx, &blas, forced), row, timing).map_err(|e| e.to_string());
        let outcome = Outcome { row, ty, result };
        let (md_line, csv_line) = lines(&outcome);
        say(&format!("{md_line}\n"));
        let _ = writeln!(csv, "{csv_line}");
        outcomes.push(outcome);
    }
    say(&summary(&outcomes));
    let errors = outcomes.iter().filter(|o| o.result.is_err()).count();
    if errors > 0 {
        eprintln!("{NAME}: {errors} of {} rows failed", outcomes.len());
    }
    Ok((csv, errors))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let jobs = selected(&args);
    if jobs.is_empty() {
        eprintln!("{NAME}: no row runs in the types and groups asked for (see --list)");
        return ExitCode::from(2);
    }
    if args.list {
        return list(&jobs);
    }
    let ctx = match common::gpu(NAME, args.target.device) {
        Ok(ctx) => ctx,
        Err(code) => return code,
    };
    let csv = match common::Csv::create(NAME, args.target.csv.as_deref()) {
        Ok(csv) => csv,
        Err(code) => return code,
    };
    let timing = Timing {
        reps: args.reps as usize,
        rounds: args.rounds as usize,
    };
    match run_all((&ctx, args.kernel), &jobs, timing) {
        Ok((rows, 0)) => csv.finish(NAME, &rows),
        Ok((rows, _)) => {
            let _ = csv.finish(NAME, &rows);
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("{NAME}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows `args` select (clap parses them as the command line would).
    fn rows_of(args: &[&str]) -> Vec<(&'static Row, Ty)> {
        let args = Args::try_parse_from(std::iter::once(NAME).chain(args.iter().copied()))
            .expect("valid arguments");
        selected(&args)
    }

    #[test]
    fn the_table_holds_every_type_enough_rows_and_only_rows_that_run() {
        assert_eq!(check_table(), Vec::<String>::new());
        let rows = rows_of(&["--list"]);
        assert!(rows.len() >= 150, "only {} rows", rows.len());
        for ty in Ty::ALL {
            assert!(
                rows.iter().any(|(_, t)| *t == ty),
                "no row of {}",
                ty.label()
            );
        }
    }

    #[test]
    fn filters_select_rows() {
        // Decode: 16 shapes, each in bf16, f16 and bf16c.
        assert_eq!(rows_of(&["--groups", "decode"]).len(), 48);
        let rows = rows_of(&["--groups", "decode,edge", "--types", "bf16"]);
        assert_eq!(rows.len(), 16 + 6);
        assert!(rows.iter().all(|(_, ty)| *ty == Ty::Bf16));
        // Types and groups that share no row select none (main's usage error).
        assert!(rows_of(&["--types", "f16c", "--groups", "decode"]).is_empty());
    }

    #[test]
    fn a_kernel_can_be_forced() {
        let args = ["rgemm-suite", "--list", "--kernel", "decode_tma"];
        let parsed = Args::try_parse_from(args).expect("valid arguments");
        assert_eq!(parsed.kernel, Some(Kernel::DecodeTma));
    }

    #[test]
    fn unknown_names_are_usage_errors() {
        for args in [
            &["--list", "--types", "nosuch"][..],
            &["--types", "nosuch"],
            &["--list", "--groups", "nosuch"],
            &["--list", "--reps", "0"],
            &["--list", "--kernel", "nosuch"],
        ] {
            let parsed = Args::try_parse_from(std::iter::once(NAME).chain(args.iter().copied()));
            assert!(parsed.is_err(), "{args:?}");
        }
    }

    #[test]
    fn hashed_values_are_in_range_and_centred() {
        let values: Vec<f64> = (0..100_000).map(|i| hashed_unit(2, i)).collect();
        assert!(values.iter().all(|v| (-1.0..1.0).contains(v)));
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert_ne!(hashed_unit(1, 5), hashed_unit(2, 5));
    }

    #[test]
    fn forms_and_buffers_follow_the_row() {
        let r = row(OddLd, "t", (4, 3, 5), ODD_LD)
            .tb()
            .pad((1, 0, 2))
            .off((0, 0, 3));
        assert_eq!(r.form(), "NT ld a+1 ld c+2 off c=3");
        let g = r.geometry().unwrap();
        // A 4 x 5, ld 6; B stored 3 x 5 (N x K); C 4 x 3, ld 5, at element 3.
        assert_eq!((g.a.ld, g.b.ld, g.c.ld, g.c.offset), (6, 5, 5, 3));
        assert_eq!(g.lens, (3 * 6 + 5, 3 * 5, 3 + 3 * 5 + 3));
        let batched = row(BatchSmall, "b", (2, 2, 2), F32_ONLY).batch(3).c_col();
        assert_eq!(batched.form(), "NN C col");
        let g = batched.geometry().unwrap();
        assert_eq!(g.batch, Batch::strided(3, (4, 4, 4)));
        assert_eq!(g.lens, (12, 12, 12));
    }

    #[test]
    fn merit_is_the_geometric_mean_and_the_least() {
        let done = |row: &'static Row, ms: f64, cublas_ms: f64| Outcome {
            row,
            ty: Ty::F32,
            result: Ok(Measured {
                kernel: String::new(),
                ms,
                cublas_ms,
                diff: 0.0,
                host_us: (9.5, 4.25),
            }),
        };
        let outcomes = [
            done(&ROWS[0], 1.0, 2.0),
            done(&ROWS[1], 2.0, 1.0),
            done(&ROWS[2], 1.0, 1.0),
            Outcome {
                row: &ROWS[3],
                ty: Ty::F32,
                result: Err("out of memory".into()),
            },
        ];
        let m = merit(outcomes.iter()).unwrap();
        assert_eq!(m.rows, 3);
        assert!((m.geomean - 1.0).abs() < 1e-12);
        assert_eq!((m.min, m.at.as_str()), (0.5, "square: 8192^3"));
        let text = summary(&outcomes);
        assert!(
            text.contains("| f32 | 3 | 100.0% | 50.0% | square: 8192^3 | 1e-4 | 0 | 1 |"),
            "{text}"
        );
        assert!(text.contains("| square | f32 | 3 | 100.0% | 50.0% | square: 8192^3 |"));
        let columns = SUITE.titles.matches('|').count();
        let (md, csv) = lines(&outcomes[3]);
        assert_eq!(md.matches('|').count(), columns, "{md}");
        assert_eq!(csv.matches(',').count(), SUITE.columns.matches(',').count());
        let (md, csv) = lines(&outcomes[0]);
        assert_eq!(md.matches('|').count(), columns, "{md}");
        assert!(md.ends_with("| 9.5 / 4.2 |"), "{md}");
        assert_eq!(csv.matches(',').count(), SUITE.columns.matches(',').count());
        assert!(csv.ends_with(",9.50,4.25"), "{csv}");
    }

    #[test]
    fn differences_flag_nan_and_scale_by_cublas() {
        let m = |v: Vec<f32>| Matrix::from_vec(1, v.len(), v).unwrap();
        let diff = max_rel_diff(&m(vec![1.0, 2.0]), &m(vec![1.0, 4.0]));
        assert_eq!(diff, 0.5);
        assert!(max_rel_diff(&m(vec![f32::NAN, 1.0]), &m(vec![1.0, 1.0])).is_infinite());
    }
}
