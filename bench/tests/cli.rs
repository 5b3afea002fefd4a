//! The benchmark's command line, checked without a GPU: bad arguments are refused before
//! any device is opened.
use std::process::Command;

fn bench(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rgemm-bench"))
        .args(args)
        .output()
        .expect("the benchmark binary runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn unknown_kernel_is_refused_with_the_known_names() {
    let (code, err) = bench(&["--kernels", "stream_k,no_such_kernel"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no kernel named \"no_such_kernel\""), "{err}");
    assert!(err.contains("stream_k") && err.contains("naive"), "{err}");
}

#[test]
fn malformed_shape_is_refused() {
    let (code, err) = bench(&["--shapes", "4096x4096"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("shapes are MxNxK or S"), "{err}");
}
