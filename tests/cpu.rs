//! Tests that need no GPU: the catalogue and the embedded PTX (modules, entry points,
//! parameter lists, launch bounds, barriers, shared memory), launch rules and shape checks,
//! occupancy arithmetic, the CPU reference, the catalogue page's kernel table, and the no-driver
//! path.
use rgemm::Arch;
use rgemm::internals::{ENTRY_PARAMS, PtxParam};
use rgemm::{
    BlockResources, DeviceProps, Element, Error, Kernel, Limiter, Matrix, Occupancy, bf16, f16,
};
use rgemm_kernels::catalogue::{CATALOGUE, MODULES};

/// Every entry point, for every element type.
fn all_entries() -> Vec<(Kernel, String)> {
    fn of<T: Element>(out: &mut Vec<(Kernel, String)>) {
        for kernel in Kernel::FIXED.into_iter().chain([Kernel::TiledDynamic(4)]) {
            if kernel.supports::<T>() {
                out.push((kernel, kernel.entry_name::<T>()));
            }
        }
    }
    let mut out = Vec::new();
    of::<f32>(&mut out);
    of::<f64>(&mut out);
    of::<f16>(&mut out);
    of::<bf16>(&mut out);
    out
}

/// The PTX of `arch`'s module.
fn module(arch: Arch) -> &'static str {
    rgemm::internals::ptx_module(arch).unwrap_or_else(|| panic!("no {arch:?} module"))
}

/// The module a kernel is loaded from.
fn module_of(kernel: Kernel) -> &'static str {
    module(kernel.spec().arch)
}

/// The text of entry `name` in `ptx`: from `.entry name(` to the closing brace at column 0.
fn entry_in(ptx: &'static str, name: &str) -> &'static str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("entry {name} not in the PTX"));
    let len = ptx[start..].find("\n}\n").expect("entry end");
    &ptx[start..start + len]
}

/// The text of entry `name` in the module its kernel loads from.
fn entry_text(name: &str) -> &'static str {
    let kernel = all_entries()
        .into_iter()
        .find(|(_, n)| n == name)
        .map(|(k, _)| k)
        .unwrap_or_else(|| panic!("{name} is no entry"));
    entry_in(module_of(kernel), name)
}

fn ptx_params(ptx: &'static str, name: &str) -> Vec<PtxParam> {
    let text = entry_in(ptx, name);
    let list = &text[text.find('(').unwrap() + 1..text.find(')').unwrap()];
    list.split(',')
        .map(|p| match p.split_whitespace().collect::<Vec<_>>()[..] {
            [".param", ".u64", ".ptr", ..] => PtxParam::Ptr,
            [".param", ".align", align, ".b8", array] => {
                let bytes = &array[array.find('[').unwrap() + 1..array.len() - 1];
                PtxParam::Block {
                    align: align.parse().unwrap(),
                    bytes: bytes.parse().unwrap(),
                }
            }
            _ => panic!("{name}: unexpected parameter `{p}`"),
        })
        .collect()
}

/// The entry points of `arch`'s module: `.visible .entry NAME(`.
fn entries_of(ptx: &str) -> Vec<String> {
    ptx.match_indices(".visible .entry ")
        .map(|(at, _)| {
            let rest = &ptx[at + ".visible .entry ".len()..];
            rest[..rest.find('(').unwrap()].to_string()
        })
        .collect()
}

#[test]
fn each_module_holds_exactly_its_kernels_with_the_one_parameter_list() {
    let mut built = 0;
    for m in &MODULES {
        let Some(ptx) = rgemm::internals::ptx_module(m.arch) else {
            assert!(
                !CATALOGUE.iter().any(|s| s.arch == m.arch),
                "{:?} has kernels but no module",
                m.arch
            );
            continue;
        };
        built += 1;
        assert!(
            ptx.contains(&format!(".target {}", m.target_cpu)),
            "{:?}",
            m.arch
        );
        let mut want: Vec<String> = CATALOGUE
            .iter()
            .filter(|s| s.arch == m.arch)
            .flat_map(|s| {
                s.entries()
                    .map(|(_, e)| e.to_string())
                    .chain(s.fixup_entries().map(|e| e.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut have = entries_of(ptx);
        want.sort();
        have.sort();
        assert_eq!(have, want, "{:?}: entries", m.arch);
        for name in &have {
            assert_eq!(ptx_params(ptx, name), ENTRY_PARAMS, "{name}");
        }
    }
    assert_eq!(built, 3, "sm_70, sm_80 and sm_90a");
    // Every kernel's entries are where its spec says, and only there.
    for (kernel, name) in all_entries() {
        for m in &MODULES {
            let there = rgemm::internals::ptx_module(m.arch)
                .is_some_and(|ptx| ptx.contains(&format!(".entry {name}(")));
            assert_eq!(
                there,
                kernel.spec().arch == m.arch,
                "{name} in {:?}",
                m.arch
            );
        }
    }
    // `stream_k`'s second entries: one per accumulator type, one per 16-bit C.
    let fixups: Vec<_> = Kernel::StreamK.spec().fixup_entries().collect();
    assert_eq!(fixups.len(), 4);
    for name in fixups {
        let text = entry_in(module(Arch::Sm80), name.as_str());
        assert!(!text.contains(".local") && !text.contains("call"), "{name}");
    }
}

/// Each entry point is loaded as a module of its own, cut from its architecture's module:
/// the header, the entry exactly as the whole module has it, and every function it calls.
#[test]
fn each_entry_point_has_its_own_module_with_what_it_calls() {
    let mut cut = 0;
    for spec in CATALOGUE.iter() {
        let whole = module(spec.arch);
        let header_end = whole.find(".address_size 64\n").expect("header") + 17;
        let header: String = whole[..header_end]
            .lines()
            .filter(|l| l.starts_with('.'))
            .map(|l| format!("{l}\n"))
            .collect();
        let names = spec
            .entries()
            .map(|(_, e)| e.to_string())
            .chain(spec.fixup_entries().map(|e| e.to_string()));
        for name in names {
            let own = rgemm::internals::ptx_entry(spec.arch, &name)
                .unwrap_or_else(|| panic!("{name}: no module of its own"));
            assert!(own.starts_with(&header), "{name}: header");
            assert_eq!(own.matches(".entry ").count(), 1, "{name}: one entry");
            assert_eq!(entry_in(leak(own.clone()), &name), entry_in(whole, &name));
            for call in own.split("call.uni ").skip(1) {
                let callee = call
                    .split([',', ';', ' '])
                    .find(|w| !w.is_empty() && !w.starts_with('('))
                    .expect("callee");
                assert!(
                    own.contains(&format!(".func {callee}(")),
                    "{name} calls {callee}, which its module does not define"
                );
            }
            if own.contains("gpu_launch_sized_workgroup_mem;") {
                assert!(own.contains(".extern .shared"), "{name}: shared memory");
            }
            assert!(own.len() < whole.len(), "{name}: cut");
            cut += 1;
        }
    }
    assert!(cut > 200, "{cut} entry points");
    assert!(rgemm::internals::ptx_entry(Arch::Sm80, "no_such_entry").is_none());
}

/// `text` for the rest of the process (a test's few modules).
fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

#[test]
fn the_catalogue_is_consistent() {
    let mut names: Vec<_> = CATALOGUE.iter().map(|s| s.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), CATALOGUE.len(), "entry names are unique");
    // One spec per variant, in the catalogue's order.
    let variants: Vec<_> = every_variant().iter().map(|k| k.spec().name).collect();
    let specs: Vec<_> = CATALOGUE.iter().map(|s| s.name).collect();
    assert_eq!(variants, specs);
    for spec in CATALOGUE {
        assert!(spec.file.starts_with("kernels-gpu/src/kernels/") && spec.file.ends_with(".rs"));
        assert!(
            !spec.idea.is_empty() && !spec.elements.is_empty(),
            "{}",
            spec.name
        );
        assert!(
            spec.cpu,
            "{}: every kernel runs on the CPU executor today",
            spec.name
        );
        // The kernel the host runs where TMA cannot read: one that needs no TMA, takes
        // every element this one does, and runs wherever this one does.
        if let Some(other) = spec.tma.and_then(|maps| maps.otherwise) {
            let other: Kernel = other.parse().expect("a catalogued kernel");
            let o = other.spec();
            assert!(o.tma.is_none() && o.arch <= spec.arch, "{}", spec.name);
            assert!(
                spec.elements.iter().all(|e| o.elements.contains(e)),
                "{}",
                spec.name
            );
            assert_eq!(o.precision, spec.precision, "{}", spec.name);
        }
    }
}

/// The house's rule: a kernel file is a composition of parts (`parts/`) and instruction
/// atoms (`device/`), never of another kernel; parts import no kernel either. Every file
/// under `kernels/` is a catalogued kernel's file, and every catalogued file exists.
#[test]
fn kernels_are_compositions_of_parts_and_import_no_kernel() {
    let repo = repo_root();
    let root = repo.join("kernels-gpu");
    let kernels = source_files(&root.join("src/kernels"));
    let parts = source_files(&root.join("src/parts"));
    assert!(
        kernels.len() >= 40 && !parts.is_empty(),
        "the source tree was found"
    );
    let mut offences = Vec::new();
    for (path, text) in kernels.iter().chain(&parts) {
        let in_kernels = path.starts_with(root.join("src/kernels"));
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("crate::kernels") || (in_kernels && code.contains("super::")) {
                offences.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "kernels and parts import no kernel:\n{}",
        offences.join("\n")
    );
    // The host reaches the kernels through the catalogue only: their launches are their
    // schedules' plans.
    let host = source_files(&repo.join("host/src"));
    assert!(!host.is_empty(), "the host's source was found");
    let named: Vec<_> = host
        .iter()
        .flat_map(|(path, text)| {
            text.lines().enumerate().filter_map(move |(n, line)| {
                let code = line.split("//").next().unwrap_or("");
                let named = code.contains("rgemm_kernels::kernels");
                named.then(|| format!("{}:{}: {}", path.display(), n + 1, line.trim()))
            })
        })
        .collect();
    assert!(
        named.is_empty(),
        "the host names no kernel module of rgemm_kernels (the catalogue lists them):\n{}",
        named.join("\n")
    );
    let catalogued: std::collections::BTreeSet<_> =
        CATALOGUE.iter().map(|spec| repo.join(spec.file)).collect();
    let files: std::collections::BTreeSet<_> = kernels
        .iter()
        .map(|(path, _)| path.clone())
        .filter(|path| path.file_name().is_some_and(|f| f != "mod.rs"))
        .collect();
    assert_eq!(
        catalogued, files,
        "one file per catalogued kernel, and no other"
    );
}

/// The repository's root: where the build machine had it, or the working directory (or its
/// parent) where the tests run from a copy of the tree on another machine.
fn repo_root() -> std::path::PathBuf {
    let built = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    [built, ".".into(), "..".into()]
        .into_iter()
        .find(|dir| dir.join("kernels-gpu/src/catalogue.rs").is_file())
        .expect("the repository's source tree, for the tests that read it")
}

/// Every `.rs` file under `dir`, with its text.
fn source_files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path, text));
            }
        }
    }
    found.sort();
    found
}

