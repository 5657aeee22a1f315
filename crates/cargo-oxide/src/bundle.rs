//! `cargo oxide bundle`: every example, built and gathered with a runner script, ready to be
//! carried to a machine with a GPU (which needs no Rust toolchain: the binaries embed their
//! PTX and load the CUDA driver at run time).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::backend;
use crate::bench::{self, BENCH_CRATE};
use crate::cli::{BuildTarget, BundleOptions};
use crate::error::OxideError;
use crate::user_build;

/// What `bundle` produced.
pub struct Bundle {
    /// The folder.
    pub dir: PathBuf,
    /// The examples in it.
    pub examples: Vec<String>,
    /// The examples left out, with why (their `pending` reason).
    pub pending: Vec<(String, String)>,
}

/// `dir`, relative to the repository root unless absolute.
pub fn resolve_dir(dir: &Path) -> Result<PathBuf, OxideError> {
    Ok(if dir.is_absolute() {
        dir.to_owned()
    } else {
        backend::repo_root()?.join(dir)
    })
}

/// Builds every example and the benchmark suite, and fills the bundle folder.
pub fn bundle(options: &BundleOptions) -> Result<Bundle, OxideError> {
    let examples_dir = backend::repo_root()?.join("examples");
    let mut examples = Vec::new();
    let mut pending = Vec::new();
    for name in runnable_examples(&examples_dir) {
        match pending_reason(&examples_dir.join(&name).join("Cargo.toml")) {
            Some(reason) => pending.push((name, reason)),
            None => examples.push(name),
        }
    }
    let dir = resolve_dir(&options.out)?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| OxideError::Io { path, source }
    };
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
    }
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    // The architecture is part of every crate's build (the backend reads it), so a change of
    // architecture rebuilds the dependencies: the examples that name their own go last.
    let mut builds: Vec<(Option<String>, &String)> = examples
        .iter()
        .map(|name| {
            (
                example_arch(&examples_dir.join(name).join("Cargo.toml")),
                name,
            )
        })
        .collect();
    builds.sort_by_key(|(arch, _)| arch.is_some());
    for (arch, name) in builds {
        let target = BuildTarget {
            example: Some(name.clone()),
            manifest_path: None,
            release: options.release,
            arch: arch.or_else(|| options.arch.clone()),
            features: Vec::new(),
            verbose: false,
            device_debug: options.device_debug,
            fmad: false,
            panic_messages: options.panic_messages,
        };
        let built = user_build::build(&target)?;
        place(&built.artifact_dir, name, &dir)?;
    }
    let script = dir.join("run.sh");
    std::fs::write(&script, runner_script(&examples, &pending)).map_err(io(&script))?;
    set_executable(&script).map_err(io(&script))?;
    bench::build_into(&dir, &[], options.arch.clone(), options.device_debug)?;
    Ok(Bundle {
        dir,
        examples,
        pending,
    })
}

/// The `pending = "..."` reason of an example's `[package.metadata.cuda-oxide]`: an example
/// written for a compiler feature that has not landed yet, left out of the bundle.
fn pending_reason(manifest: &Path) -> Option<String> {
    metadata_value(manifest, "pending")
}

/// The `arch = "sm_XX"` of an example's `[package.metadata.cuda-oxide]`: the architecture it
/// needs (`sm_90a` for `wgmma`), which the bundle builds it for whatever `--arch` says.
pub(crate) fn example_arch(manifest: &Path) -> Option<String> {
    metadata_value(manifest, "arch")
}

/// The string value of `key` in the `[package.metadata.cuda-oxide]` section of `manifest`.
fn metadata_value(manifest: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let mut in_section = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[package.metadata.cuda-oxide]";
        } else if in_section
            && let Some(value) = line.strip_prefix(key)
            && let Some(value) = value.trim_start().strip_prefix('=')
        {
            return Some(value.trim().trim_matches('"').to_owned());
        }
    }
    None
}

/// Copies the binary `name` and its `.ptx` from `artifact_dir` into the bundle folder `dir`.
pub fn place(artifact_dir: &Path, name: &str, dir: &Path) -> Result<(), OxideError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| OxideError::Io { path, source }
    };
    let binary = artifact_dir.join(name);
    let copy = dir.join(name);
    std::fs::copy(&binary, &copy).map_err(io(&binary))?;
    // Debug info makes the binaries too big to carry; the GPU run does not need it.
    let _ = Command::new("strip")
        .arg("--strip-debug")
        .arg(&copy)
        .status();
    let ptx = artifact_dir.join(format!("{name}.ptx"));
    if ptx.is_file() {
        std::fs::copy(&ptx, dir.join(format!("{name}.ptx"))).map_err(io(&ptx))?;
    }
    Ok(())
}

