//! Builds the kernels (`../kernels-gpu`, plain `no_std` Rust) into PTX with rustc's NVPTX
//! backend and embeds it: `OUT_DIR/kernels.ptx` (sm_70) and `OUT_DIR/kernels_sm80.ptx`
//! (sm_80: the kernels that need `cp.async`), read by `src/ptx.rs`.
//!
//! The nvptx target links with `llvm-bitcode-linker`, which rustup cannot fetch here; the
//! stand-in `kernels-gpu/ptx-linker` does its three steps with the `llvm-tools` component
//! (llvm-link -> opt internalize + O3 -> llc).
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

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

    // Plain SIMT kernels: sm_70 PTX, which the driver compiles for any newer GPU. Kernels
    // with sm_80 instructions (cp.async) are only in the second module.
    build_module(&kernels, &out_dir, &rustc, &tools, "sm_70", "kernels.ptx");
    build_module(
        &kernels,
        &out_dir,
        &rustc,
        &tools,
        "sm_80",
        "kernels_sm80.ptx",
    );
}

/// Builds the kernel crate as PTX for `cpu` into `OUT_DIR/name`.
fn build_module(kernels: &Path, out_dir: &Path, rustc: &str, tools: &Path, cpu: &str, name: &str) {
    let linker = kernels.join("ptx-linker");
    let target_dir = out_dir.join(format!("kernels-target-{cpu}"));
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
    let flags = [
        format!("-Ctarget-cpu={cpu}"),
        format!("-Clinker={}", linker.display()),
    ];
    cmd.env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        .env("PTX_LLVM_TOOLS", tools)
        .env("RUSTC", rustc);

    let status = cmd
        .status()
        .unwrap_or_else(|e| fail(&format!("could not run cargo: {e}")));
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
    std::fs::write(out_dir.join(name), with_launch_bounds(&text))
        .unwrap_or_else(|e| fail(&format!("could not write the PTX: {e}")));
}

#[path = "../kernels-gpu/src/launch_bounds.rs"]
mod bounds;

/// Writes `.maxntid` / `.minnctapersm` after the parameter list of every entry named in
/// `kernels-gpu/src/launch_bounds.rs`, shared with the kernel crate (the PTX form of `__launch_bounds__`).
fn with_launch_bounds(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len() + 4096);
    let mut pending: Option<(u32, u32)> = None;
    for line in ptx.lines() {
        if let Some(name) = line.trim_start().strip_prefix(".visible .entry ") {
            let name = name.split('(').next().unwrap_or("");
            pending = bounds::LAUNCH_BOUNDS
                .iter()
                .find(|(prefix, _, _)| name.starts_with(prefix) && name[prefix.len()..].is_empty())
                .map(|&(_, threads, blocks)| (threads, blocks));
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