fn every_variant() -> Vec<Kernel> {
    Kernel::FIXED
        .into_iter()
        .chain([Kernel::TiledDynamic(16)])
        .collect()
}

/// docs/CATALOGUE.md's kernel table, rendered from the catalogue: a row per kernel.
fn catalogue_rows() -> Vec<String> {
    every_variant()
        .into_iter()
        .map(|kernel| {
            let spec = kernel.spec();
            let variant = match kernel {
                Kernel::TiledDynamic(_) => "TiledDynamic(w)".to_string(),
                other => format!("{other:?}"),
            };
            let block = match spec.threads {
                rgemm_kernels::catalogue::Threads::Fixed(x, 1) => format!("{x}"),
                rgemm_kernels::catalogue::Threads::Fixed(x, y) => format!("{x} x {y}"),
                rgemm_kernels::catalogue::Threads::Square => "w x w".into(),
            };
            let tile = match spec.tile {
                rgemm_kernels::catalogue::Tile::Fixed { rows, cols } => format!("{rows} x {cols}"),
                rgemm_kernels::catalogue::Tile::Square => "w x w".into(),
                rgemm_kernels::catalogue::Tile::Thin => "1 x 32 or 32 x n".into(),
            };
            let shared = match (kernel, spec.shared) {
                (Kernel::TiledDynamic(_), _) => "2 w^2 x acc".into(),
                (_, rgemm_kernels::catalogue::Shared::InputElements(_))
                    if spec.elements != [rgemm::Elem::F32] =>
                {
                    format!("{} (16-bit inputs)", kernel.shared_bytes::<f16>())
                }
                _ if spec.elements == [rgemm::Elem::F64] => {
                    format!("{} (f64)", kernel.shared_bytes::<f64>())
                }
                _ if spec.elements == [rgemm::Elem::F32] => {
                    format!("{} (f32)", kernel.shared_bytes::<f32>())
                }
                _ => format!(
                    "{} / {}",
                    kernel.shared_bytes::<f32>(),
                    kernel.shared_bytes::<f64>()
                ),
            };
            let bounds = match (spec.min_blocks_per_sm.f32, spec.elements) {
                (Some(b), [rgemm::Elem::F64]) => format!("{b}/SM"),
                (Some(b), _) => format!("{b}/SM (f32 acc)"),
                (None, _) => "-".into(),
            };
            format!(
                "| `{}` (`{variant}`) | `{}` | {} | {} | {block} | {tile} | {shared} | {bounds} |",
                spec.name,
                spec.file.trim_start_matches("kernels-gpu/src/kernels/"),
                spec.idea,
                spec.arch.module().target_cpu,
            )
        })
        .collect()
}

#[test]
fn the_catalogue_page_lists_every_kernel_as_the_catalogue_says() {
    let page = include_str!("../docs/CATALOGUE.md");
    let rows = catalogue_rows();
    let missing: Vec<_> = rows.iter().filter(|r| !page.contains(r.as_str())).collect();
    assert!(
        missing.is_empty(),
        "docs/CATALOGUE.md's kernel table differs from the catalogue; these rows are expected:\n{}",
        rows.join("\n")
    );
}

/// Every entry point of every kernel against the facts its spec declares
/// (`KernelSpec::ptx`), and the rules every kernel keeps: an entry with shared memory
/// writes and reads it (sized at launch) and declares its barriers; one without has no
/// barrier; multiply-adds are fused (or on the tensor cores); no stack frame and no calls
/// (panic paths all compiled away) unless the spec declares its calls.
#[test]
fn every_entry_point_shows_the_ptx_facts_of_its_spec() {
    use rgemm_kernels::catalogue::{Elem, PtxFact};
    let mut checked = 0;
    for kernel in every_variant() {
        let spec = kernel.spec();
        let ptx = module(spec.arch);
        let main = spec.entries().map(|(elem, entry)| (elem, entry, false));
        let second = spec.fixup_entries().map(|entry| {
            let elem = match &entry.as_str()[entry.as_str().rfind('_').unwrap() + 1..] {
                "f64" => Elem::F64,
                "f16" => Elem::F16,
                "bf16" => Elem::Bf16,
                _ => Elem::F32,
            };
            (elem, entry, true)
        });
        for (elem, entry, is_second) in main.chain(second) {
            let name = entry.as_str();
            let text = entry_in(ptx, name);
            let suffix = match is_second {
                false => &name[spec.name.len() + 1..],
                true => &name[name.rfind('_').unwrap() + 1..],
            };
            let facts: Vec<PtxFact> = spec
                .ptx
                .iter()
                .filter(|f| f.holds_for(suffix, is_second))
                .flat_map(|f| f.facts.iter().copied())
                .collect();
            let t = |s: &str| s.replace("{t}", elem.suffix());
            let barriers = text.matches("bar.sync").count() as u32;
            let mut calls = None;
            for fact in &facts {
                match *fact {
                    PtxFact::Barriers(n) => assert_eq!(barriers, n, "{name}: barriers"),
                    PtxFact::Has(s) => assert!(text.contains(&t(s)), "{name} lacks {}", t(s)),
                    PtxFact::Count(s, n) => {
                        assert_eq!(text.matches(&t(s)).count() as u32, n, "{name}: {}", t(s))
                    }
                    PtxFact::AtLeast(s, n) => {
                        let count = text.matches(&t(s)).count() as u32;
                        assert!(count >= n, "{name}: {count} {}, fewer than {n}", t(s))
                    }
                    PtxFact::Lacks(s) => assert!(!text.contains(&t(s)), "{name} has {}", t(s)),
                    PtxFact::Line(all) => assert!(
                        text.lines().any(|l| all.iter().all(|s| l.contains(&t(s)))),
                        "{name}: no line holds {all:?}"
                    ),
                    PtxFact::Lines(all, n) => {
                        let lines = text
                            .lines()
                            .filter(|l| all.iter().all(|s| l.contains(&t(s))))
                            .count() as u32;
                        assert_eq!(lines, n, "{name}: lines holding {all:?}")
                    }
                    PtxFact::Calls(n) => calls = Some(n),
                    _ => panic!("{name}: a fact the test does not know: {fact:?}"),
                }
                checked += 1;
            }
            // The rules of every kernel, in the entries whose C is the accumulator's type.
            if is_second || suffix != elem.suffix() {
                continue;
            }
            if kernel.shared_bytes::<f32>() > 0 {
                assert!(
                    facts.iter().any(|f| matches!(f, PtxFact::Barriers(_))),
                    "{name}: a kernel with shared memory declares its barriers"
                );
                let reads = text.contains("ld.shared")
                    || text.contains("ldmatrix")
                    || text.contains("wgmma.mma_async");
                let writes = text.contains("st.shared") || text.contains("cp.async");
                assert!(writes && reads, "{name}");
                assert!(
                    text.contains("gpu_launch_sized_workgroup_mem"),
                    "{name}: launch-sized shared"
                );
            } else {
                assert_eq!(barriers, 0, "{name}");
                assert!(!text.contains(".shared"), "{name}");
            }
            match spec.tensor_cores {
                true => assert!(
                    text.contains("mma.sync.aligned.m16n8k") || text.contains("wgmma.mma_async"),
                    "{name}: no mma"
                ),
                false => assert!(text.contains("fma.rn.f"), "{name}: no fma"),
            }
            match calls {
                Some(n) => assert_eq!(text.matches("call.uni").count() as u32, n, "{name}"),
                None => assert!(!text.contains(".local") && !text.contains("call"), "{name}"),
            }
        }
    }
    assert!(
        checked >= 700,
        "{checked} facts checked: the specs declare them"
    );
    assert!(
        !module(Arch::Sm70).contains("cp.async"),
        "cp.async in the sm_70 module"
    );
}

