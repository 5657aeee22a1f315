//! When ptxas crashes while the backend assembles the cubin it embeds: one crash is retried,
//! and a crash that persists is reported with the command that reproduces it on the PTX the
//! build wrote (and the build says that the driver will compile the PTX instead). The ptxas of
//! these builds is a script (`PTXAS`) that kills itself.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{manifest, repo};

/// A ptxas that crashes (SIGSEGV) on its first `crashes` calls, counted in `counter`, and then
/// writes an empty cubin.
fn fake_ptxas(dir: &Path, crashes: u32) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let counter = dir.join("calls");
    let _ = std::fs::remove_file(&counter);
    let script = dir.join("ptxas");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho x >> '{}'\nif [ $(wc -l < '{}') -le {crashes} ]; then kill -SEGV $$; fi\n\
             while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then : > \"$2\"; fi; shift; done\n",
            counter.display(),
            counter.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, counter)
}

/// Builds the `launch_bounds` fixture in a target directory of its own with `ptxas`; returns
/// the build's stderr and how many times ptxas ran.
fn build_with(name: &str, crashes: u32) -> (String, usize) {
    let dir = repo().join("tests/fixtures/target").join(name);
    let (ptxas, counter) = fake_ptxas(&dir.join("tool"), crashes);
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["build", "--manifest-path"])
        .arg(manifest("launch_bounds"))
        .env("CUDA_OXIDE_TARGET_DIR", dir.join("build"))
        .env("PTXAS", &ptxas)
        .output()
        .expect("cargo-oxide runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let calls = std::fs::read_to_string(&counter).unwrap_or_default();
    (stderr, calls.lines().count())
}

#[test]
fn one_crash_is_retried() {
    let (stderr, calls) = build_with("ptxas-crash-once", 1);
    assert_eq!(calls, 2, "{stderr}");
    assert!(!stderr.contains("crashed"), "{stderr}");
}

#[test]
fn a_crash_that_persists_names_the_command_and_the_ptx() {
    let (stderr, calls) = build_with("ptxas-crash-always", 1000);
    assert_eq!(calls, 2, "{stderr}");
    assert!(stderr.contains("crashed twice"), "{stderr}");
    assert!(
        stderr.contains("The driver will compile the PTX"),
        "{stderr}"
    );
    let command = stderr
        .split("to reproduce: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no command:\n{stderr}"));
    let ptx = command
        .split_whitespace()
        .find(|word| word.ends_with(".ptx"))
        .unwrap_or_else(|| panic!("no PTX path:\n{stderr}"));
    assert!(
        Path::new(ptx).is_file(),
        "{ptx} is not the PTX the build wrote"
    );
    assert!(command.contains("-arch=sm_"), "{command}");
}
