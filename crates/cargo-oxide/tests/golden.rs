//! Golden files: what each stage makes of the kernels in `tests/fixtures/golden_kernels`
//! (dialect-mir before and after mem2reg, LLVM IR, PTX). A change to any stage shows up here
//! as a snapshot diff to review (`cargo insta review`).

use std::path::Path;
use std::process::Command;

use regex::Regex;

/// The stage outputs of the fixture crate `fixture`, generated once for all tests of this file.
fn stages(fixture: &'static str) -> std::path::PathBuf {
    static DIRS: std::sync::Mutex<Vec<(&str, std::path::PathBuf)>> = std::sync::Mutex::new(vec![]);
    let mut dirs = DIRS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, dir)) = dirs.iter().find(|(name, _)| *name == fixture) {
        return dir.clone();
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = repo.join(format!("tests/fixtures/target/golden-stages/{fixture}"));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["pipeline", "--manifest-path"])
        .arg(repo.join(format!("tests/fixtures/{fixture}/Cargo.toml")))
        .arg("--out")
        .arg(&out)
        .env_remove("CUDA_OXIDE_TARGET")
        .status()
        .expect("cargo-oxide runs");
    assert!(
        status.success(),
        "cargo oxide pipeline failed for {fixture}"
    );
    dirs.push((fixture, out.clone()));
    out
}

/// The text of one stage of `golden_kernels`.
fn stage(extension: &str) -> String {
    fixture_stage("golden_kernels", extension)
}

/// The text of one stage of `fixture`, with what depends on the machine replaced: mangled
/// symbols (their crate hashes depend on where the sources are) become `_R<n>` in order of
/// appearance.
fn fixture_stage(fixture: &'static str, extension: &str) -> String {
    let path = stages(fixture).join(format!("{fixture}.{extension}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let symbol = Regex::new(r"_R[0-9A-Za-z_]+").unwrap();
    let mut seen: Vec<String> = Vec::new();
    symbol
        .replace_all(&text, |caps: &regex::Captures| {
            let found = caps[0].to_string();
            let index = match seen.iter().position(|s| *s == found) {
                Some(i) => i,
                None => {
                    seen.push(found);
                    seen.len() - 1
                }
            };
            format!("_R{index}")
        })
        .into_owned()
}

#[test]
fn dialect_mir_as_translated() {
    insta::assert_snapshot!("golden_kernels.mir", stage("mir"));
}

#[test]
fn dialect_mir_after_mem2reg() {
    let text = stage("mem2reg.mir");
    // The loop's accumulator and counter cross the back edge as block arguments.
    assert!(text.contains("mir.func @triangle"), "{text}");
    insta::assert_snapshot!("golden_kernels.mem2reg.mir", text);
}

#[test]
fn llvm_ir() {
    let text = stage("ll");
    assert!(text.contains("define ptx_kernel void @vecadd("), "{text}");
    assert!(
        text.contains(" phi "),
        "loops and joins need phi nodes:\n{text}"
    );
    insta::assert_snapshot!("golden_kernels.ll", text);
}

#[test]
fn ptx() {
    let text = stage("ptx");
    for kernel in ["vecadd", "triangle", "apply", "with_params"] {
        assert!(
            text.contains(&format!(".visible .entry {kernel}(")),
            "{kernel} missing:\n{text}"
        );
    }
    insta::assert_snapshot!("golden_kernels.ptx", text);
}

/// `core`'s building blocks (`golden_core`): an `Ordering` from `mir.cmp`, unions, raw copies,
/// volatile reads, slice patterns with a rest and `mir.select`, at every stage.
#[test]
fn core_building_blocks_at_every_stage() {
    let mir = fixture_stage("golden_core", "mir");
    for expected in [
        "mir.cmp",
        "mir.union <\"golden_core::Bits\"",
        "mir.copy_nonoverlapping",
        "mir.volatile_load",
        "mir.select",
        "mir.make_slice",
    ] {
        assert!(mir.contains(expected), "{expected} missing:\n{mir}");
    }
    insta::assert_snapshot!("golden_core.mir", mir);
    insta::assert_snapshot!(
        "golden_core.mem2reg.mir",
        fixture_stage("golden_core", "mem2reg.mir")
    );
    let ll = fixture_stage("golden_core", "ll");
    assert!(ll.contains("@llvm.memcpy.p0.p0.i64"), "{ll}");
    assert!(ll.contains("load volatile i32"), "{ll}");
    insta::assert_snapshot!("golden_core.ll", ll);
    let ptx = fixture_stage("golden_core", "ptx");
    for kernel in ["ordering", "unions", "raw_memory", "patterns"] {
        assert!(
            ptx.contains(&format!(".visible .entry {kernel}(")),
            "{kernel} missing:\n{ptx}"
        );
    }
    insta::assert_snapshot!("golden_core.ptx", ptx);
}