#[test]
fn launch_bounds_in_the_ptx_follow_the_specs() {
    let mut bounded = 0;
    for (kernel, name) in all_entries() {
        let text = entry_text(&name);
        let body = &text[..text.find('{').expect("entry body")];
        let elem = match &name[name.rfind('_').unwrap() + 1..] {
            "f64" => rgemm::Elem::F64,
            _ => rgemm::Elem::F32,
        };
        match kernel.spec().min_blocks_per_sm.of(elem) {
            Some(blocks) => {
                let (bx, by) = kernel.block();
                assert!(
                    body.contains(&format!(".maxntid {}, 1, 1", bx * by)),
                    "{name}"
                );
                assert!(body.contains(&format!(".minnctapersm {blocks}")), "{name}");
                bounded += 1;
            }
            None => assert!(!body.contains(".maxntid"), "{name}"),
        }
    }
    // (Each entry was checked above, bounded or not; this says the walk found the bounds.)
    assert!(bounded > 0, "no entry point carries launch bounds");
}

/// An H100 SXM's properties, written by hand (CUDA guide, compute capability 9.0).
fn h100() -> DeviceProps {
    DeviceProps {
        name: "H100 (by hand)".into(),
        compute_capability: (9, 0),
        multiprocessors: 132,
        warp_size: 32,
        max_threads_per_block: 1024,
        max_block_dim: (1024, 1024, 64),
        max_grid_dim: (2_147_483_647, 65535, 65535),
        max_threads_per_multiprocessor: 2048,
        max_blocks_per_multiprocessor: 32,
        shared_bytes_per_block: 49152,
        shared_bytes_per_block_optin: 232_448,
        shared_bytes_per_multiprocessor: 233_472,
        reserved_shared_bytes_per_block: 1024,
        registers_per_block: 65536,
        registers_per_multiprocessor: 65536,
        clock_khz: 1_980_000,
        memory_clock_khz: 2_619_000,
        memory_bus_width_bits: 5120,
    }
}

#[test]
fn occupancy_arithmetic_names_the_limiting_resource() {
    let p = h100();
    let occ = |threads, shared_bytes, registers_per_thread| {
        Occupancy::compute(
            &p,
            BlockResources {
                threads,
                shared_bytes,
                registers_per_thread,
            },
        )
    };
    // 32x32 tiles of f32: 1024 threads, 8 KiB; 32 registers: threads limit at 2 blocks.
    let o = occ(1024, 8192, 32);
    assert_eq!(
        (o.blocks_per_sm, o.limiter, o.threads_per_sm),
        (2, Limiter::Threads, 2048)
    );
    assert_eq!(o.fraction, 1.0);
    assert_eq!(o.shared_bytes_per_thread, 8.0);
    // 64 registers: 2048 per warp, 8 warps per SM partition, 32 warps: 1 block.
    let o = occ(1024, 8192, 64);
    assert_eq!((o.blocks_per_sm, o.limiter), (1, Limiter::Registers));
    assert_eq!(o.fraction, 0.5);
    // 8x8 tiles: 64 threads, the 32-blocks limit binds (2048 threads would allow 32 too).
    let o = occ(64, 512, 30);
    assert_eq!(o.blocks_by_block_limit, 32);
    assert_eq!((o.blocks_per_sm, o.threads_per_sm), (32, 2048));
    // 100 KiB of shared per block: (100 KiB + 1 KiB reserved) fits twice in 228 KiB.
    let o = occ(256, 100 * 1024, 32);
    assert_eq!((o.blocks_per_sm, o.limiter), (2, Limiter::SharedMemory));
    // Threads round up to whole warps: 100 threads hold 4 warps.
    assert_eq!(occ(100, 0, 16).blocks_by_threads, 2048 / 128);
}

#[test]
fn launch_rules_follow_the_shape() {
    let p = h100();
    let cfg = Kernel::Tiled16
        .launch_config::<f32>(&p, 300, 200, 100)
        .unwrap();
    assert_eq!(
        (cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes),
        ((13, 19, 1), (16, 16, 1), 2048)
    );
    let cfg = Kernel::TiledDynamic(12)
        .launch_config::<f64>(&p, 25, 24, 1)
        .unwrap();
    assert_eq!(
        (cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes),
        ((2, 3, 1), (12, 12, 1), 2304)
    );
    let cfg = Kernel::Tiled32.launch_config::<bf16>(&p, 1, 1, 1).unwrap();
    assert_eq!(cfg.shared_mem_bytes, 8192, "f16/bf16 tiles hold f32");
    let cfg = Kernel::Naive.launch_config::<f16>(&p, 17, 33, 5).unwrap();
    assert_eq!(
        (cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes),
        ((2, 3, 1), (32, 8, 1), 0)
    );
    // `thin`: 32 columns of one row per block when m <= n, else 32 whole rows per block.
    for ((m, n), grid) in [
        ((1, 4096), (128, 1, 1)),
        ((3, 100), (4, 3, 1)),
        ((4096, 1), (1, 128, 1)),
        ((300, 200), (1, 10, 1)),
    ] {
        let cfg = Kernel::Thin.launch_config::<f64>(&p, m, n, 7).unwrap();
        assert_eq!(
            (cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes),
            (grid, (1024, 1, 1), 32 * 33 * 8),
            "{m}x{n}"
        );
    }
    // `stream_k`: a block per whole tile, then one wave of sharing blocks (1 per SM for
    // f64, 2 for the others) if any tile is left over, 1D. 4096^2: 1024 tiles.
    for (cfg, grid) in [
        (
            Kernel::StreamK.launch_config::<f32>(&p, 4096, 4096, 4096),
            792 + 264,
        ),
        (Kernel::StreamK.launch_config::<bf16>(&p, 1, 1, 1), 264),
        (
            Kernel::StreamK.launch_config::<f64>(&p, 4096, 4096, 4096),
            924 + 132,
        ),
        (
            Kernel::StreamK.launch_config::<f64>(&p, 4096, 4224, 64),
            1056,
        ),
        (Kernel::StreamK.launch_config::<f32>(&p, 300, 300, 0), 9),
    ] {
        let cfg = cfg.unwrap();
        assert_eq!((cfg.grid_dim, cfg.block_dim), ((grid, 1, 1), (256, 1, 1)));
    }
    // Its fix-up launch: 16 blocks per split tile (4096^2 f64: 1024 tiles, 7 whole waves
    // of 132, 100 split), none when the tiles fill whole waves.
    let sk = |m, n, k| Kernel::StreamK.launches::<f64>(&p, (m, n, k)).unwrap();
    let l = sk(4096, 4096, 4096);
    let fixup = l.fixup.unwrap();
    assert_eq!(
        (
            Kernel::StreamK.fixup_entry::<f64>().unwrap().as_str(),
            fixup.grid_dim,
            fixup.block_dim,
            l.problem.ctas,
            l.workspace
        ),
        (
            "stream_k_fixup_f64",
            (1600, 1, 1),
            (256, 1, 1),
            132,
            2 * 132 * 128 * 128
        )
    );
    assert_eq!(
        Kernel::StreamK.fixup_entry::<bf16>().unwrap(),
        "stream_k_fixup_f32"
    );
    assert!(sk(4096, 4224, 64).fixup.is_none() && sk(4096, 4224, 64).workspace == 0);
    assert!(
        Kernel::StreamK
            .launches::<f32>(&p, (300, 300, 0))
            .unwrap()
            .fixup
            .is_none()
    );
    // Few rows put m in grid.y: beyond its limit the launch is refused, not truncated.
    let r = Kernel::Thin.launch_config::<f32>(&p, 70_000, 80_000, 1);
    assert!(matches!(r, Err(Error::ShapeTooLarge { .. })), "{r:?}");
}