/// The examples with a program to run (a `src/main.rs`), sorted; the benchmark suite has its
/// own script.
fn runnable_examples(dir: &Path) -> Vec<String> {
    let mut examples = user_build::subdirs_holding(dir, "src/main.rs");
    examples.retain(|name| name != BENCH_CRATE);
    examples
}

/// A script that runs each example, prints `PASS name` or `FAIL name`, keeps each log (in
/// `$OUT` when set, as the device machine provides, else `logs/`), and ends with
/// `N passed, N failed`; it exits non-zero when any failed.
fn runner_script(examples: &[String], pending: &[(String, String)]) -> String {
    let skipped: String = pending
        .iter()
        .map(|(name, reason)| {
            let line = format!("SKIP {name}: {reason}").replace('\'', "");
            format!("echo '{line}'\n")
        })
        .collect();
    format!(
        r#"#!/usr/bin/env bash
# Runs every cuda-oxide example of this bundle on the local GPU.
# Made by `cargo oxide bundle`; each example checks its results against the CPU.
set -u
cd "$(dirname "${{BASH_SOURCE[0]}}")"
logs="${{OUT:-logs}}"
mkdir -p "$logs"
passed=0
failed=0
if [ -x ./gemm_bf16 ]; then
{cublas}fi
{skipped}for example in {examples}; do
    start=$(date +%s%N)
    if "./$example" >"$logs/$example.log" 2>&1; then
        status=PASS
        passed=$((passed + 1))
    else
        status="FAIL (exit $?)"
        failed=$((failed + 1))
    fi
    millis=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "$status $example (${{millis}} ms)"
    grep -E '^(ok|FAIL) ' "$logs/$example.log" | sed 's/^/    /'
    if [ "$status" != PASS ]; then
        tail -n 5 "$logs/$example.log" | sed 's/^/    | /'
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
"#,
        examples = examples.join(" "),
        cublas = bench::CUBLAS_ON_LIBRARY_PATH,
    )
}

#[cfg(unix)]
pub fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
pub fn set_executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_runs_every_example_and_summarises() {
        let script = runner_script(
            &["vecadd".into(), "casts".into()],
            &[("printf".into(), "needs string constants".into())],
        );
        assert!(
            script.contains("echo 'SKIP printf: needs string constants'"),
            "{script}"
        );
        assert!(
            script.contains("for example in vecadd casts; do"),
            "{script}"
        );
        assert!(
            script.contains(r#"echo "$passed passed, $failed failed""#),
            "{script}"
        );
        assert!(script.contains(r#"[ "$failed" -eq 0 ]"#), "{script}");
        // gemm_bf16 loads cuBLAS (cudarc's names: libcublas.so, ...).
        assert!(
            script.contains(r#"ln -s "$cublas" "$link/libcublas.so""#),
            "{script}"
        );
    }

    #[test]
    fn only_examples_with_a_program_are_runnable() {
        let dir = std::env::temp_dir().join(format!("oxide-bundle-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("app/src")).unwrap();
        std::fs::create_dir_all(dir.join("lib/src")).unwrap();
        std::fs::create_dir_all(dir.join("bench/src")).unwrap();
        std::fs::write(dir.join("app/src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(dir.join("bench/src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(dir.join("lib/src/lib.rs"), "").unwrap();
        assert_eq!(runnable_examples(&dir), vec!["app".to_string()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pending_examples_say_why() {
        let dir = std::env::temp_dir().join(format!("oxide-pending-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"p\"\n\n[package.metadata.cuda-oxide]\npending = \"needs X\"\n",
        )
        .unwrap();
        assert_eq!(pending_reason(&manifest).as_deref(), Some("needs X"));
        std::fs::write(&manifest, "[package]\nname = \"p\"\npending = \"no\"\n").unwrap();
        assert_eq!(pending_reason(&manifest), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn examples_may_name_their_architecture() {
        let dir = std::env::temp_dir().join(format!("oxide-arch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"w\"\n\n[package.metadata.cuda-oxide]\n# wgmma\narch = \"sm_90a\"\n",
        )
        .unwrap();
        assert_eq!(example_arch(&manifest).as_deref(), Some("sm_90a"));
        assert_eq!(pending_reason(&manifest), None);
        std::fs::write(&manifest, "[package]\nname = \"w\"\n").unwrap();
        assert_eq!(example_arch(&manifest), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
