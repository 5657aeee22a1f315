//! What the stage tests share: running `cargo oxide pipeline` on a fixture crate and reading
//! its outputs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The manifest of the fixture crate `tests/fixtures/<fixture>`.
pub fn manifest(fixture: &str) -> PathBuf {
    repo().join(format!("tests/fixtures/{fixture}/Cargo.toml"))
}

/// Runs `cargo oxide pipeline <args> --manifest-path <fixture's> --out <out>` (without
/// `CUDA_OXIDE_TARGET`, so the build's default architecture or `args`' applies), with `out`
/// under `tests/fixtures/target/` emptied first, and returns that folder.
pub fn pipeline_stages(fixture: &str, out: &str, args: &[&str]) -> PathBuf {
    let out = repo().join("tests/fixtures/target").join(out);
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .arg("pipeline")
        .args(args)
        .arg("--manifest-path")
        .arg(manifest(fixture))
        .arg("--out")
        .arg(&out)
        .env_remove("CUDA_OXIDE_TARGET")
        .status()
        .expect("cargo-oxide runs");
    assert!(
        status.success(),
        "cargo oxide pipeline failed for {fixture}"
    );
    out
}

/// The text of `path`, or a panic naming it.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines of `text` from the one containing `start` up to the next blank line.
pub fn paragraph<'a>(text: &'a str, start: &str) -> &'a str {
    let begin = text
        .find(start)
        .unwrap_or_else(|| panic!("`{start}` missing:\n{text}"));
    let rest = &text[begin..];
    &rest[..rest.find("\n\n").unwrap_or(rest.len())]
}
