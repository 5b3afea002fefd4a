//! `rgemm-suite`'s table, checked without a GPU: `--list` prints the rows (and fails if a
//! row's views leave their buffers or it needs too much memory), and the filters take only
//! the names they know.
use std::process::{Command, Output};

fn suite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rgemm-suite"))
        .args(args)
        .output()
        .expect("rgemm-suite runs")
}

/// The cells of the rows of `--list`'s table (not its header or alignment row).
fn listed(args: &[&str]) -> Vec<Vec<String>> {
    let out = suite(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {:?}\n{stderr}", out.status);
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    stdout
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| group |"))
        .map(|line| {
            let cells = line.trim_matches('|').split('|');
            cells.map(|cell| cell.trim().to_string()).collect()
        })
        .collect()
}

#[test]
fn list_holds_every_type_and_enough_rows() {
    let rows = listed(&["--list"]);
    assert!(rows.len() >= 150, "only {} rows", rows.len());
    for row in &rows {
        assert_eq!(row.len(), 9, "{row:?}");
    }
    for label in ["f32", "tf32", "f64", "bf16", "f16", "bf16c", "f16c"] {
        assert!(
            rows.iter().any(|row| row[2] == label),
            "no row of type {label}"
        );
    }
}

#[test]
fn filters_select_rows() {
    // Decode: 16 shapes, each in bf16, f16 and bf16c.
    assert_eq!(listed(&["--list", "--groups", "decode"]).len(), 48);
    let rows = listed(&["--list", "--groups", "decode,edge", "--types", "bf16"]);
    assert_eq!(rows.len(), 16 + 5);
    assert!(rows.iter().all(|row| row[2] == "bf16"));
}

#[test]
fn unknown_names_are_usage_errors() {
    for args in [
        &["--list", "--types", "nosuch"][..],
        &["--types", "nosuch"],
        &["--list", "--groups", "nosuch"],
        &["--list", "--reps", "0"],
    ] {
        assert_eq!(suite(args).status.code(), Some(2), "{args:?}");
    }
    // Types and groups that share no row.
    let out = suite(&["--list", "--types", "f16c", "--groups", "decode"]);
    assert_eq!(out.status.code(), Some(2));
}
