//! Provides the kernels' PTX, one module per architecture of the catalogue
//! (`rgemm_kernels::catalogue`): each module holds exactly the entry points of the kernels
//! whose spec names its architecture, with their launch bounds. Writes
//! `OUT_DIR/kernels_<target cpu>.ptx` and `OUT_DIR/modules.rs` (the table `src/ptx.rs`
//! embeds); a module no kernel names is not built.
//!
//! The PTX comes from one of two places, chosen by `RGEMM_PTX`:
//! - `shipped`: the zstd-compressed modules in `ptx/`, built from the kernels' Rust source
//!   and shipped with the crate, so that a stable toolchain builds rgemm;
//! - `source`: compiled here from the kernel crate's Rust source (`rgemm_kernels::SOURCE_DIR`)
//!   by rustc's NVPTX backend, which needs the nightly of [`PTX_TOOLCHAIN`] with `rust-src`
//!   and `llvm-tools`;
//! - `check`: `source`, then a byte-for-byte comparison with the shipped modules; any
//!   difference fails the build (CI runs this);
//! - `update`: `source`, then the shipped modules and their fingerprint are rewritten (needs
//!   the `zstd` program);
//! - unset: `shipped` when the kernel source is the one the shipped modules were built from
//!   (`ptx/SOURCE_FINGERPRINT`), else `source`, with a warning to run `update`.
//!
//! The nvptx target links with `llvm-bitcode-linker`, which rustup cannot fetch here; the
//! stand-in `ptx-linker` in the kernel crate does its three steps with the `llvm-tools`
//! component (llvm-link -> opt internalize + O3 -> llc).
#[path = "src/ptx_split.rs"]
mod ptx_split;

use rgemm_kernels::catalogue::{CATALOGUE, MODULES, Module};
use std::env;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

const TARGET: &str = "nvptx64-nvidia-cuda";
/// The `ptx` profile of the kernel build, given on its command line, so that the kernel crate
/// builds alike inside this workspace and outside it (a published one): whole-program LTO,
/// so the linker sees one module.
const PTX_PROFILE: [&str; 6] = [
    "profile.ptx.inherits=\"release\"",
    "profile.ptx.opt-level=3",
    "profile.ptx.lto=true",
    "profile.ptx.panic=\"abort\"",
    "profile.ptx.codegen-units=1",
    "profile.ptx.debug=false",
];
/// A module's entry points, with their launch bounds `(max threads, min blocks per SM)`.
type Entries = Vec<(String, Option<(u32, u32)>)>;
/// The toolchain the shipped PTX was built with; a source build on another toolchain runs
/// it through rustup.
const PTX_TOOLCHAIN: &str = "nightly-2026-05-20";
const INSTALL_HINT: &str = "run `rustup toolchain install nightly-2026-05-20 --component rust-src,llvm-tools` (in a checkout of the repository, `rustup toolchain install` reads rust-toolchain.toml), or build with the shipped PTX (unset RGEMM_PTX)";
/// The fingerprint of the kernel source the shipped modules were built from.
const FINGERPRINT_FILE: &str = "SOURCE_FINGERPRINT";

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Shipped,
    Source,
    Check,
    Update,
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let shipped = manifest.join("ptx");
    println!("cargo:rerun-if-env-changed=RGEMM_PTX");
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", shipped.display());

    // docs.rs builds offline without the nvptx tools; the documentation needs no PTX.
    if env::var_os("DOCS_RS").is_some() {
        write_table(&out_dir, &[]);
        return;
    }

    let kernels = PathBuf::from(rgemm_kernels::SOURCE_DIR);
    for watched in ["src", "Cargo.toml", "ptx-linker"] {
        println!("cargo:rerun-if-changed={}", kernels.join(watched).display());
    }
    let fingerprint = source_fingerprint(&kernels, &manifest.join("build.rs"));
    let mode = match env::var("RGEMM_PTX").as_deref() {
        Ok("shipped") => Mode::Shipped,
        Ok("source") => Mode::Source,
        Ok("check") => Mode::Check,
        Ok("update") => Mode::Update,
        Ok("") | Err(_) => {
            let recorded = std::fs::read_to_string(shipped.join(FINGERPRINT_FILE)).ok();
            if recorded.as_deref().map(str::trim) == Some(fingerprint.as_str()) {
                Mode::Shipped
            } else {
                println!(
                    "cargo:warning=the kernel source differs from the one the shipped PTX was built from: building the PTX from source (run `RGEMM_PTX=update cargo build` to ship it)"
                );
                Mode::Source
            }
        }
        Ok(other) => fail(&format!(
            "RGEMM_PTX={other:?}: expected shipped, source, check or update"
        )),
    };

    let modules: Vec<_> = MODULES
        .iter()
        .map(|module| (module, entries_of(module)))
        .filter(|(_, entries)| !entries.is_empty())
        .collect();
    let names: Vec<String> = modules
        .iter()
        .map(|(module, _)| format!("kernels_{}.ptx", module.target_cpu))
        .collect();

    if mode == Mode::Shipped {
        for ((module, entries), name) in modules.iter().zip(&names) {
            let text = read_shipped(&shipped, name);
            check_entries(module, entries, &text);
            write(&out_dir.join(name), &text);
        }
    } else {
        build_from_source(&kernels, &out_dir, &modules, &names);
        match mode {
            Mode::Check => compare_with_shipped(&shipped, &out_dir, &names, &fingerprint),
            Mode::Update => update_shipped(&shipped, &out_dir, &names, &fingerprint),
            _ => {}
        }
    }
    let arches: Vec<_> = modules.iter().map(|(module, _)| module.arch).collect();
    write_table(&out_dir, &arches.iter().zip(&names).collect::<Vec<_>>());
}

