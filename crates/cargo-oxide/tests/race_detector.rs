//! The race detector finds the planted bugs of `tests/fixtures/races`, each with the source
//! lines involved, and reports nothing on its correct kernel: `cargo oxide run --race` on the
//! CPU device (no GPU needed).

use std::process::Command;

mod common;

use common::{manifest, read, repo};

/// The reports that follow `== <kernel>` in the run's standard error, until the next kernel.
fn reports_of<'a>(stderr: &'a str, kernel: &str) -> Vec<&'a str> {
    let start = format!("== {kernel}");
    stderr
        .lines()
        .skip_while(|l| *l != start)
        .skip(1)
        .take_while(|l| !l.starts_with("== "))
        .filter(|l| l.starts_with("cuda-oxide race detector: "))
        .collect()
}

/// `file:line` of the fixture's line holding `marker`.
fn line_of(source: &str, marker: &str) -> String {
    let line = source
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no `{marker}` in the fixture"));
    format!("src/main.rs:{}:", line + 1)
}

#[test]
fn planted_races_are_reported_with_both_lines_and_the_clean_kernel_with_none() {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["run", "--race", "--manifest-path"])
        .arg(manifest("races"))
        .env_remove("CUDA_OXIDE_TARGET")
        .output()
        .expect("cargo-oxide runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the fixture failed:\n{stderr}");
    assert!(stderr.contains("== done"), "{stderr}");
    let source = read(&repo().join("tests/fixtures/races/src/main.rs"));
    let has = |kernel: &str, needles: &[&str]| {
        let reports = reports_of(&stderr, kernel);
        assert!(
            reports
                .iter()
                .any(|r| needles.iter().all(|n| r.contains(&line_of(&source, n)))),
            "{kernel}: no report naming {needles:?}; its reports: {reports:#?}"
        );
    };
    has(
        "tile_read_before_barrier",
        &["// race: write", "// race: read"],
    );
    has("blocks_write_one_element", &["// race: both blocks"]);
    has(
        "reduction_missing_barrier",
        &["// race: read of SUM[1]", "// race: the write"],
    );
    has("barrier_in_half_the_block", &["// barrier: half the block"]);
    has("shuffle_mask_names_exited_lane", &["// shuffle: full mask"]);
    has(
        "mbarrier_read_before_wait",
        &["// race: producer write", "// race: read before the wait"],
    );
    let clean = reports_of(&stderr, "clean");
    assert!(clean.is_empty(), "reports on the clean kernel: {clean:#?}");
}
