//! Builds the kernels (`../kernels-gpu`, plain `no_std` Rust) into PTX with rustc's NVPTX
//! backend, one module per architecture of the catalogue (`rgemm_kernels::catalogue`): each
//! module holds exactly the entry points of the kernels whose spec names its architecture,
//! with their launch bounds. Writes `OUT_DIR/kernels_<target cpu>.ptx` and
//! `OUT_DIR/modules.rs` (the table `src/ptx.rs` embeds); a module no kernel names is not
//! built.
//!
//! The nvptx target links with `llvm-bitcode-linker`, which rustup cannot fetch here; the
//! stand-in `kernels-gpu/ptx-linker` does its three steps with the `llvm-tools` component
//! (llvm-link -> opt internalize + O3 -> llc).
use rgemm_kernels::catalogue::{CATALOGUE, MODULES, Module};
use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

const TARGET: &str = "nvptx64-nvidia-cuda";
const INSTALL_HINT: &str = "run `rustup toolchain install` in the repository root (it reads rust-toolchain.toml: the nightly with rust-src and llvm-tools)";

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let kernels = manifest
        .join("../kernels-gpu")
        .canonicalize()
        .unwrap_or_else(|e| {
            fail(&format!("kernel crate not found next to host/ ({e})"));
        });
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    for watched in ["src", "Cargo.toml", "ptx-linker"] {
        println!("cargo:rerun-if-changed={}", kernels.join(watched).display());
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rerun-if-changed={}",
        kernels.join("../Cargo.toml").display()
    );

    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let tools = check_toolchain(&rustc);

    let mut table = String::from(
        "/// The PTX modules built from the catalogue: `(architecture, PTX text)`.\n\
         pub const MODULE_PTX: &[(rgemm_kernels::catalogue::Arch, &str)] = &[\n",
    );
    // The modules build side by side: each is one long single-threaded rustc + LLVM chain
    // (the whole kernel crate, then opt and llc), so on a small machine this halves the wait.
    let builds: Vec<_> = MODULES
        .iter()
        .map(|module| (module, entries_of(module)))
        .filter(|(_, entries)| !entries.is_empty())
        .map(|(module, entries)| {
            let child = start_module(&kernels, &out_dir, &rustc, &tools, module, &entries);
            (module, entries, child)
        })
        .collect();
    for (module, entries, child) in builds {
        let name = format!("kernels_{}.ptx", module.target_cpu);
        finish_module(&out_dir, module, &entries, child, &name);
        let _ = writeln!(
            table,
            "    (rgemm_kernels::catalogue::Arch::{:?}, include_str!({:?})),",
            module.arch,
            out_dir.join(&name).display().to_string()
        );
    }
    table.push_str("];\n");
    std::fs::write(out_dir.join("modules.rs"), table)
        .unwrap_or_else(|e| fail(&format!("could not write modules.rs: {e}")));
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
    rustc: &str,
    tools: &Path,
    module: &Module,
    entries: &[(String, Option<(u32, u32)>)],
) -> Child {
    let cpu = module.target_cpu;
    let linker = kernels.join("ptx-linker");
    let target_dir = target_dir_of(out_dir, module);
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
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
        .env("PTX_LLVM_TOOLS", tools)
        .env("PTX_KEEP", keep.join(","))
        .env("RUSTC", rustc);
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
    let found = text.matches(".visible .entry ").count();
    for (entry, _) in entries {
        if !text.contains(&format!(".visible .entry {entry}(")) {
            fail(&format!(
                "the catalogue names entry point {entry} for {cpu}, but the kernel crate does not declare it"
            ));
        }
    }
    if found != entries.len() {
        fail(&format!(
            "the {cpu} module has {found} entry points, the catalogue names {}",
            entries.len()
        ));
    }
    std::fs::write(out_dir.join(name), with_launch_bounds(&text, entries))
        .unwrap_or_else(|e| fail(&format!("could not write the PTX: {e}")));
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

/// Checks for the nightly, rust-src and llvm-tools; returns the folder of the LLVM tools.
fn check_toolchain(rustc: &str) -> PathBuf {
    let version = run(rustc, &["-vV"]);
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
    let sysroot = PathBuf::from(run(rustc, &["--print", "sysroot"]).trim());
    let core_src = sysroot.join("lib/rustlib/src/rust/library/core");
    if !core_src.is_dir() {
        fail(&format!(
            "the rust-src component is missing ({} not found); {INSTALL_HINT}, or `rustup component add rust-src`",
            core_src.display()
        ));
    }
    let tools = sysroot.join("lib/rustlib").join(host).join("bin");
    for tool in ["llvm-link", "opt", "llc", "llvm-ar"] {
        if !Path::new(&tools.join(tool)).exists() {
            fail(&format!(
                "the llvm-tools component is missing ({tool} not in {}); {INSTALL_HINT}, or `rustup component add llvm-tools`",
                tools.display()
            ));
        }
    }
    tools
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