/// Writes `modules.rs`: the table of `(architecture, PTX text)` that `src/ptx.rs` embeds,
/// and each entry point's own module as byte ranges of its architecture's text
/// ([`ptx_split`]).
fn write_table(out_dir: &Path, modules: &[(&rgemm_kernels::catalogue::Arch, &String)]) {
    let mut table = String::from(
        "/// The PTX modules built from the catalogue: `(architecture, PTX text)`.\n\
         pub const MODULE_PTX: &[(rgemm_kernels::catalogue::Arch, &str)] = &[\n",
    );
    let mut entries = String::from(
        "/// Each entry point's own module: `(architecture, entry, byte ranges of the \
         architecture's text)`.\n\
         pub const ENTRY_PTX: &[EntryModule] = &[\n",
    );
    for (arch, name) in modules {
        let path = out_dir.join(name);
        let _ = writeln!(
            table,
            "    (rgemm_kernels::catalogue::Arch::{arch:?}, include_str!({:?})),",
            path.display().to_string()
        );
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| fail(&format!("reading {}: {e}", path.display())));
        let pieces = ptx_split::split(&text)
            .unwrap_or_else(|e| fail(&format!("cutting {name} into entries: {e:?}")));
        for piece in pieces {
            let ranges: Vec<String> = piece
                .ranges
                .iter()
                .map(|r| format!("({}, {})", r.start, r.end))
                .collect();
            let _ = writeln!(
                entries,
                "    (rgemm_kernels::catalogue::Arch::{arch:?}, {:?}, &[{}]),",
                piece.entry,
                ranges.join(", ")
            );
        }
    }
    table.push_str("];\n");
    entries.push_str("];\n");
    table.push_str(&entries);
    write(&out_dir.join("modules.rs"), &table);
}

/// FNV-1a over the kernel crate's sources, its PTX linker and this build script (what the
/// PTX text depends on besides the toolchain), by relative path, in path order.
fn source_fingerprint(kernels: &Path, build_script: &Path) -> String {
    let mut files = Vec::new();
    collect_rs(&kernels.join("src"), &mut files);
    files.sort();
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(kernels)
                .unwrap_or(&f)
                .to_string_lossy()
                .replace('\\', "/");
            (rel, f)
        })
        .collect();
    named.push(("ptx-linker".into(), kernels.join("ptx-linker")));
    named.push(("build.rs".into(), build_script.to_path_buf()));
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for (rel, path) in named {
        let Ok(bytes) = std::fs::read(&path) else {
            return format!("unreadable:{rel}");
        };
        feed(rel.as_bytes());
        feed(&(bytes.len() as u64).to_le_bytes());
        feed(&bytes);
    }
    format!("fnv1a64:{hash:016x}")
}