#[test]
fn launch_rules_reject_what_the_device_or_kernels_cannot_do() {
    let p = h100();
    for tile in [0, 33, 64] {
        let r = Kernel::TiledDynamic(tile).launch_config::<f32>(&p, 8, 8, 8);
        assert!(
            matches!(r, Err(Error::UnsupportedTile { tile: t, .. }) if t == tile),
            "{tile}: {r:?}"
        );
    }
    let tall = 65535 * 8 + 1;
    let r = Kernel::Naive.launch_config::<f32>(&p, tall, 1, 1);
    assert!(
        matches!(r, Err(Error::ShapeTooLarge { m, .. }) if m == tall),
        "{r:?}"
    );
    let r = Kernel::Tiled8.launch_config::<f32>(&p, 0, 0, rgemm::MAX_DIM + 1);
    assert!(matches!(r, Err(Error::ShapeTooLarge { .. })), "{r:?}");
    let small = DeviceProps {
        max_threads_per_block: 256,
        ..h100()
    };
    assert!(
        Kernel::Tiled32
            .launch_config::<f32>(&small, 8, 8, 8)
            .is_err()
    );
    assert!(
        Kernel::Tiled16
            .launch_config::<f32>(&small, 8, 8, 8)
            .is_ok()
    );
    // Widths whose `w * w` threads or `2 w^2` shared elements overflow 32 bits: a typed
    // error, no panic and no wrap.
    for tile in [46_341, 65_536, u32::MAX] {
        let kernel = Kernel::TiledDynamic(tile);
        let r = kernel.launch_config::<f64>(&p, 8, 8, 8);
        assert!(
            matches!(r, Err(Error::UnsupportedTile { tile: t, .. }) if t == tile),
            "{tile}: {r:?}"
        );
        assert!(
            kernel.threads() > u32::MAX as u64 / 2
                && kernel.shared_bytes::<f64>() > u32::MAX as u64
        );
    }
    // A kernel built for sm_80 on an sm_75 device.
    let turing = DeviceProps {
        compute_capability: (7, 5),
        ..h100()
    };
    let r = Kernel::StreamK.launch_config::<f32>(&turing, 8, 8, 8);
    assert!(matches!(r, Err(Error::UnsupportedKernel { .. })), "{r:?}");
    assert!(
        Kernel::Tiled16
            .launch_config::<f32>(&turing, 8, 8, 8)
            .is_ok()
    );
}