fn collect_rs(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The shipped module `name`, decompressed.
fn read_shipped(shipped: &Path, name: &str) -> String {
    let path = shipped.join(format!("{name}.zst"));
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        fail(&format!(
            "the shipped PTX {} cannot be read ({e}); build it from source with RGEMM_PTX=source",
            path.display()
        ))
    });
    let mut decoder = ruzstd::decoding::StreamingDecoder::new(std::io::BufReader::new(file))
        .unwrap_or_else(|e| fail(&format!("{}: not a zstd frame ({e})", path.display())));
    let mut text = String::new();
    decoder
        .read_to_string(&mut text)
        .unwrap_or_else(|e| fail(&format!("{}: cannot be decompressed ({e})", path.display())));
    text
}

/// Fails unless `text` declares exactly the entry points the catalogue names for `module`.
fn check_entries(module: &Module, entries: &[(String, Option<(u32, u32)>)], text: &str) {
    let cpu = module.target_cpu;
    let found = text.matches(".visible .entry ").count();
    for (entry, _) in entries {
        if !text.contains(&format!(".visible .entry {entry}(")) {
            fail(&format!(
                "the catalogue names entry point {entry} for {cpu}, but the PTX does not declare it"
            ));
        }
    }
    if found != entries.len() {
        fail(&format!(
            "the {cpu} module has {found} entry points, the catalogue names {}",
            entries.len()
        ));
    }
}

/// Builds every module from the kernel crate's source into `OUT_DIR`.
fn build_from_source(
    kernels: &Path,
    out_dir: &Path,
    modules: &[(&Module, Entries)],
    names: &[String],
) {
    if !kernels.join("src/lib.rs").is_file() {
        fail(&format!(
            "the kernel source is not at {}; build with the shipped PTX (unset RGEMM_PTX)",
            kernels.display()
        ));
    }
    let toolchain = toolchain();
    // The modules build side by side: each is one long single-threaded rustc + LLVM chain
    // (the whole kernel crate, then opt and llc), so on a small machine this halves the wait.
    let builds: Vec<_> = modules
        .iter()
        .map(|(module, entries)| {
            let child = start_module(kernels, out_dir, &toolchain, module, entries);
            (module, entries, child)
        })
        .collect();
    for ((module, entries, child), name) in builds.into_iter().zip(names) {
        finish_module(out_dir, module, entries, child, name);
    }
}

/// Fails the build where a module built from source differs from the shipped one.
fn compare_with_shipped(shipped: &Path, out_dir: &Path, names: &[String], fingerprint: &str) {
    let mut differ = Vec::new();
    for name in names {
        let built = std::fs::read_to_string(out_dir.join(name))
            .unwrap_or_else(|e| fail(&format!("could not read the built {name}: {e}")));
        let ship = read_shipped(shipped, name);
        if built == ship {
            println!(
                "cargo:warning=PTX check: {name} built from source equals the shipped module ({} bytes)",
                built.len()
            );
            continue;
        }
        let line = built
            .lines()
            .zip(ship.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| built.lines().count().min(ship.lines().count()));
        differ.push(format!(
            "{name}: built {} bytes, shipped {} bytes, first difference at line {}",
            built.len(),
            ship.len(),
            line + 1
        ));
    }
    let recorded = std::fs::read_to_string(shipped.join(FINGERPRINT_FILE)).unwrap_or_default();
    if recorded.trim() != fingerprint {
        differ.push(format!(
            "{FINGERPRINT_FILE}: shipped {:?}, source {fingerprint:?}",
            recorded.trim()
        ));
    }
    if !differ.is_empty() {
        fail(&format!(
            "the shipped PTX differs from the kernels' source build (run `RGEMM_PTX=update cargo build` and commit host/ptx/):\n  {}",
            differ.join("\n  ")
        ));
    }
}

/// Rewrites the shipped modules from the ones just built, and their fingerprint.
fn update_shipped(shipped: &Path, out_dir: &Path, names: &[String], fingerprint: &str) {
    std::fs::create_dir_all(shipped)
        .unwrap_or_else(|e| fail(&format!("could not create {}: {e}", shipped.display())));
    for name in names {
        let target = shipped.join(format!("{name}.zst"));
        // Level 19 with a long window: the three modules take 4.6 MB instead of 55 MB.
        let status = Command::new("zstd")
            .args(["-19", "--long=27", "-q", "-f", "-o"])
            .arg(&target)
            .arg(out_dir.join(name))
            .status()
            .unwrap_or_else(|e| fail(&format!("could not run zstd (install it): {e}")));
        if !status.success() {
            fail(&format!("zstd failed on {name}"));
        }
    }
    write(&shipped.join(FINGERPRINT_FILE), &format!("{fingerprint}\n"));
    println!(
        "cargo:warning=PTX update: wrote {} modules and {FINGERPRINT_FILE} to {}",
        names.len(),
        shipped.display()
    );
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text)
        .unwrap_or_else(|e| fail(&format!("could not write {}: {e}", path.display())));
}

/// The entry points `module` holds, with their launch bounds `(max threads, min blocks per
/// SM)` where the spec sets them.
fn entries_of(module: &Module) -> Vec<(String, Option<(u32, u32)>)> {
    let mut entries = Vec::new();
    for spec in CATALOGUE.iter().filter(|s| s.arch == module.arch) {
        for (elem, name) in spec.entries() {
            let bounds = spec
                .min_blocks_per_sm
                .of(elem)
                .map(|blocks| (spec.fixed_threads(), blocks));
            if bounds.is_some_and(|(threads, _)| threads == 0) {
                fail(&format!("{name}: launch bounds need a fixed block shape"));
            }
            entries.push((name.to_string(), bounds));
        }
        for name in spec.fixup_entries() {
            entries.push((name.to_string(), None));
        }
    }
    entries
}

/// Each module's own target folder, so the builds can run at once.
fn target_dir_of(out_dir: &Path, module: &Module) -> PathBuf {
    out_dir.join(format!("kernels-target-{}", module.target_cpu))
}

/// Starts building the kernel crate as PTX for `module`, keeping only `entries`.
fn start_module(
    kernels: &Path,
    out_dir: &Path,
    toolchain: &Toolchain,
    module: &Module,
    entries: &[(String, Option<(u32, u32)>)],
) -> Child {
    let cpu = module.target_cpu;
    let linker = kernels.join("ptx-linker");
    let target_dir = target_dir_of(out_dir, module);
    let mut cmd = Command::new(&toolchain.cargo[0]);
    cmd.args(&toolchain.cargo[1..]);
    // The kernel crate is an rlib for the host; for the GPU it is linked as a cdylib.
    cmd.current_dir(kernels)
        .args([
            "rustc",
            "-p",
            "rgemm-kernels",
            "--profile",
            "ptx",
            "--target",
            TARGET,
        ])
        .args(["-Zbuild-std=core", "--crate-type", "cdylib"])
        .args(PTX_PROFILE.iter().flat_map(|setting| ["--config", setting]))
        .arg("--manifest-path")
        .arg(kernels.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's settings are for the host target; the inner build gets its own.
    for (key, _) in env::vars() {
        let scrub = matches!(
            key.as_str(),
            "RUSTFLAGS"
                | "CARGO_ENCODED_RUSTFLAGS"
                | "CARGO_TARGET_DIR"
                | "RUSTC_WRAPPER"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "CARGO_MAKEFLAGS"
                | "CARGO_BUILD_TARGET"
                | "RUSTDOCFLAGS"
                | "CARGO_ENCODED_RUSTDOCFLAGS"
        ) || key.starts_with("CARGO_BUILD_")
            || key.starts_with("CARGO_PROFILE_")
            || key.starts_with("CARGO_TARGET_")
            || key.starts_with("CARGO_FEATURE_")
            || key.starts_with("CARGO_CFG_");
        if scrub {
            cmd.env_remove(&key);
        }
    }
    let mut flags = vec![
        format!("-Ctarget-cpu={cpu}"),
        format!("-Clinker={}", linker.display()),
    ];
    if let Some(isa) = module.ptx_isa {
        flags.push(format!("-Ctarget-feature=+{isa}"));
    }
    let keep: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    cmd.env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        .env("PTX_LLVM_TOOLS", &toolchain.tools)
        .env("PTX_KEEP", keep.join(","))
        .env("RUSTC", &toolchain.rustc);
    cmd.spawn()
        .unwrap_or_else(|e| fail(&format!("could not run cargo: {e}")))
}

/// Waits for `module`'s build and writes its PTX, with launch bounds, to `OUT_DIR/name`.
fn finish_module(
    out_dir: &Path,
    module: &Module,
    entries: &[(String, Option<(u32, u32)>)],
    mut child: Child,
    name: &str,
) {
    let cpu = module.target_cpu;
    let target_dir = target_dir_of(out_dir, module);
    let status = child
        .wait()
        .unwrap_or_else(|e| fail(&format!("could not wait for cargo: {e}")));
    if !status.success() {
        fail(&format!(
            "building the kernels for {TARGET} ({cpu}) failed (see the errors above); if a toolchain piece is missing, {INSTALL_HINT}"
        ));
    }
    let ptx = target_dir
        .join(TARGET)
        .join("ptx")
        .join("rgemm_kernels.ptx");
    let text = std::fs::read_to_string(&ptx)
        .unwrap_or_else(|e| fail(&format!("no PTX at {}: {e}", ptx.display())));
    check_entries(module, entries, &text);
    write(&out_dir.join(name), &with_launch_bounds(&text, entries));
}

/// Writes `.maxntid` / `.minnctapersm` (the PTX form of `__launch_bounds__`) after the
/// parameter list of every entry whose spec sets them.
fn with_launch_bounds(ptx: &str, entries: &[(String, Option<(u32, u32)>)]) -> String {
    let mut out = String::with_capacity(ptx.len() + 4096);
    let mut pending: Option<(u32, u32)> = None;
    for line in ptx.lines() {
        if let Some(name) = line.trim_start().strip_prefix(".visible .entry ") {
            let name = name.split('(').next().unwrap_or("");
            pending = entries
                .iter()
                .find(|(entry, _)| entry == name)
                .and_then(|(_, bounds)| *bounds);
        }
        out.push_str(line);
        out.push('\n');
        if let (Some((threads, blocks)), true) = (pending, line.starts_with(')')) {
            out.push_str(&format!(
                ".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"
            ));
            pending = None;
        }
    }
    out
}

/// The programs of a source build.
struct Toolchain {
    /// The cargo command: this build's own cargo on a nightly, else
    /// `rustup run PTX_TOOLCHAIN cargo`.
    cargo: Vec<String>,
    rustc: String,
    /// The folder of the LLVM tools (`llvm-tools` component).
    tools: PathBuf,
}

/// The nightly toolchain of a source build, checked for rust-src and llvm-tools: this
/// build's own where it is a nightly, else [`PTX_TOOLCHAIN`] through rustup.
fn toolchain() -> Toolchain {
    let own_rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let own_cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let (cargo, rustc) = if run(&own_rustc, &["-vV"]).contains("nightly") {
        (vec![own_cargo], own_rustc)
    } else {
        let rustc = run("rustup", &["which", "--toolchain", PTX_TOOLCHAIN, "rustc"]);
        let rustc = rustc.trim().to_string();
        if rustc.is_empty() {
            fail(&format!(
                "building the PTX from source needs the nightly {PTX_TOOLCHAIN}; {INSTALL_HINT}"
            ));
        }
        let cargo = ["rustup", "run", PTX_TOOLCHAIN, "cargo"];
        (cargo.iter().map(|s| s.to_string()).collect(), rustc)
    };
    let version = run(&rustc, &["-vV"]);
    if !version.contains("nightly") {
        fail(&format!(
            "the kernels need a nightly rustc (found: {}); {INSTALL_HINT}",
            version.lines().next().unwrap_or("?")
        ));
    }
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or("x86_64-unknown-linux-gnu")
        .to_string();
    let sysroot = PathBuf::from(run(&rustc, &["--print", "sysroot"]).trim());
    let core_src = sysroot.join("lib/rustlib/src/rust/library/core");
    if !core_src.is_dir() {
        fail(&format!(
            "the rust-src component is missing ({} not found); {INSTALL_HINT}",
            core_src.display()
        ));
    }
    let tools = sysroot.join("lib/rustlib").join(host).join("bin");
    for tool in ["llvm-link", "opt", "llc", "llvm-ar"] {
        if !Path::new(&tools.join(tool)).exists() {
            fail(&format!(
                "the llvm-tools component is missing ({tool} not in {}); {INSTALL_HINT}",
                tools.display()
            ));
        }
    }
    Toolchain {
        cargo,
        rustc,
        tools,
    }
}

fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| fail(&format!("could not run {program}: {e}")));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fail(message: &str) -> ! {
    eprintln!("error: rgemm kernels: {message}");
    panic!("rgemm kernels: {message}");
}