#[test]
fn host_matrices_check_their_shape() {
    assert!(matches!(
        Matrix::from_vec(2, 3, vec![0.0f32; 5]),
        Err(Error::LengthMismatch {
            rows: 2,
            cols: 3,
            expected: 6,
            len: 5
        })
    ));
    assert!(matches!(
        Matrix::<f32>::zeros(usize::MAX, 2),
        Err(Error::ElementCountOverflow { .. })
    ));
    let m = Matrix::from_vec(2, 2, vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!((m.get(1, 0), m.get(2, 0)), (Some(3.0), None));
    let a = Matrix::<f32>::zeros(3, 4).unwrap();
    let b = Matrix::<f32>::zeros(5, 2).unwrap();
    assert!(matches!(
        rgemm::check_product_shape(&a, &b),
        Err(Error::InnerDimensionMismatch {
            a_rows: 3,
            a_cols: 4,
            b_rows: 5,
            b_cols: 2
        })
    ));
    assert!(matches!(
        rgemm::matmul_reference(&a, &b),
        Err(Error::InnerDimensionMismatch { .. })
    ));
}

#[test]
fn cpu_reference_known_products() {
    let a = Matrix::from_vec(2, 3, vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let b = Matrix::from_vec(3, 2, vec![7.0f32, 8.0, 9.0, 10.0, 11.0, 12.0]).unwrap();
    assert_eq!(
        rgemm::matmul_reference(&a, &b).unwrap().as_slice(),
        &[58.0, 64.0, 139.0, 154.0]
    );
    // Identity, in half precision; the sum is kept in f64 (no rounding at 2^24 + 1).
    let eye = Matrix::from_fn(3, 3, |r, c| f16::from_f32(if r == c { 1.0 } else { 0.0 })).unwrap();
    let x = Matrix::from_fn(3, 2, |r, c| f16::from_f32((r * 2 + c) as f32 - 2.5)).unwrap();
    let want: Vec<f64> = x.as_slice().iter().map(|v| v.to_f64()).collect();
    assert_eq!(rgemm::matmul_reference(&eye, &x).unwrap().as_slice(), want);
    let big = Matrix::from_vec(1, 2, vec![16_777_216.0f32, 1.0]).unwrap();
    let ones = Matrix::from_vec(2, 1, vec![1.0f32, 1.0]).unwrap();
    assert_eq!(
        rgemm::matmul_reference(&big, &ones).unwrap().as_slice(),
        &[16_777_217.0]
    );
    // K = 0: zeros; M = 0: empty.
    let z = rgemm::matmul_reference(
        &Matrix::<f64>::zeros(2, 0).unwrap(),
        &Matrix::zeros(0, 3).unwrap(),
    );
    assert_eq!(z.unwrap().as_slice(), &[0.0; 6]);
    let e = rgemm::matmul_reference(
        &Matrix::<f64>::zeros(0, 4).unwrap(),
        &Matrix::zeros(4, 3).unwrap(),
    );
    assert_eq!(e.unwrap().shape(), (0, 3));
}

#[test]
fn no_driver_or_no_device_is_a_typed_error() {
    match rgemm::device_count() {
        Err(Error::NoDriver(_)) => {
            assert!(matches!(rgemm::Context::new(0), Err(Error::NoDriver(_))));
        }
        Ok(count) => {
            let r = rgemm::Context::new(count);
            assert!(
                matches!(r, Err(Error::NoDevice { ordinal, .. }) if ordinal == count),
                "{r:?}"
            );
        }
        Err(other) => panic!("unexpected: {other}"),
    }
}

/// `stream_k`'s schedule, for many shapes and grids: whole tiles come in whole waves; the
/// shares of the split tiles' phases cover every phase once, in order, none longer than a
/// tile; and each part the main kernel writes to the workspace (the pieces of a share
/// that do not cover a whole tile) lands in the slot the fix-up reads it from, one slot
/// per part.
#[test]
fn stream_k_schedule_covers_every_phase_once() {
    use rgemm_kernels::kernels::simt::stream_k::{BM, BN};
    use rgemm_kernels::parts::schedule::stream_k::{BK, SLOTS_PER_CTA, Schedule};
    let mut checked = 0;
    for ctas in [1u32, 2, 3, 4, 7, 12, 132] {
        for (tm, tn) in [
            (1u32, 1u32),
            (1, 3),
            (2, 2),
            (3, 5),
            (7, 19),
            (12, 11),
            (9, 30),
        ] {
            for phases in [0u32, 1, 2, 3, 5, 16, 33] {
                let (m, n, k) = (tm * BM - 3, tn * BN, phases * BK);
                let s = Schedule::new((m, n, k), ctas, (BM, BN));
                let tiles = tm * tn;
                assert_eq!(s.whole + s.split, tiles);
                assert!(s.split < ctas);
                if phases == 0 {
                    assert_eq!(s.split, 0, "K = 0: every tile whole (zeros)");
                    continue;
                }
                assert_eq!(s.whole % ctas, 0);
                // The pieces each block runs, as the kernel walks its share.
                let mut next = 0;
                let mut parts = std::collections::BTreeMap::new();
                for cta in 0..ctas {
                    let (begin, end) = s.share(cta);
                    assert_eq!(begin, next, "shares are contiguous");
                    assert!(end - begin <= phases, "a share is at most a tile");
                    next = end;
                    let mut i = begin;
                    while i < end {
                        let (t, p0) = (i / phases, i % phases);
                        let p1 = phases.min(p0 + (end - i));
                        assert!(s.holder(i) == cta && s.holder(i + (p1 - p0) - 1) == cta);
                        if p1 - p0 < phases {
                            let slot = s.slot(cta, t);
                            assert!(slot / SLOTS_PER_CTA == cta);
                            assert!(parts.insert(slot, (t, p0, p1)).is_none(), "slot reused");
                        }
                        i += p1 - p0;
                    }
                }
                assert_eq!(next, s.split * phases, "the shares cover the split phases");
                // The fix-up's view: for each shared tile, its holders' parts cover its
                // phases once, in K order.
                for t in 0..s.split {
                    let (first, last) = s.holders(t);
                    let mut k0 = 0;
                    for cta in first..=last {
                        let (begin, end) = s.share(cta);
                        if begin == end {
                            continue;
                        }
                        if first == last {
                            k0 = phases; // one block, the whole tile: it writes C
                            break;
                        }
                        let (pt, p0, p1) = parts[&s.slot(cta, t)];
                        assert_eq!((pt, p0), (t, k0));
                        k0 = p1;
                    }
                    assert_eq!(k0, phases, "tile {t} covered");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn kernels_parse_back_from_their_names() {
    for kernel in Kernel::FIXED.into_iter().chain([Kernel::TiledDynamic(12)]) {
        let back: Kernel = kernel.to_string().parse().unwrap();
        assert_eq!(back, kernel);
    }
    assert!("no_such_kernel".parse::<Kernel>().is_err());
}

#[test]
fn ndarray_views_keep_their_layout_or_say_they_have_none() {
    use rgemm::ndarray::{Array2, s};
    use rgemm::ndarray_interop::dense_layout;
    let a = Array2::<f32>::from_shape_fn((3, 5), |(i, j)| (10 * i + j) as f32);
    let (data, l) = dense_layout(&a.view()).unwrap();
    assert_eq!(
        (l.layout, l.ld, data.len()),
        (rgemm::Layout::RowMajor, 5, 15)
    );
    // The transpose: the same span, column-major, element (r, c) = a[c][r].
    let t = a.t();
    let (data, l) = dense_layout(&t).unwrap();
    assert_eq!((l.rows, l.cols, l.layout), (5, 3, rgemm::Layout::ColMajor));
    for (r, c) in [(0, 0), (4, 2), (3, 1)] {
        assert_eq!(data[l.index(r, c)], t[[r, c]]);
    }
    // A column block of a row-major array is not one span.
    assert!(dense_layout(&a.slice(s![.., 1..4])).is_none());
}

/// The rule's first choice on an H100/H200 for the shapes the benchmark measured (the
/// comments in `heuristic.rs` give the figures): what `matmul` runs without timing.
/// The rule is a table: every row cites a record that exists under `docs/` and names each
/// kernel once, and every kernel it names is one `matmul` may choose by itself (or `naive`,
/// the last resort that takes any launch).
#[test]
fn the_rule_is_a_table_of_recorded_rows() {
    use rgemm::internals::{RULE, Row, Then};
    fn walk(rows: &[Row], seen: &mut Vec<Kernel>, docs: &std::path::Path) {
        for row in rows {
            assert!(!row.when.is_empty());
            assert!(
                docs.join(row.record).is_file(),
                "{}: its record {} is under docs/",
                row.when,
                row.record
            );
            match row.then {
                Then::Kernels(kernels) => {
                    let mut unique = kernels.to_vec();
                    unique.dedup();
                    assert_eq!(unique.len(), kernels.len(), "{}", row.when);
                    seen.extend_from_slice(kernels);
                }
                Then::Table(table) => walk(table, seen, docs),
            }
        }
    }
    let docs = repo_root().join("docs");
    let mut seen = Vec::new();
    walk(RULE, &mut seen, &docs);
    assert!(seen.len() >= 40, "the rule names the catalogue's kernels");
    for kernel in seen {
        let chosen = !matches!(kernel.spec().candidate, rgemm::Candidate::Never);
        assert!(
            chosen || kernel == Kernel::Naive,
            "{kernel:?}: the rule names it, its spec says matmul never chooses it"
        );
    }
}

#[test]
fn the_rule_picks_the_measured_kernels() {
    use rgemm_kernels::problem::Problem;
    let p = h100();
    // A dense strided batch of `batch` products of m x n x k (one product: batch 1).
    let strided = |(m, n, k, batch): (u32, u32, u32, u32)| Problem {
        batch,
        batch_stride_a: (m * k) as u64,
        batch_stride_b: (k * n) as u64,
        batch_stride_c: (m * n) as u64,
        ..Problem::row_major(m, n, k)
    };
    let first = |elem: rgemm::Elem, shape: (u32, u32, u32, u32)| {
        let problem = strided(shape);
        let order = match elem {
            rgemm::Elem::F32 => {
                rgemm::internals::preference::<f32>(&p, &problem, rgemm::Precision::Exact)
            }
            rgemm::Elem::F64 => {
                rgemm::internals::preference::<f64>(&p, &problem, rgemm::Precision::Exact)
            }
            _ => rgemm::internals::preference::<bf16>(&p, &problem, rgemm::Precision::Exact),
        };
        order[0]
    };
    use rgemm::Elem::{Bf16, F32, F64};
    for (elem, shape, want) in [
        (F32, (4096, 4096, 4096), Kernel::PairedLanes),
        (F32, (2000, 2000, 2000), Kernel::PairedLanes),
        (F32, (8192, 8192, 8192), Kernel::StreamK),
        (F32, (1000, 1000, 1000), Kernel::StreamK),
        (F32, (4096, 300, 4096), Kernel::StreamK),
        (F32, (128, 4096, 4096), Kernel::StreamK),
        (F32, (64, 4096, 4096), Kernel::StreamK64),
        (F32, (48, 4096, 4096), Kernel::StreamK64),
        (F32, (96, 4096, 4096), Kernel::StreamK32),
        (F32, (32, 4096, 4096), Kernel::StreamK32),
        (F32, (16, 4096, 4096), Kernel::StreamK32),
        (F32, (3000, 3000, 3000), Kernel::StreamK),
        (F32, (8, 4096, 4096), Kernel::StreamK32),
        (F32, (7, 4096, 4096), Kernel::StreamK32),
        (F32, (6, 4096, 4096), Kernel::Decode),
        (F32, (4, 4096, 4096), Kernel::Decode),
        // f64 with few rows on the FP64 tensor cores, turned over; 1-2 rows as stored stay
        // on the earlier rows.
        (F64, (8, 4096, 4096), Kernel::DmmaFewRows),
        (F64, (3, 4096, 4096), Kernel::DmmaFewRows),
        (F64, (3, 512, 4096), Kernel::StreamK32),
        (F32, (4096, 16, 4096), Kernel::FewColumns),
        (F32, (4096, 8, 4096), Kernel::FewColumns),
        (F32, (4096, 63, 4096), Kernel::FewColumns),
        (F32, (1000, 20, 2000), Kernel::StreamKNarrow),
        (F64, (4096, 32, 4096), Kernel::DmmaFewColumns8Warps),
        (F32, (4096, 64, 4096), Kernel::FewColumns),
        // 64-column strips where they and their slices of K fill the SMs.
        (F32, (8192, 64, 8192), Kernel::FewColumns64),
        (F32, (16384, 64, 4096), Kernel::FewColumns64),
        (F32, (8192, 40, 8192), Kernel::FewColumns64),
        (F32, (4096, 1, 4096), Kernel::Thin),
        (Bf16, (4096, 1, 4096), Kernel::Thin),
        (Bf16, (4096, 16, 4096), Kernel::Wgmma128x64),
        (Bf16, (8192, 64, 8192), Kernel::Wgmma128x64),
        (F32, (77, 4096, 4096), Kernel::StreamK),
        (F64, (64, 4096, 4096), Kernel::DmmaSmallSplit),
        (F64, (64, 8192, 4096), Kernel::DmmaSmallSplit),
        (F64, (48, 4096, 4096), Kernel::DmmaFewRows64),
        (F64, (33, 4096, 4096), Kernel::DmmaFewRows64),
        (F64, (49, 4096, 4096), Kernel::DmmaSmallSplit),
        (F64, (32, 4096, 4096), Kernel::DmmaFewRows),
        (F64, (32, 8192, 128), Kernel::StreamK32),
        (F64, (4096, 4096, 4096), Kernel::DmmaK4),
        (F64, (8192, 8192, 8192), Kernel::DmmaK4),
        // f64 sides no tile divides: by how full `dmma_k4`'s waves of 128 x 64 tiles are
        // (3000^3 85%, 2000^3 97%; 2500^3 76%, 1500^3 55%, 1200^3 72%).
        (F64, (3000, 3000, 3000), Kernel::DmmaK4),
        (F64, (2000, 2000, 2000), Kernel::DmmaK4),
        (F64, (200, 8192, 4096), Kernel::DmmaK4),
        (F64, (2500, 2500, 2500), Kernel::DmmaSmallBuffered),
        (F64, (1500, 1500, 1500), Kernel::DmmaSmallBuffered),
        (F64, (1200, 1200, 1200), Kernel::DmmaSmallBuffered),
        (F64, (1000, 1000, 1000), Kernel::DmmaSmallBuffered),
        (F64, (1024, 1024, 1024), Kernel::DmmaSmallBuffered),
        (F64, (100, 65536, 4096), Kernel::DmmaSmallBuffered),
        (Bf16, (64, 4096, 4096), Kernel::Wgmma128x128),
        (Bf16, (17, 8192, 4096), Kernel::WgmmaSplit128x128),
        (Bf16, (32, 4096, 4096), Kernel::WgmmaSplit128x128),
        (Bf16, (32, 14336, 4096), Kernel::WgmmaSplit128x128),
        (Bf16, (24, 10240, 4096), Kernel::WgmmaSplit128x128),
        (Bf16, (24, 28672, 4096), Kernel::DecodeTma),
        (Bf16, (17, 8192, 256), Kernel::DecodeTma),
        (Bf16, (33, 4096, 4096), Kernel::Wgmma128x128),
        (Bf16, (1024, 1024, 1024), Kernel::Wgmma128x64),
        (Bf16, (2048, 2048, 2048), Kernel::WgmmaTma),
        (Bf16, (4096, 4096, 4096), Kernel::WgmmaPersistent),
        (Bf16, (1024, 4096, 4096), Kernel::WgmmaTma),
        (Bf16, (1024, 2048, 4096), Kernel::Wgmma128x128),
        // A wave of 128 x 192 tiles where 128 x 256 ones leave a third of the SMs idle, and
        // three waves of them where 128 x 256 ones take three and 128 x 128 ones five.
        (Bf16, (512, 6144, 4096), Kernel::Wgmma128x192),
        (Bf16, (1536, 4096, 4096), Kernel::Wgmma128x192),
        (Bf16, (3072, 3072, 3072), Kernel::Wgmma128x192),
        (Bf16, (2048, 4608, 4096), Kernel::Wgmma128x192),
        (Bf16, (8192, 8192, 8192), Kernel::WgmmaPersistent),
        (Bf16, (16, 8192, 8192), Kernel::DecodeTma),
        (Bf16, (16, 4096, 4096), Kernel::DecodeTma),
        (Bf16, (128, 4096, 4096), Kernel::WgmmaSplit128x64),
        (Bf16, (128, 8192, 4096), Kernel::Wgmma128x64),
        (Bf16, (16, 28672, 8192), Kernel::DecodeTma),
        (Bf16, (8, 8192, 8192), Kernel::DecodeTma),
        (Bf16, (4, 4096, 4096), Kernel::DecodeTma),
        (Bf16, (1, 8192, 8192), Kernel::DecodeTma),
        (Bf16, (2, 4096, 4096), Kernel::DecodeTma),
        // Rows of B that TMA cannot read (N not a multiple of 8): the cp.async kernels.
        (Bf16, (8, 4100, 4096), Kernel::DecodeMma),
        (Bf16, (1, 4100, 4096), Kernel::DecodeAsync),
        // f64 whose 64 x 64 tiles are too few for three blocks per SM, both sides past 48:
        // K split over each tile's blocks; where the tiles fill the SMs, or a side is 1-48,
        // the kernels before.
        (F64, (8192, 64, 8192), Kernel::DmmaSmallSplit),
        (F64, (4096, 64, 4096), Kernel::DmmaSmallSplit),
        (F64, (64, 4096, 4096), Kernel::DmmaSmallSplit),
        (F64, (512, 512, 16384), Kernel::DmmaSmallSplit),
        (F64, (256, 256, 65536), Kernel::DmmaSmallSplit),
        (F64, (100, 8192, 4096), Kernel::DmmaSmallBuffered),
        (F64, (1024, 1024, 8192), Kernel::DmmaSmallBuffered),
        (F64, (16384, 64, 16384), Kernel::DmmaSmallBuffered),
        (F64, (4096, 64, 512), Kernel::StreamKNarrow),
        // f64 with 9-48 columns on the FP64 tensor cores: eight warps a block where the row
        // strips are few (32 here), four elsewhere, K from 1024; 3-8 columns stay on
        // `few_columns`.
        (F64, (8192, 48, 8192), Kernel::DmmaFewColumns),
        (F64, (4096, 8, 4096), Kernel::FewColumns),
        (F64, (8192, 16, 8192), Kernel::DmmaFewColumns),
        (F64, (16384, 32, 4096), Kernel::DmmaFewColumns),
        (F64, (8192, 32, 8192), Kernel::DmmaFewColumns),
        (F64, (4096, 24, 4096), Kernel::DmmaFewColumns8Warps),
        (F64, (1024, 16, 1024), Kernel::DmmaFewColumns8Warps),
        (F32, (2048, 16, 2048), Kernel::FewColumns),
        // Rows of A or B TMA cannot read (K or N not a multiple of 8), from 17 rows: packed,
        // the last wave split over K where it is at most half full (17 tiles of 64 x 4100).
        (Bf16, (4096, 4096, 4099), Kernel::WgmmaPacked),
        (Bf16, (4096, 1001, 4096), Kernel::WgmmaPacked),
        (Bf16, (1500, 1500, 1500), Kernel::WgmmaPacked),
        (Bf16, (64, 4100, 4096), Kernel::WgmmaPackedSplit),
        // Rows TMA reads, not whole 32-byte sectors apart, more than a wave of tiles: clusters
        // of two where the last wave holds over a quarter of the SMs' tiles (3000^3: 120 of
        // 132 on 128 x 192 tiles), the packed kernels elsewhere (33 tiles at 4104^3: split).
        (Bf16, (3000, 3000, 3000), Kernel::WgmmaPairs128x192),
        (Bf16, (3000, 3072, 3000), Kernel::WgmmaPairs128x192),
        // Clusters of four where their squares take no more rounds than pairs (2504^3: 2
        // each, 3000 x 6000 x 3000: 5, 5000^3: 7; 4104^3: 6 against 5).
        (Bf16, (2504, 2504, 2504), Kernel::WgmmaQuads),
        (Bf16, (3000, 6000, 3000), Kernel::WgmmaQuads),
        (Bf16, (5000, 5000, 5000), Kernel::WgmmaQuads),
        (Bf16, (4104, 4104, 4104), Kernel::WgmmaPackedSplit),
        (Bf16, (4000, 4000, 4000), Kernel::WgmmaPersistent),
        (Bf16, (1000, 1000, 1000), Kernel::Wgmma128x64),
    ]
    .map(|(elem, (m, n, k), want)| (elem, (m, n, k, 1), want))
    .into_iter()
    .chain([
        (Bf16, (128, 128, 128, 512), Kernel::Wgmma128x64),
        (F32, (128, 128, 128, 512), Kernel::WarpTiledK16),
        (F32, (64, 64, 64, 512), Kernel::WarpTiled64),
        (F32, (64, 48, 64, 100), Kernel::WarpTiled64),
        (Bf16, (256, 256, 256, 128), Kernel::WgmmaPersistent),
        (Bf16, (512, 512, 512, 64), Kernel::WgmmaPersistent),
        (Bf16, (1024, 1024, 1024, 16), Kernel::WgmmaPersistent),
        // f64, whole 128 x 64 tiles from one per SM (256 here): `dmma_k4`.
        (F64, (8192, 256, 8192, 1), Kernel::DmmaK4),
        (F64, (2048, 2048, 2048, 1), Kernel::DmmaK4),
        // f64 with K of at most 512: 64 x 64 tiles, however many.
        (F64, (256, 256, 256, 128), Kernel::DmmaSmallBuffered),
        (F64, (128, 128, 128, 256), Kernel::DmmaSmallBuffered),
        (F64, (4096, 4096, 128, 1), Kernel::DmmaSmallBuffered),
        (F64, (2048, 2048, 512, 1), Kernel::DmmaSmallBuffered),
    ]) {
        assert_eq!(first(elem, shape), want, "{elem:?} {shape:?}");
    }
    // TF32 batches: 128^3 products on `mma_tf32`'s 128 x 128 tiles; 64^3 and 256^3 on
    // `wgmma_tf32`.
    for ((m, batch), want) in [
        ((128, 256), Kernel::MmaTf32),
        ((64, 512), Kernel::WgmmaTf32),
        ((256, 128), Kernel::WgmmaTf32),
    ] {
        let problem = strided((m, m, m, batch));
        let tf32 = rgemm::Precision::Tf32;
        let order = rgemm::internals::preference::<f32>(&p, &problem, tf32);
        assert_eq!(order[0], want, "tf32 {batch} x {m}^3");
    }
    // One TF32 product: its last wave split over K where it is at most half full (32 and 64
    // tiles of 128 x 256 here), `wgmma_tf32` where it is fuller (4096^3: 116 of 132).
    for ((m, n, k), want) in [
        ((4096, 256, 16384), Kernel::WgmmaTf32Split),
        ((8192, 128, 8192), Kernel::WgmmaTf32Split),
        ((4096, 4096, 4096), Kernel::WgmmaTf32),
    ] {
        let problem = Problem::row_major(m, n, k);
        let tf32 = rgemm::Precision::Tf32;
        let order = rgemm::internals::preference::<f32>(&p, &problem, tf32);
        assert_eq!(order[0], want, "tf32 {m} x {n} x {k}");
    }
    // Few rows with B transposed (N x K as stored): `few_rows` for f32, `dmma_few_rows` for
    // f64 up to 32 rows, `dmma_few_rows_64` for 33-48, the DMMA kernels for more f64 rows
    // or columns (64 rows: K split over the blocks of 64 x 64 tiles).
    let transposed_b = |m: u32| Problem {
        layout: rgemm_kernels::problem::TRANSPOSED_B,
        ldb: 4096,
        ..Problem::row_major(m, 8192, 4096)
    };
    let exact = rgemm::Precision::Exact;
    for (m, want_f64) in [
        (1, Kernel::DmmaFewRows),
        (17, Kernel::DmmaFewRows),
        (40, Kernel::DmmaFewRows64),
        (64, Kernel::DmmaSmallSplit),
        (256, Kernel::DmmaK4),
    ] {
        let order = rgemm::internals::preference::<f32>(&p, &transposed_b(m), exact);
        assert_eq!(
            order[0],
            Kernel::FewRows,
            "f32 {m} x 8192 x 4096, B transposed"
        );
        // `matmul` keeps only the kernels that are candidates for the shape.
        assert!(
            Kernel::FewRows.is_candidate(m as usize, 8192),
            "few_rows at {m} rows"
        );
        let order = rgemm::internals::preference::<f64>(&p, &transposed_b(m), exact);
        assert_eq!(order[0], want_f64, "f64 {m}, B transposed");
    }
    // 64-row strips for 33-64 rows where they are at least three quarters of the SMs (x
    // 14336); 64 x 8192 (64 strips) and more rows keep `few_rows`.
    for ((m, n), want) in [
        ((64, 14336), Kernel::FewRows64),
        ((33, 14336), Kernel::FewRows64),
        ((64, 8192), Kernel::FewRows),
        ((128, 14336), Kernel::FewRows),
    ] {
        let problem = Problem {
            layout: rgemm_kernels::problem::TRANSPOSED_B,
            ldb: 4096,
            ..Problem::row_major(m, n, 4096)
        };
        let order = rgemm::internals::preference::<f32>(&p, &problem, exact);
        assert_eq!(order[0], want, "f32 {m} x {n} x 4096, B transposed");
    }
    // `dmma_few_rows` is a candidate for few rows, not for few columns.
    assert!(Kernel::DmmaFewRows.is_candidate(64, 8192));
    assert!(!Kernel::DmmaFewRows.is_candidate(8192, 17));
    let wide = Problem {
        layout: rgemm_kernels::problem::TRANSPOSED_B,
        ldb: 4096,
        ..Problem::row_major(17, 14336, 4096)
    };
    let order = rgemm::internals::preference::<f64>(&p, &wide, exact);
    assert_eq!(
        order[0],
        Kernel::DmmaFewRows,
        "f64 17 x 14336, B transposed"
    );
    // As stored, few rows of f32 keep stream-K's short tiles.
    let order = rgemm::internals::preference::<f32>(&p, &Problem::row_major(17, 8192, 4096), exact);
    assert_eq!(order[0], Kernel::StreamK32, "f32 17 x 8192 x 4096");
    // Decode with the weight as PyTorch stores it (B transposed, N x K): `decode_tma` leads,
    // and it and `decode_wgmma` take the form where TMA reads B's rows (K a multiple of 8
    // elements), not where it cannot, nor with B's rows padded.
    for ((m, n, k), kernel) in [
        ((1, 4096, 4096), Kernel::DecodeTma),
        ((4, 14336, 4096), Kernel::DecodeWgmma),
        ((16, 4096, 14336), Kernel::DecodeWgmma),
        ((16, 4096, 14336), Kernel::DecodeTma),
    ] {
        let b_t = |ldb: usize, k: usize| {
            let views = (
                rgemm::MatrixLayout::row_major(m, k),
                rgemm::MatrixLayout::row_major(n, k).with_ld(ldb).t(),
                rgemm::MatrixLayout::row_major(m, n),
            );
            let lens = (m * k, n * ldb, m * n);
            rgemm::internals::Normalized::new(views, lens, rgemm::Batch::ONE, (1.0, 0.0))
                .expect("valid views")
        };
        let norm = b_t(k, k);
        let order = rgemm::internals::preference_for::<bf16>(&p, &norm.problem, exact, true);
        assert_eq!(order[0], Kernel::DecodeTma, "{m}x{n}x{k}, B transposed");
        assert!(kernel.spec().b_transposed);
        let check = |norm: &rgemm::internals::Normalized| norm.check_kernel(kernel, (2, 2));
        assert!(check(&norm).is_ok(), "{m}x{n}x{k}");
        for off in [b_t(k + 8, k), b_t(k + 3, k + 3)] {
            assert!(matches!(
                check(&off),
                Err(rgemm::Error::UnsupportedForm { .. })
            ));
        }
        // Kernels that read only the plain form refuse it.
        assert!(norm.check_kernel(Kernel::DecodeMma, (2, 2)).is_err());
        // It runs as itself where TMA reads the operands.
        assert_eq!(norm.runs_as(kernel, (2, 2)).ok(), Some(kernel));
    }
    // The plain product with rows TMA cannot read (K or N not a multiple of 8) runs as
    // `decode_mma`, which has no TMA; a product TMA reads runs as the kernel asked for.
    for ((m, n, k), tma, want) in [
        ((16, 4096, 4099), Kernel::DecodeTma, Kernel::DecodeMma),
        ((4, 4097, 4096), Kernel::DecodeWgmma, Kernel::DecodeMma),
        ((16, 4096, 4096), Kernel::DecodeTma, Kernel::DecodeTma),
        ((16, 4096, 4096), Kernel::DecodeWgmma, Kernel::DecodeWgmma),
    ] {
        let views = (
            rgemm::MatrixLayout::row_major(m, k),
            rgemm::MatrixLayout::row_major(k, n),
            rgemm::MatrixLayout::row_major(m, n),
        );
        let lens = (m * k, k * n, m * n);
        let norm = rgemm::internals::Normalized::new(views, lens, rgemm::Batch::ONE, (1.0, 0.0))
            .expect("valid views");
        assert!(norm.check_kernel(tma, (2, 4)).is_ok());
        assert_eq!(norm.runs_as(tma, (2, 4)).ok(), Some(want), "{m}x{n}x{k}");
        assert_eq!(
            norm.runs_as(Kernel::DecodeMma, (2, 4)).ok(),
            Some(Kernel::DecodeMma)
        );
        // Off Hopper the TMA kernels are refused whether or not they would run as
        // `decode_mma`.
        let a100 = DeviceProps {
            compute_capability: (8, 0),
            ..h100()
        };
        let ran = tma.running::<bf16>(&a100, norm.problem, (0, 0));
        assert!(
            matches!(ran, Err(rgemm::Error::UnsupportedKernel { .. })),
            "{m}x{n}x{k}"
        );
        let ran = tma.running::<bf16>(&p, norm.problem, (0, 0));
        assert_eq!(
            ran.ok().map(|(kernel, _)| kernel),
            Some(want),
            "{m}x{n}x{k}"
        );
    }
    // With C in the 16-bit type, 1 and 2 rows go to `decode_tma` too.
    for (m, n, k) in [(1, 8192, 8192), (2, 4096, 4096)] {
        let problem = Problem::row_major(m, n, k);
        let exact = rgemm::Precision::Exact;
        let order = rgemm::internals::preference_for::<bf16>(&p, &problem, exact, true);
        assert_eq!(order[0], Kernel::DecodeTma, "bf16 -> bf16 {m}x{n}x{k}");
    }
}

/// On a GPU without `wgmma` (an A100's properties) 16-bit products go to the swizzled
/// `mma.sync` rung, which fits its 163 KiB of shared memory per block; under half a wave
/// of its tiles, to `mma_deep128`.
#[test]
fn without_wgmma_the_rule_picks_the_swizzled_mma_rung() {
    use rgemm_kernels::problem::Problem;
    let a100 = DeviceProps {
        name: "A100 (by hand)".into(),
        compute_capability: (8, 0),
        multiprocessors: 108,
        shared_bytes_per_block_optin: 166_912,
        shared_bytes_per_multiprocessor: 167_936,
        clock_khz: 1_410_000,
        ..h100()
    };
    for ((m, n, k), want) in [
        ((4096, 4096, 4096), Kernel::MmaSwizzled),
        ((2048, 2048, 2048), Kernel::MmaSwizzled),
        ((1000, 4096, 1000), Kernel::MmaSwizzled),
        ((1024, 1024, 1024), Kernel::MmaDeep128),
        ((333, 4096, 1000), Kernel::MmaDeep128),
    ] {
        let problem = Problem::row_major(m, n, k);
        let order = rgemm::internals::preference::<bf16>(&a100, &problem, rgemm::Precision::Exact);
        assert_eq!(order[0], want, "{m}x{n}x{k}");
        assert!(
            want.launches_for::<bf16>(&a100, problem).is_ok(),
            "{m}x{n}x{k}"
        );
    }
}

/// `wgmma_tf32` reads a row-major A in place (its consumers round it to TF32 in shared
/// memory) exactly where TMA can read it as it lies; it packs A otherwise, and 3xTF32's
/// two-part pack always packs it. The pack grid then has only B^T's rows of blocks, and the
/// main launch reads the caller's A with its own leading dimension.
#[test]
fn tf32_reads_a_row_major_aligned_a_in_place_and_packs_the_rest() {
    use rgemm_kernels::parts::wgmma::pack::Packing;
    use rgemm_kernels::problem::{Problem, TRANSPOSED_A};
    let base = 0x7f00_0000_0000u64;
    let dense = Problem::row_major(300, 200, 100);
    let padded = Problem { lda: 104, ..dense };
    let odd = Problem { lda: 102, ..dense };
    let transposed = Problem {
        layout: TRANSPOSED_A,
        lda: 300,
        ..dense
    };
    let batched = |stride: u64| Problem {
        batch: 3,
        batch_stride_a: stride,
        ..dense
    };
    // (problem, A's address, parts, bytes of an element, A read in place)
    for (p, a, parts, width, want) in [
        (dense, base, 1, 4, true),
        (padded, base, 1, 4, true),
        (dense, base + 4, 1, 4, false),
        (odd, base, 1, 4, false),
        (transposed, base, 1, 4, false),
        (batched(300 * 100), base, 1, 4, true),
        (batched(0), base, 1, 4, true),
        (batched(300 * 100 + 2), base, 1, 4, false),
        (dense, base, 2, 4, false),
        // 16-bit elements: rows of 100 are 200 bytes, of 104 208 (13 units of 16).
        (dense, base, 1, 2, false),
        (padded, base, 1, 2, true),
        (padded, base + 2, 1, 2, false),
        (batched(300 * 104), base, 1, 2, false),
    ] {
        let packing = Packing::of(&p, parts, width);
        assert_eq!(packing.row, p.k.div_ceil(128 / width) * (128 / width));
        let in_place = packing.a_in_place(&p, a);
        assert_eq!(
            in_place, want,
            "{p:?} at {a:#x}, {parts} parts of {width} bytes"
        );
        let main = packing.problem(&p, in_place);
        let (_, y, _) = packing.grid(&p, in_place);
        let b_rows = p.n.div_ceil(64);
        if in_place {
            assert_eq!(
                (main.lda, main.batch_stride_a, y),
                (p.lda, p.batch_stride_a, b_rows)
            );
        } else {
            assert_eq!((main.lda, y), (packing.row, b_rows + p.m.div_ceil(64)));
        }
    }
}

/// The `Context` docs promise threads may share one, and the executor likewise.
#[test]
fn contexts_and_executors_are_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<rgemm::Context>();
    shared::<rgemm::CpuExecutor>();
    shared::<rgemm::DeviceMatrix<f32>>();
}

/// `wgmma_packed_split`'s workspace: the tensor maps, the split's counters (the zeroed range)
/// and planes, then the packed operands from the first 256-byte line after them, where the
/// pack launch's workspace starts; `wgmma_packed` packs at the start. Neither may overlap
/// the other's bytes, and the workspace holds both.
#[test]
fn the_packed_split_puts_its_planes_before_the_packed_operands() {
    use rgemm::internals::Problem;
    use rgemm_kernels::parts::schedule::split_tail::{WARPS, counters, plane};
    let props = h100();
    let f32_bytes = std::mem::size_of::<f32>();
    // (M, N, K) and the tiles of 128 x 256 in the last wave, all of them split.
    for ((m, n, k), tails) in [
        ((3000, 3000, 3000), 24u32),
        ((64, 4100, 4096), 17),
        ((2048, 3000, 4099), 60),
    ] {
        let problem = Problem::row_major(m, n, k);
        let split = Kernel::WgmmaPackedSplit
            .launches_for::<bf16>(&props, problem)
            .unwrap();
        let packed = Kernel::WgmmaPacked
            .launches_for::<bf16>(&props, problem)
            .unwrap();
        let (sp, pp) = (split.pack.unwrap(), packed.pack.unwrap());
        let splits = split.problem.ctas;
        assert!(splits > 1, "{m}x{n}x{k}: the last wave is not split");
        assert_eq!(pp.at, 0, "{m}x{n}x{k}: wgmma_packed packs at the start");
        assert_eq!(
            sp.packing, pp.packing,
            "{m}x{n}x{k}: the same packed operands"
        );
        // The maps, the counters, then a plane per tail tile, slice and warp.
        let maps = rgemm_kernels::catalogue::TensorMaps::BYTES / f32_bytes;
        assert_eq!(
            (split.zeroed_from, split.zeroed),
            (maps, counters(tails)),
            "{m}x{n}x{k}: the counters after the maps"
        );
        let planes = (tails * splits * WARPS) as usize * plane(256);
        let split_end = (maps + counters(tails) + planes) * f32_bytes;
        assert!(
            sp.at >= split_end && sp.at.is_multiple_of(256) && sp.at < split_end + 256,
            "{m}x{n}x{k}: packed operands at byte {}, the split ends at {split_end}",
            sp.at
        );
        assert!(
            split.workspace * f32_bytes >= sp.at + sp.packing.bytes,
            "{m}x{n}x{k}: the workspace holds the packed operands"
        );
    }
}
